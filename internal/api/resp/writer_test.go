package resp

import (
	"bufio"
	"bytes"
	"testing"
)

func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w *Writer)
		want  string
	}{
		{"simple", func(w *Writer) { w.WriteSimple("OK") }, "+OK\r\n"},
		{"simple newline", func(w *Writer) { w.WriteSimple("a\r\nb") }, "+a  b\r\n"},
		{"error", func(w *Writer) { w.WriteError("ERR syntax error") }, "-ERR syntax error\r\n"},
		{"error newline", func(w *Writer) { w.WriteError("ERR a\nb") }, "-ERR a b\r\n"},
		{"int", func(w *Writer) { w.WriteInt(42) }, ":42\r\n"},
		{"negative int", func(w *Writer) { w.WriteInt(-1 << 63) }, ":-9223372036854775808\r\n"},
		{"bulk", func(w *Writer) { w.WriteBulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n"},
		{"empty bulk", func(w *Writer) { w.WriteBulk(nil) }, "$0\r\n\r\n"},
		{"bulk string", func(w *Writer) { w.WriteBulkString("hi") }, "$2\r\nhi\r\n"},
		{"null", func(w *Writer) { w.WriteNull() }, "$-1\r\n"},
		{"array", func(w *Writer) { w.WriteArray(2); w.WriteInt(1); w.WriteNull() }, "*2\r\n:1\r\n$-1\r\n"},
		{"empty array", func(w *Writer) { w.WriteArray(0) }, "*0\r\n"},
		{"null array", func(w *Writer) { w.WriteNullArray() }, "*-1\r\n"},
		{"command", func(w *Writer) { w.WriteCommand([][]byte{[]byte("GET"), []byte("k")}) }, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"},
	} {
		var buf bytes.Buffer
		w := NewWriter(bufio.NewWriter(&buf))
		tc.write(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tc.want {
			t.Errorf("%s: wrote %q; want %q", tc.name, got, tc.want)
		}
	}
}
