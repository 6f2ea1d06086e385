package resp

import (
	"bytes"
	"fmt"
	"testing"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	hash := value{kind: kindHash}
	hash.set([]byte("b"), []byte("2"))
	hash.set([]byte("a"), []byte(""))
	hash.set([]byte("c"), bytes.Repeat([]byte("x"), 300))
	for _, tc := range []struct {
		name     string
		v        value
		verbatim bool
	}{
		{"plain", value{kind: kindString, str: []byte("hello")}, true},
		{"empty", value{kind: kindString, str: []byte{}}, true},
		{"expiring", value{kind: kindString, str: []byte("v"), expiryMs: 1_700_000_000_123}, false},
		{"magic prefix", value{kind: kindString, str: []byte(envelopeMagic + "s\x00x")}, false},
		{"bare magic", value{kind: kindString, str: []byte(envelopeMagic)}, false},
		{"hash", hash, false},
		{"empty hash", value{kind: kindHash}, false},
		{"expiring hash", value{kind: kindHash, fields: hash.fields, expiryMs: 5}, false},
	} {
		enc := tc.v.encode()
		if got := bytes.Equal(enc, tc.v.str) && tc.v.kind == kindString; got != tc.verbatim {
			t.Errorf("%s: stored verbatim = %v; want %v (%q)", tc.name, got, tc.verbatim, enc)
		}
		got, err := decodeValue(enc)
		if err != nil {
			t.Fatalf("%s: decodeValue(%q): %v", tc.name, enc, err)
		}
		if show(got) != show(tc.v) {
			t.Errorf("%s: decodeValue(encode(v)) = %s; want %s", tc.name, show(got), show(tc.v))
		}
	}
}

// show renders v for comparison and messages.
func show(v value) string {
	s := fmt.Sprintf("%c exp=%d", v.kind, v.expiryMs)
	if v.kind == kindString {
		return s + fmt.Sprintf(" %q", v.str)
	}
	for _, f := range v.fields {
		s += fmt.Sprintf(" %q=%q", f.name, f.val)
	}
	return s
}

func TestEnvelopeLayout(t *testing.T) {
	v := value{kind: kindHash, expiryMs: 300}
	v.set([]byte("f"), []byte("v"))
	want := envelopeMagic + "h\xac\x02\x01\x01f\x01v"
	if got := string(v.encode()); got != want {
		t.Errorf("encode = %q; want %q", got, want)
	}
}

func TestEnvelopeCorrupt(t *testing.T) {
	for _, in := range []string{
		envelopeMagic,
		envelopeMagic + "s",
		envelopeMagic + "x\x00",
		envelopeMagic + "h\x00",
		envelopeMagic + "h\x00\x05",
		envelopeMagic + "h\x00\x01\x05ab",
		envelopeMagic + "h\x00\x02\x01b\x00\x01a\x00", // unsorted
		envelopeMagic + "h\x00\x02\x01a\x00\x01a\x00", // duplicate
		envelopeMagic + "h\x00\x01\x01a\x00junk",
		envelopeMagic + "s\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", // expiry > MaxInt64
	} {
		if v, err := decodeValue([]byte(in)); err == nil {
			t.Errorf("decodeValue(%q) = %s; want an error", in, show(v))
		}
	}
}

func TestHashFields(t *testing.T) {
	var h value
	for _, f := range []string{"m", "a", "z", "m", "b"} {
		h.set([]byte(f), []byte(f+f))
	}
	if got := fmt.Sprintf("%s", h.fields); got != "[{a aa} {b bb} {m mm} {z zz}]" {
		t.Errorf("fields = %s", got)
	}
	if !h.del([]byte("m")) || h.del([]byte("m")) || len(h.fields) != 3 {
		t.Errorf("del: fields = %s", h.fields)
	}
}

func FuzzDecodeValue(f *testing.F) {
	f.Add([]byte(envelopeMagic + "h\x00\x01\x01a\x01b"))
	f.Add([]byte(envelopeMagic + "s\x05xyz"))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeValue(b)
		if err != nil {
			return
		}
		again, err := decodeValue(v.encode())
		if err != nil || show(again) != show(v) {
			t.Fatalf("decode(encode(%s)) = %s, %v", show(v), show(again), err)
		}
	})
}
