package wire

import (
	"strconv"
	"testing"
	"unsafe"
)

// keyMsg is a message of one string, for TestDecoderIntern.
type keyMsg struct{ Key string }

func (*keyMsg) Kind() string                    { return "test.key" }
func (m *keyMsg) AppendPayload(b []byte) []byte { return AppendString(b, m.Key) }
func (m *keyMsg) DecodePayload(d *Decoder)      { m.Key = d.String() }

// TestDecoderIntern: with an intern table, equal strings decode to one
// copy, through Codec.DecodeWith's reuse of the decoder too; without one,
// each is a copy of its own; the table stops growing at maxInterned and
// strings past it still decode right.
func TestDecoderIntern(t *testing.T) {
	c, err := NewCodec([]MsgType{{Kind: "test.key", New: func() Encodable { return new(keyMsg) }}})
	if err != nil {
		t.Fatal(err)
	}
	decode := func(d *Decoder, key string) string {
		b, err := c.Append(nil, &keyMsg{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.DecodeWith(d, b)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*keyMsg).Key
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	var plain Decoder
	if a, b := decode(&plain, "user1"), decode(&plain, "user1"); a != "user1" || b != "user1" || same(a, b) {
		t.Errorf("without a table: %q, %q share memory %v; want two copies of user1", a, b, same(a, b))
	}
	var d Decoder
	table := map[string]string{}
	d.Intern(table)
	a, b, other := decode(&d, "user1"), decode(&d, "user1"), decode(&d, "user2")
	if a != "user1" || b != "user1" || !same(a, b) || other != "user2" {
		t.Errorf("with a table: %q, %q (one copy: %v), %q; want user1 twice as one copy, user2", a, b, same(a, b), other)
	}
	for i := range maxInterned + 10 {
		if k := "k" + strconv.Itoa(i); decode(&d, k) != k {
			t.Fatalf("decoding %q past the table's bound: wrong string", k)
		}
	}
	if len(table) != maxInterned {
		t.Errorf("table holds %d strings; want the bound, %d", len(table), maxInterned)
	}
}

// otherMsg is a second message of one string, for TestDecodeAs.
type otherMsg struct{ keyMsg }

func (*otherMsg) Kind() string { return "test.other" }

// TestDecodeAs: decoding an encoding as the type it was encoded from gives
// the message DecodeWith gives; as another type, or none, too (the kind
// the encoding names wins); an unknown kind is refused either way.
func TestDecodeAs(t *testing.T) {
	c, err := NewCodec([]MsgType{
		{Kind: "test.key", New: func() Encodable { return new(keyMsg) }},
		{Kind: "test.other", New: func() Encodable { return new(otherMsg) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Append(nil, &keyMsg{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	keyType, otherType := c.TypeOf(&keyMsg{}), c.TypeOf(&otherMsg{})
	if keyType == nil || keyType.Kind != "test.key" || otherType == nil || otherType.Kind != "test.other" {
		t.Fatalf("TypeOf = %+v, %+v; want test.key's and test.other's", keyType, otherType)
	}
	var d Decoder
	for _, as := range []*MsgType{keyType, otherType, nil} {
		m, err := c.DecodeAs(&d, b, as)
		if km, ok := m.(*keyMsg); err != nil || !ok || km.Key != "k" {
			t.Errorf("DecodeAs(test.key's encoding, %+v) = %#v, %v; want keyMsg k", as, m, err)
		}
	}
	unknown := append([]byte{CodecVersion}, AppendString(nil, "test.none")...)
	if m, err := c.DecodeAs(&d, unknown, keyType); err == nil {
		t.Errorf("DecodeAs of an unknown kind = %#v; want an error", m)
	}
}
