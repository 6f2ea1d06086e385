package resp

import (
	"bufio"
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// FuzzReader checks, for any input: no panic; no argument or command larger
// than the limits; memory allocated bounded by what the input holds rather
// than what it announces; and that re-encoding each parsed command as an
// array and parsing it again yields the same command.
//
//	go test -fuzz=FuzzReader ./internal/api/resp/
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n",
		"*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
		"*0\r\n*-1\r\nPING\r\n",
		"SET a b\r\nGET a\n",
		`SET "a\x41\n" 'it\'s'` + "\r\n",
		"*1\r\n$999999999999\r\n",
		"*99999999\r\n$1\r\na\r\n",
		"*2\r\n$1\r\na\r\nx\r\n",
		`SET "unbalanced` + "\r\n",
		"\x00\xff*\r\n",
	} {
		f.Add([]byte(s))
	}
	const maxBulk, maxArgs = 1 << 12, 64
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := NewReader(bufio.NewReaderSize(bytes.NewReader(data), 64))
		r.MaxBulkBytes, r.MaxMultibulkLen = maxBulk, maxArgs
		var cmds [][][]byte
		for len(cmds) < 1000 {
			args, err := r.ReadCommand()
			if err != nil {
				break
			}
			// An inline command is bounded by its line's length instead.
			if len(args) == 0 || len(args) > max(maxArgs, MaxInlineBytes/2+1) {
				t.Fatalf("command of %d args", len(args))
			}
			for _, a := range args {
				if len(a) > max(maxBulk, MaxInlineBytes) {
					t.Fatalf("argument of %d bytes", len(a))
				}
			}
			cmds = append(cmds, args)
		}
		runtime.ReadMemStats(&after)
		// Generous: scratch lines, per-argument headers and the bufio
		// buffer, but nowhere near an announced 999999999999 bytes.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(data)+2*MaxInlineBytes+1<<20); got > limit {
			t.Fatalf("allocated %d bytes for %d bytes of input", got, len(data))
		}
		for _, args := range cmds {
			var buf bytes.Buffer
			w := NewWriter(bufio.NewWriter(&buf))
			w.WriteCommand(args)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			r2 := NewReader(bufio.NewReader(&buf))
			r2.MaxBulkBytes, r2.MaxMultibulkLen = MaxInlineBytes, 1<<20
			again, err := r2.ReadCommand()
			if err != nil {
				t.Fatalf("re-reading %q: %v", buf.Bytes(), err)
			}
			if !equalArgs(again, args) {
				t.Fatalf("re-read %q as %q", args, again)
			}
		}
	})
}

// FuzzReaderLimits checks, for any input, that refusing commands never
// desynchronises the stream: a Reader with a small MaxArgBytes and a
// per-command Budget yields, command for command, what an unlimited
// Reader yields, except that a command over a limit becomes a
// *CommandError; the two fail alike on malformed input; and no command it
// returns exceeds its limits.
//
//	go test -fuzz=FuzzReaderLimits ./internal/api/resp/
func FuzzReaderLimits(f *testing.F) {
	for _, s := range []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\n01234567890123456789\r\n*1\r\n$4\r\nPING\r\n",
		"*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\nGET a\r\n",
		"GET " + "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\r\nPING\r\n",
		"*2\r\n$3\r\nGET\r\n$20\r\n01234567890123456789XX",
		"*2\r\n$3\r\nGET\r\n$20\r\n0123",
	} {
		f.Add([]byte(s))
	}
	const maxBulk, maxArgs = 1 << 12, 64
	const maxArg, budget = 16, 4 * (ArgOverheadBytes + 8)
	f.Fuzz(func(t *testing.T, data []byte) {
		ref := NewReader(bufio.NewReaderSize(bytes.NewReader(data), 64))
		ref.MaxBulkBytes, ref.MaxMultibulkLen = maxBulk, maxArgs
		lim := NewReader(bufio.NewReaderSize(bytes.NewReader(data), 64))
		lim.MaxBulkBytes, lim.MaxMultibulkLen, lim.MaxArgBytes = maxBulk, maxArgs, maxArg
		lim.Budget = func(cmdBytes, n int64) error {
			if cmdBytes+n > budget {
				return errors.New("ERR over budget")
			}
			return nil
		}
		for range 1000 {
			want, werr := ref.ReadCommand()
			got, gerr := lim.ReadCommand()
			granted := lim.TakeCommandBytes()
			if granted > budget {
				t.Fatalf("granted %d bytes; budget %d", granted, budget)
			}
			var ce *CommandError
			if errors.As(gerr, &ce) {
				if werr != nil {
					t.Fatalf("limited reader refused (%v) where the unlimited one failed: %v", ce, werr)
				}
				var need int64
				over := false
				for _, a := range want {
					need += int64(len(a)) + ArgOverheadBytes
					over = over || len(a) > maxArg
				}
				if !over && need <= budget {
					t.Fatalf("refused %q (%v), which fits", want, ce)
				}
				continue
			}
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("limited reader: %q, %v; unlimited: %q, %v", got, gerr, want, werr)
			}
			if werr != nil {
				return
			}
			if !equalArgs(got, want) {
				t.Fatalf("limited reader read %q; unlimited %q", got, want)
			}
		}
	})
}

// FuzzReaderBorrow checks, for any input, that a Borrow Reader yields,
// command for command, what a plain Reader yields (compared before the
// next read, while the borrowed memory is valid), fails alike, and that
// Owned copies survive the reads after them.
//
//	go test -fuzz=FuzzReaderBorrow ./internal/api/resp/
func FuzzReaderBorrow(f *testing.F) {
	for _, s := range []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"*2\r\n$3\r\nGET\r\n$0\r\n\r\nGET a\r\n*1\r\n$4\r\nPING\r\n",
		"*2\r\n$3\r\nGET\r\n$20\r\n01234567890123456789XX",
		"*2\r\n$3\r\nGET\r\n$20\r\n0123",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$600\r\n" + strings.Repeat("v", 600) + "\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ref := NewReader(bufio.NewReaderSize(bytes.NewReader(data), 64))
		ref.MaxBulkBytes, ref.MaxMultibulkLen, ref.MaxArgBytes = 1<<12, 64, 1<<11
		bor := NewReader(bufio.NewReaderSize(bytes.NewReader(data), 64))
		bor.MaxBulkBytes, bor.MaxMultibulkLen, bor.MaxArgBytes = 1<<12, 64, 1<<11
		bor.Borrow = true
		var wants, kept [][][]byte
		for range 1000 {
			want, werr := ref.ReadCommand()
			got, gerr := bor.ReadCommand()
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("borrowing reader: %q, %v; plain: %q, %v", got, gerr, want, werr)
			}
			var ce *CommandError
			if errors.As(werr, &ce) {
				continue
			}
			if werr != nil {
				break
			}
			if !equalArgs(got, want) {
				t.Fatalf("borrowing reader read %q; plain %q", got, want)
			}
			wants = append(wants, want)
			kept = append(kept, Owned(got))
		}
		for i := range wants {
			if !equalArgs(kept[i], wants[i]) {
				t.Fatalf("owned copy %d is %q after later reads; want %q", i, kept[i], wants[i])
			}
		}
	})
}

func equalArgs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
