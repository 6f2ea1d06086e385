package resp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
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
	kindList   = 'l'
	kindSet    = 'e'
	kindZSet   = 'z'
)

// typeName is the kind's name as TYPE replies it and SCAN's TYPE option
// takes it.
func typeName(kind byte) string {
	switch kind {
	case kindString:
		return "string"
	case kindHash:
		return "hash"
	case kindList:
		return "list"
	case kindSet:
		return "set"
	case kindZSet:
		return "zset"
	}
	return "none"
}

// errCorrupt is a stored value that starts with envelopeMagic but does not
// decode; LC.SET can write one.
var errCorrupt = errors.New("corrupt value envelope")

// value is a decoded stored value: a string, hash, list, set or sorted
// set, with an optional expiry.
type value struct {
	kind     byte
	expiryMs int64     // Unix milliseconds; 0: never expires
	str      []byte    // kindString
	fields   []field   // kindHash, sorted by name, names unique
	elems    [][]byte  // kindList in list order; kindSet sorted bytewise, unique
	zs       []zmember // kindZSet, sorted by (score, member), members unique
}

type field struct {
	name, val []byte
}

// zmember is one member of a sorted set.
type zmember struct {
	score  float64
	member []byte
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
//	kind 'l': payload = uvarint n, then n × (uvarint len | element), in list order
//	kind 'e': a set, laid out as 'l' with the members strictly ascending bytewise
//	kind 'z': payload = uvarint n, then n × (8-byte big-endian IEEE 754 score |
//	          uvarint len | member), ascending by (score, member), members unique
func (v *value) encode() []byte {
	if v.kind == kindString && v.expiryMs == 0 && !bytes.HasPrefix(v.str, []byte(envelopeMagic)) {
		return v.str
	}
	n := len(envelopeMagic) + 1 + binary.MaxVarintLen64
	switch v.kind {
	case kindString:
		n += len(v.str)
	case kindHash:
		n += binary.MaxVarintLen64
		for _, f := range v.fields {
			n += 2*binary.MaxVarintLen64 + len(f.name) + len(f.val)
		}
	case kindList, kindSet:
		n += binary.MaxVarintLen64
		for _, e := range v.elems {
			n += binary.MaxVarintLen64 + len(e)
		}
	case kindZSet:
		n += binary.MaxVarintLen64
		for _, z := range v.zs {
			n += 8 + binary.MaxVarintLen64 + len(z.member)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, envelopeMagic...)
	b = append(b, v.kind)
	b = binary.AppendUvarint(b, uint64(v.expiryMs))
	switch v.kind {
	case kindString:
		b = append(b, v.str...)
	case kindHash:
		b = binary.AppendUvarint(b, uint64(len(v.fields)))
		for _, f := range v.fields {
			b = appendLen(b, f.name)
			b = appendLen(b, f.val)
		}
	case kindList, kindSet:
		b = binary.AppendUvarint(b, uint64(len(v.elems)))
		for _, e := range v.elems {
			b = appendLen(b, e)
		}
	case kindZSet:
		b = binary.AppendUvarint(b, uint64(len(v.zs)))
		for _, z := range v.zs {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(z.score))
			b = appendLen(b, z.member)
		}
	}
	return b
}

// appendLen appends s prefixed by its uvarint length.
func appendLen(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
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
		count, b, ok := cutCount(b, 2)
		if !ok {
			return value{}, errCorrupt
		}
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
	case kindList, kindSet:
		count, b, ok := cutCount(b, 1)
		if !ok {
			return value{}, errCorrupt
		}
		v.elems = make([][]byte, 0, count)
		for range count {
			var e []byte
			if e, b, ok = cutLen(b); !ok {
				return value{}, errCorrupt
			}
			if v.kind == kindSet && len(v.elems) > 0 && bytes.Compare(v.elems[len(v.elems)-1], e) >= 0 {
				return value{}, errCorrupt
			}
			v.elems = append(v.elems, e)
		}
		if len(b) != 0 {
			return value{}, errCorrupt
		}
		return v, nil
	case kindZSet:
		count, b, ok := cutCount(b, 9)
		if !ok {
			return value{}, errCorrupt
		}
		v.zs = make([]zmember, 0, count)
		for range count {
			if len(b) < 8 {
				return value{}, errCorrupt
			}
			z := zmember{score: math.Float64frombits(binary.BigEndian.Uint64(b))}
			if math.IsNaN(z.score) {
				return value{}, errCorrupt
			}
			if z.member, b, ok = cutLen(b[8:]); !ok {
				return value{}, errCorrupt
			}
			if len(v.zs) > 0 && !zless(v.zs[len(v.zs)-1], z) {
				return value{}, errCorrupt
			}
			v.zs = append(v.zs, z)
		}
		if len(b) != 0 {
			return value{}, errCorrupt
		}
		return v, nil
	}
	return value{}, errCorrupt
}

// cutCount splits a uvarint element count off b. Each element takes at
// least minBytes, which bounds the count, and so the caller's allocation,
// by the input's size.
func cutCount(b []byte, minBytes int) (uint64, []byte, bool) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64((len(b)-n)/minBytes) {
		return 0, nil, false
	}
	return count, b[n:], true
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
