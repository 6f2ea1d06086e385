package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/lightcone/lightcone/internal/hlc"
)

// CodecVersion is the version of the message encoding. A node refuses
// frames of a version it does not know instead of misreading them; a new
// version is introduced alongside the old one so clusters can upgrade
// node by node.
const CodecVersion = 1

// Encodable is a message that can cross the network. AppendPayload
// appends the message's fields; DecodePayload reads them back into a
// zero message. Both are pure: protocol packages implement them.
type Encodable interface {
	Msg
	AppendPayload(b []byte) []byte
	DecodePayload(d *Decoder)
}

// MsgType registers one message type with a Codec.
type MsgType struct {
	Kind string           // as returned by the message's Kind
	New  func() Encodable // a zero message to decode into
}

// Codec turns messages into bytes and back, by kind.
type Codec struct {
	types map[string]*MsgType
}

// NewCodec builds a codec for the given message types.
func NewCodec(types ...[]MsgType) (*Codec, error) {
	c := &Codec{types: make(map[string]*MsgType)}
	for _, ts := range types {
		for _, t := range ts {
			if prev, dup := c.types[t.Kind]; dup {
				// Protocols that embed one library (rsm's Raft messages)
				// each list its types: the same kind with the same Go type
				// is one registration; another type under the kind is a
				// clash.
				if reflect.TypeOf(prev.New()) == reflect.TypeOf(t.New()) {
					continue
				}
				return nil, fmt.Errorf("wire: message kind %q registered twice", t.Kind)
			}
			if got := registeredKind(t.New()); got != t.Kind {
				return nil, fmt.Errorf("wire: message type registered as %q reports kind %q", t.Kind, got)
			}
			c.types[t.Kind] = &t
		}
	}
	return c, nil
}

// Kinds lists the registered kinds, sorted.
func (c *Codec) Kinds() []string {
	out := make([]string, 0, len(c.types))
	for k := range c.types {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Append appends m's encoding: version, kind, payload.
func (c *Codec) Append(dst []byte, m Msg) ([]byte, error) {
	if _, ok := c.types[registeredKind(m)]; !ok {
		return dst, fmt.Errorf("wire: message kind %q not registered", registeredKind(m))
	}
	return AppendMsg(dst, m)
}

// AppendMsg appends m's encoding (as Codec.Append, without checking that a
// codec knows the kind): for messages that carry other messages.
func AppendMsg(dst []byte, m Msg) ([]byte, error) {
	e, ok := m.(Encodable)
	if !ok {
		return dst, fmt.Errorf("wire: message %T (%s) cannot be encoded", m, m.Kind())
	}
	dst = append(dst, CodecVersion)
	dst = AppendString(dst, registeredKind(e))
	return e.AppendPayload(dst), nil
}

// registeredKind is the kind a message registers under: messages whose Kind
// varies with a flag (quorum.repair vs quorum.mutate) report a base kind
// through BaseKind.
func registeredKind(m Msg) string {
	if b, ok := m.(interface{ BaseKind() string }); ok {
		return b.BaseKind()
	}
	return m.Kind()
}

// Decode decodes one message encoded by Append.
func (c *Codec) Decode(b []byte) (Msg, error) { return c.DecodeWith(new(Decoder), b) }

// TypeOf is the type m is registered as, or nil.
func (c *Codec) TypeOf(m Msg) *MsgType { return c.types[registeredKind(m)] }

// DecodeWith is Decode reading through d, which it resets to b: a caller
// that decodes many messages in turn (the simulator) reuses one Decoder
// instead of allocating one for each. The decoded message keeps nothing of
// d or b.
func (c *Codec) DecodeWith(d *Decoder, b []byte) (Msg, error) { return c.DecodeAs(d, b, nil) }

// DecodeAs is DecodeWith for an encoding of a message of type t (TypeOf),
// which a caller that made the encoding knows (the simulator): the kind the
// encoding names is compared with t's rather than looked up, which was ~2%
// of a simulation whose every message is decoded. An encoding that names
// another kind, or a nil t, is decoded as DecodeWith decodes it.
func (c *Codec) DecodeAs(d *Decoder, b []byte, t *MsgType) (Msg, error) {
	if len(b) == 0 {
		return nil, errors.New("wire: empty message")
	}
	if b[0] != CodecVersion {
		return nil, fmt.Errorf("wire: message encoding version %d; this build speaks %d", b[0], CodecVersion)
	}
	*d = Decoder{b: b[1:], interned: d.interned}
	kb := d.view()
	if err := d.Err(); err != nil {
		return nil, err
	}
	if t == nil || t.Kind != string(kb) {
		t = c.types[string(kb)] // looked up without copying kb
		if t == nil {
			return nil, fmt.Errorf("wire: unknown message kind %q", kb)
		}
	}
	m := t.New()
	m.DecodePayload(d)
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("wire: decoding %s: %w", kb, err)
	}
	if d.Len() != 0 {
		return nil, fmt.Errorf("wire: decoding %s: %d trailing bytes", kb, d.Len())
	}
	return m, nil
}

// Append helpers for payloads.

// AppendUvarint appends v as a uvarint.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends v as a zig-zag varint.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBytes appends a length-prefixed byte string.
func AppendBytes(b, p []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(p))), p...) }

