package resp

import (
	"bytes"
	"fmt"
	"math"
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
		{"list", value{kind: kindList, elems: [][]byte{[]byte("b"), {}, []byte("a"), []byte("b")}}, false},
		{"set", value{kind: kindSet, elems: [][]byte{{}, []byte("a"), []byte("b")}, expiryMs: 9}, false},
		{"zset", value{kind: kindZSet, zs: []zmember{{math.Inf(-1), []byte("x")}, {-0.5, []byte("b")}, {-0.5, []byte("c")}, {1e300, nil}}}, false},
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
	for _, e := range v.elems {
		s += fmt.Sprintf(" %q", e)
	}
	for _, z := range v.zs {
		s += fmt.Sprintf(" %q:%v", z.member, z.score)
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
		envelopeMagic + "s\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",      // expiry > MaxInt64
		envelopeMagic + "l\x00\x02\x01a",                                 // short
		envelopeMagic + "e\x00\x02\x01b\x01a",                            // unsorted set
		envelopeMagic + "e\x00\x02\x01a\x01a",                            // duplicate member
		envelopeMagic + "z\x00\x01\x7f\xf8\x00\x00\x00\x00\x00\x01\x01a", // NaN score
		envelopeMagic + "z\x00\x02\x40\x00\x00\x00\x00\x00\x00\x00\x01a\x3f\xf0\x00\x00\x00\x00\x00\x00\x01a", // unsorted scores
		envelopeMagic + "z\x00\x01\x40\x00", // short score
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
	f.Add([]byte(envelopeMagic + "l\x00\x02\x01a\x00"))
	f.Add([]byte(envelopeMagic + "z\x00\x01\x3f\xf0\x00\x00\x00\x00\x00\x00\x01a"))
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
