package resp

import (
	"bufio"
	"strconv"
	"strings"
)

// Writer writes RESP2 replies to a bufio.Writer. Errors are sticky in the
// bufio.Writer, so callers check the error of Flush. A Writer is not safe
// for concurrent use.
type Writer struct {
	bw  *bufio.Writer
	num []byte // scratch for formatting integers
}

// NewWriter returns a Writer over bw.
func NewWriter(bw *bufio.Writer) *Writer { return &Writer{bw: bw, num: make([]byte, 0, 24)} }

// oneLine replaces CR and LF, which would end a simple string or error
// early, with spaces, as Redis does for error replies.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// WriteSimple writes a simple string ("+OK\r\n").
func (w *Writer) WriteSimple(s string) {
	w.bw.WriteByte('+')
	w.bw.WriteString(oneLine(s))
	w.bw.WriteString("\r\n")
}

// WriteError writes an error reply. msg starts with the error code, as in
// "ERR syntax error" or "WRONGTYPE Operation against ...".
func (w *Writer) WriteError(msg string) {
	w.bw.WriteByte('-')
	w.bw.WriteString(oneLine(msg))
	w.bw.WriteString("\r\n")
}

// WriteInt writes an integer reply (":42\r\n").
func (w *Writer) WriteInt(n int64) { w.header(':', n) }

// WriteBulk writes a bulk string. A nil b is written as an empty bulk
// string, not as null: use WriteNull for that.
func (w *Writer) WriteBulk(b []byte) {
	w.header('$', int64(len(b)))
	w.bw.Write(b)
	w.bw.WriteString("\r\n")
}

// WriteBulkString writes s as a bulk string.
func (w *Writer) WriteBulkString(s string) {
	w.header('$', int64(len(s)))
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// WriteNull writes the null bulk string ("$-1\r\n"), RESP2's nil.
func (w *Writer) WriteNull() { w.bw.WriteString("$-1\r\n") }

// WriteArray writes the header of an array of n elements; the caller then
// writes the n elements.
func (w *Writer) WriteArray(n int) { w.header('*', int64(n)) }

// WriteNullArray writes the null array ("*-1\r\n").
func (w *Writer) WriteNullArray() { w.bw.WriteString("*-1\r\n") }

// WriteCommand writes args as a RESP array of bulk strings: the encoding
// clients use for requests.
func (w *Writer) WriteCommand(args [][]byte) {
	w.WriteArray(len(args))
	for _, a := range args {
		w.WriteBulk(a)
	}
}

// Flush writes buffered replies to the connection.
func (w *Writer) Flush() error { return w.bw.Flush() }

func (w *Writer) header(kind byte, n int64) {
	w.num = append(w.num[:0], kind)
	w.num = strconv.AppendInt(w.num, n, 10)
	w.num = append(w.num, '\r', '\n')
	w.bw.Write(w.num)
}