// AppendString appends a length-prefixed string.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// AppendBool appends a bool as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendVersion appends a version.
func AppendVersion(b []byte, v Version) []byte {
	b = AppendVarint(b, v.TS.WallNanos)
	b = AppendUvarint(b, uint64(v.TS.Logical))
	return AppendVarint(b, int64(v.Node))
}

// ErrTruncated reports a payload that ends too early.
var ErrTruncated = errors.New("wire: truncated message")

// Decoder reads payload fields; the first error sticks and later reads
// return zero values, so decoders check Err once at the end.
type Decoder struct {
	b   []byte
	err error
	// interned, if set, holds one copy of each string decoded (Intern).
	interned map[string]string
}

// maxInterned bounds an intern table: past it, strings are copied as
// without one.
const maxInterned = 1 << 16

// Intern makes String return, for equal strings, the one copy kept in
// table (up to maxInterned of them) instead of a new copy each: a
// simulator decoding every message of a run reuses its keys, allocating
// nothing, and maps keyed by them find a key by its pointer.
func (d *Decoder) Intern(table map[string]string) { d.interned = table }

// NewDecoder reads from b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err returns the first decoding error.
func (d *Decoder) Err() error { return d.err }

// Len returns the bytes not yet read.
func (d *Decoder) Len() int { return len(d.b) }

// Fail records a decoding error found by a payload's own checks.
func (d *Decoder) Fail(err error) { d.fail(err) }

func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

// Uvarint reads a uvarint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(ErrTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a zig-zag varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(ErrTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// view reads a length-prefixed byte string without copying it.
func (d *Decoder) view() []byte {
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(fmt.Errorf("%w: %d-byte field, %d bytes left", ErrTruncated, n, len(d.b)))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// Bytes reads a length-prefixed byte string, copied; empty reads as nil.
func (d *Decoder) Bytes() []byte {
	if p := d.view(); len(p) > 0 {
		return slices.Clone(p)
	}
	return nil
}

// String reads a length-prefixed string.
func (d *Decoder) String() string {
	v := d.view()
	if d.interned == nil {
		return string(v)
	}
	if s, ok := d.interned[string(v)]; ok { // looked up without copying v
		return s
	}
	s := string(v)
	if len(d.interned) < maxInterned {
		d.interned[s] = s
	}
	return s
}

// Bool reads a bool.
func (d *Decoder) Bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 {
		d.fail(ErrTruncated)
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail(fmt.Errorf("wire: bool byte %d", v))
	}
	return v == 1
}

// Version reads a version.
func (d *Decoder) Version() Version {
	wall := d.Varint()
	logical := d.Uvarint()
	node := d.Varint()
	if logical > 1<<32-1 || node < -1<<31 || node > 1<<31-1 {
		d.fail(fmt.Errorf("wire: version out of range"))
	}
	return Version{TS: hlc.Timestamp{WallNanos: wall, Logical: uint32(logical)}, Node: NodeID(node)}
}

// Count reads a slice length, refusing one longer than the rest of the
// payload (every element takes at least a byte), so a corrupt length
// cannot make a decoder allocate.
func (d *Decoder) Count() int {
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(ErrTruncated)
		return 0
	}
	return int(n)
}

// AppendList appends xs, its length first, each element with one.
func AppendList[T any](b []byte, xs []T, one func([]byte, T) []byte) []byte {
	b = AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = one(b, x)
	}
	return b
}

// DecodeList reads a list AppendList wrote.
func DecodeList[T any](d *Decoder, one func(*Decoder) T) []T {
	var out []T
	for n := d.Count(); n > 0 && d.Err() == nil; n-- {
		out = append(out, one(d))
	}
	return out
}
