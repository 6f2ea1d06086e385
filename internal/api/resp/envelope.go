package resp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sort"
)

// envelopeMagic starts every value this package stores in an envelope. 0xFF
// and 0xFE never occur in UTF-8 text, so text values never start with it;
// a binary value that does is escaped by wrapping it in a string envelope.
const envelopeMagic = "\xff\xfeLC"

// Envelope kinds, the byte after envelopeMagic.
const (
	kindString = 's'
	kindHash   = 'h'
)

// errCorrupt is a stored value that starts with envelopeMagic but does not
// decode; LC.SET can write one.
var errCorrupt = errors.New("corrupt value envelope")

// value is a decoded stored value: a string or a hash, with an optional
// expiry.
type value struct {
	kind     byte
	expiryMs int64   // Unix milliseconds; 0: never expires
	str      []byte  // kindString
	fields   []field // kindHash, sorted by name, names unique
}

type field struct {
	name, val []byte
}

// expired reports whether v has expired at nowMs (Unix milliseconds).
func (v *value) expired(nowMs int64) bool { return v.expiryMs != 0 && nowMs >= v.expiryMs }

// encode returns the stored form of v. A string without an expiry whose
// bytes do not start with envelopeMagic is stored verbatim, so every other
// front end reads it as is; everything else is an envelope:
//
//	magic "\xff\xfeLC" | kind byte | expiry uvarint (Unix ms, 0 = none) | payload
//	kind 's': payload = the string's bytes
//	kind 'h': payload = uvarint n, then n × (uvarint len | name | uvarint len | value),
//	          names strictly ascending bytewise
func (v *value) encode() []byte {
	if v.kind == kindString && v.expiryMs == 0 && !bytes.HasPrefix(v.str, []byte(envelopeMagic)) {
		return v.str
	}
	n := len(envelopeMagic) + 1 + binary.MaxVarintLen64
	if v.kind == kindString {
		n += len(v.str)
	} else {
		n += binary.MaxVarintLen64
		for _, f := range v.fields {
			n += 2*binary.MaxVarintLen64 + len(f.name) + len(f.val)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, envelopeMagic...)
	b = append(b, v.kind)
	b = binary.AppendUvarint(b, uint64(v.expiryMs))
	if v.kind == kindString {
		return append(b, v.str...)
	}
	b = binary.AppendUvarint(b, uint64(len(v.fields)))
	for _, f := range v.fields {
		b = binary.AppendUvarint(b, uint64(len(f.name)))
		b = append(b, f.name...)
		b = binary.AppendUvarint(b, uint64(len(f.val)))
		b = append(b, f.val...)
	}
	return b
}

// decodeValue parses a stored value. The result aliases b.
func decodeValue(b []byte) (value, error) {
	if !bytes.HasPrefix(b, []byte(envelopeMagic)) {
		return value{kind: kindString, str: b}, nil
	}
	b = b[len(envelopeMagic):]
	if len(b) == 0 {
		return value{}, errCorrupt
	}
	v := value{kind: b[0]}
	b = b[1:]
	exp, n := binary.Uvarint(b)
	if n <= 0 || exp > 1<<63-1 {
		return value{}, errCorrupt
	}
	v.expiryMs = int64(exp)
	b = b[n:]
	switch v.kind {
	case kindString:
		v.str = b
		return v, nil
	case kindHash:
		count, n := binary.Uvarint(b)
		// Each field takes at least two bytes, which bounds the
		// allocation by the input's size.
		if n <= 0 || count > uint64(len(b)/2) {
			return value{}, errCorrupt
		}
		b = b[n:]
		v.fields = make([]field, 0, count)
		for range count {
			var f field
			var ok bool
			if f.name, b, ok = cutLen(b); !ok {
				return value{}, errCorrupt
			}
			if f.val, b, ok = cutLen(b); !ok {
				return value{}, errCorrupt
			}
			if len(v.fields) > 0 && bytes.Compare(v.fields[len(v.fields)-1].name, f.name) >= 0 {
				return value{}, errCorrupt
			}
			v.fields = append(v.fields, f)
		}
		if len(b) != 0 {
			return value{}, errCorrupt
		}
		return v, nil
	}
	return value{}, errCorrupt
}

// cutLen splits a uvarint-length-prefixed byte string off b.
func cutLen(b []byte) (s, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, nil, false
	}
	b = b[n:]
	return b[:l:l], b[l:], true
}

// find returns the index of the field named name and whether it exists.
func (v *value) find(name []byte) (int, bool) {
	i := sort.Search(len(v.fields), func(i int) bool { return bytes.Compare(v.fields[i].name, name) >= 0 })
	return i, i < len(v.fields) && bytes.Equal(v.fields[i].name, name)
}

// set sets field name to val and reports whether the field is new.
func (v *value) set(name, val []byte) bool {
	i, ok := v.find(name)
	if ok {
		v.fields[i].val = val
		return false
	}
	v.fields = append(v.fields, field{})
	copy(v.fields[i+1:], v.fields[i:])
	v.fields[i] = field{name: name, val: val}
	return true
}

// del removes field name and reports whether it existed.
func (v *value) del(name []byte) bool {
	i, ok := v.find(name)
	if ok {
		v.fields = append(v.fields[:i], v.fields[i+1:]...)
	}
	return ok
}
