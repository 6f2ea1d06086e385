package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// readAll parses every command in input and renders them one per line,
// arguments quoted; a final error is appended as "error: ...".
func readAll(t *testing.T, input string, bufSize int, limits func(*Reader)) string {
	t.Helper()
	r := NewReader(bufio.NewReaderSize(strings.NewReader(input), bufSize))
	if limits != nil {
		limits(r)
	}
	var out []string
	for {
		args, err := r.ReadCommand()
		if err == io.EOF {
			break
		}
		if err != nil {
			out = append(out, "error: "+err.Error())
			break
		}
		var q []string
		for _, a := range args {
			q = append(q, fmt.Sprintf("%q", a))
		}
		out = append(out, strings.Join(q, " "))
	}
	return strings.Join(out, "\n")
}

func TestReaderGood(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"*1\r\n$4\r\nPING\r\n", `"PING"`},
		{"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", `"GET" ""`},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n", `"SET" "k" "a\r\nb"`},
		{"*0\r\n*-1\r\n*1\r\n$1\r\nx\r\n", `"x"`},
		{"PING\r\n", `"PING"`},
		{"PING\n", `"PING"`},
		{"SET a b\r\nGET a\r\n", "\"SET\" \"a\" \"b\"\n\"GET\" \"a\""},
		{"  set   a\t b  \r\n", `"set" "a" "b"`},
		{"\r\n\n  \r\nPING\r\n", `"PING"`},
		{`SET "a b" 'c d'` + "\r\n", `"SET" "a b" "c d"`},
		{`SET "\x41\n\t\"\\" 'it\'s'` + "\r\n", `"SET" "A\n\t\"\\" "it's"`},
		{`SET "" ''` + "\r\n", `"SET" "" ""`},
		{"GET a\x00ignored\r\n", `"GET" "a"`},
		{"*1\r\n$3\r\nGET\r\nPING\r\n", "\"GET\"\n\"PING\""},
	} {
		if got := readAll(t, tc.in, 16, nil); got != tc.want {
			t.Errorf("ReadCommand(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	small := func(r *Reader) { r.MaxBulkBytes, r.MaxMultibulkLen = 10, 3 }
	for _, tc := range []struct {
		in, want string
	}{
		{"*x\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*01\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*+1\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*1\n$1\r\na\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*4\r\n", "ERR Protocol error: invalid multibulk length"}, // over the limit of 3
		{"*99999999999999999999\r\n", "ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length"},
		{"*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"},
		{"*1\r\n$11\r\n", "ERR Protocol error: invalid bulk length"}, // over the limit of 10
		{"*1\r\n$999999999999\r\n", "ERR Protocol error: invalid bulk length"},
		{"*1\r\n+PING\r\n", "ERR Protocol error: expected '$', got '+'"},
		{"*2\r\n$1\r\na\r\nx\r\n", "ERR Protocol error: expected '$', got 'x'"},
		{"*1\r\n$1\r\nabc\r\n", "ERR Protocol error: expected CRLF after bulk data"},
		{`SET "a` + "\r\n", "ERR Protocol error: unbalanced quotes in request"},
		{`SET 'a` + "\r\n", "ERR Protocol error: unbalanced quotes in request"},
		{`SET "a"b` + "\r\n", "ERR Protocol error: unbalanced quotes in request"},
		{`SET 'a'b` + "\r\n", "ERR Protocol error: unbalanced quotes in request"},
		{strings.Repeat("a", MaxInlineBytes+1) + "\r\n", "ERR Protocol error: too big inline request"},
		{strings.Repeat("a", MaxInlineBytes+100), "ERR Protocol error: too big inline request"},
		{"*" + strings.Repeat("1", MaxInlineBytes+1), "ERR Protocol error: too big mbulk count string"},
		{"*1\r\n$" + strings.Repeat("1", MaxInlineBytes+1), "ERR Protocol error: too big bulk count string"},
		{"*2\r\n$1\r\na\r\n", "unexpected EOF"},
		{"*1\r\n$5\r\nab", "unexpected EOF"},
		{"PING", "unexpected EOF"},
	} {
		got := readAll(t, tc.in, 16, small)
		got = strings.TrimPrefix(got[strings.LastIndex(got, "\n")+1:], "error: ")
		if got != tc.want {
			t.Errorf("ReadCommand(%.40q) error = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestReaderProtocolErrorType(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("*x\r\n")))
	_, err := r.ReadCommand()
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Msg != "invalid multibulk length" {
		t.Fatalf("ReadCommand error = %#v; want *ProtocolError", err)
	}
}

// TestReaderLargeBulk reads bulks larger than the preallocation, split
// across many small reads.
func TestReaderLargeBulk(t *testing.T) {
	for _, n := range []int{bulkPreallocBytes - 2, bulkPreallocBytes, 3*bulkPreallocBytes + 7} {
		val := bytes.Repeat([]byte("xy"), n/2+1)[:n]
		var in bytes.Buffer
		fmt.Fprintf(&in, "*2\r\n$3\r\nSET\r\n$%d\r\n%s\r\nPING\r\n", n, val)
		r := NewReader(bufio.NewReaderSize(iotestHalf{&in}, 16))
		args, err := r.ReadCommand()
		if err != nil || len(args) != 2 || !bytes.Equal(args[1], val) {
			t.Fatalf("n=%d: ReadCommand = %d args, %v", n, len(args), err)
		}
		if cap(args[1]) != n {
			t.Errorf("n=%d: cap(arg) = %d; want %d", n, cap(args[1]), n)
		}
		if args, err := r.ReadCommand(); err != nil || string(args[0]) != "PING" {
			t.Fatalf("n=%d: next command = %q, %v", n, args, err)
		}
	}
}

// iotestHalf returns at most 1000 bytes per Read, like a slow network.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) {
	if len(p) > 1000 {
		p = p[:1000]
	}
	return h.r.Read(p)
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false}, {"", 0, false}, {"-", 0, false}, {"-0", 0, false},
		{"01", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false},
	} {
		n, ok := parseInt([]byte(tc.in))
		if n != tc.n || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}

// readAllOn is readAll that reads on after a *CommandError, as the server
// does, rendering it as "refused: ...".
func readAllOn(t *testing.T, input string, limits func(*Reader)) string {
	t.Helper()
	r := NewReader(bufio.NewReaderSize(strings.NewReader(input), 16))
	limits(r)
	var out []string
	for {
		args, err := r.ReadCommand()
		r.TakeCommandBytes() // the server's accounting, done by hand
		var ce *CommandError
		switch {
		case err == io.EOF:
			return strings.Join(out, "\n")
		case errors.As(err, &ce):
			out = append(out, "refused: "+ce.Msg)
			continue
		case err != nil:
			return strings.Join(append(out, "error: "+err.Error()), "\n")
		}
		var q []string
		for _, a := range args {
			q = append(q, fmt.Sprintf("%q", a))
		}
		out = append(out, strings.Join(q, " "))
	}
}

// TestReaderRefusesWithoutHolding: an argument over MaxArgBytes, or one
// the Budget will not grant, refuses its command; the rest of the command
// is consumed and the next command reads normally.
func TestReaderRefusesWithoutHolding(t *testing.T) {
	big := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name, in string
		budget   int64 // per command; 0: none
		want     string
	}{
		{"arg over MaxArgBytes", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\n" + big + "\r\n*1\r\n$4\r\nPING\r\n", 0,
			"refused: ERR argument too large (100 bytes; max 64)\n\"PING\""},
		{"oversized arg first, more after it", "*3\r\n$100\r\n" + big + "\r\n$1\r\na\r\n$1\r\nb\r\nPING\r\n", 0,
			"refused: ERR argument too large (100 bytes; max 64)\n\"PING\""},
		{"budget refuses the third argument", "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\n", 3 * ArgOverheadBytes,
			"refused: budget: 85 granted, 41 more asked\n\"GET\" \"a\""},
		{"budget refuses an inline command", "GET " + strings.Repeat("k", 200) + "\r\nPING\r\n", 3 * ArgOverheadBytes,
			"refused: budget: 0 granted, 285 more asked\n\"PING\""},
		{"bad terminator after a discarded arg", "*2\r\n$3\r\nGET\r\n$100\r\n" + big + "XX*1\r\n$4\r\nPING\r\n", 0,
			"error: ERR Protocol error: expected CRLF after bulk data"},
		{"EOF inside a discarded arg", "*2\r\n$3\r\nGET\r\n$100\r\nxx", 0, "error: unexpected EOF"},
	} {
		got := readAllOn(t, tc.in, func(r *Reader) {
			r.MaxArgBytes = 64
			if tc.budget > 0 {
				r.Budget = func(cmdBytes, n int64) error {
					if cmdBytes+n > tc.budget {
						return fmt.Errorf("budget: %d granted, %d more asked", cmdBytes, n)
					}
					return nil
				}
			}
		})
		if got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// TestReaderCommandBytes: TakeCommandBytes reports what the Budget granted
// the last command, once.
func TestReaderCommandBytes(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("*2\r\n$3\r\nGET\r\n$5\r\nhello\r\nGET k\r\n")))
	var asked []int64
	r.Budget = func(_, n int64) error { asked = append(asked, n); return nil }
	if _, err := r.ReadCommand(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.TakeCommandBytes(), int64(3+5+2*ArgOverheadBytes); got != want {
		t.Errorf("TakeCommandBytes() = %d; want %d (asked %v)", got, want, asked)
	}
	if got := r.TakeCommandBytes(); got != 0 {
		t.Errorf("second TakeCommandBytes() = %d; want 0", got)
	}
	if _, err := r.ReadCommand(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.TakeCommandBytes(), int64(len("GET k\r")+2*ArgOverheadBytes); got != want {
		t.Errorf("inline TakeCommandBytes() = %d; want %d", got, want)
	}
}
