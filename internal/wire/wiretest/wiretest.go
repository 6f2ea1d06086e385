// Package wiretest checks message encodings by property: a message filled
// with random contents must come back from encode → decode equal to what
// was sent. Fill draws the contents (every field, exported or not, at every
// depth); RoundTrip and Check compare. internal/protocol/codectest runs it
// over every protocol's messages; with the simulator's codec in the loop
// (sim.Config.Codec) it is how a dropped or misread field is caught before
// a real cluster misbehaves.
package wiretest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"unsafe"

	"github.com/lightcone/lightcone/internal/wire"
)

// Codec turns messages into bytes and back; *wire.Codec is one, and tests
// wrap one to break it.
type Codec interface {
	Append(dst []byte, m wire.Msg) ([]byte, error)
	Decode(b []byte) (wire.Msg, error)
}

// Bounds of what Fill draws: slices and maps have at most maxLen elements
// (decoders refuse lengths beyond their own limits, which are larger),
// strings and byte slices at most maxBytes bytes.
const (
	maxLen   = 4
	maxBytes = 12
)

// Check round-trips n random messages of every type in types through c,
// drawing from r. fix, if set, is called on each filled message before it
// is sent, to restore an invariant random contents break (two slices of
// equal length, say). It returns the first failure.
func Check(c Codec, types []wire.MsgType, r *rand.Rand, n int, fix func(wire.Msg)) error {
	for range n {
		for _, t := range types {
			m := t.New()
			if err := Fill(r, m); err != nil {
				return fmt.Errorf("%s: %w", t.Kind, err)
			}
			if fix != nil {
				fix(m)
			}
			if err := RoundTrip(c, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// RoundTrip encodes m with c, decodes it, and reports how the result
// differs from m, naming the first field that does. The encoding cannot
// tell a nil slice or map from an empty one, so both sides are normalized
// (empty becomes nil, m included) before they are compared: no protocol
// may give the difference a meaning.
func RoundTrip(c Codec, m wire.Msg) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: panic: %v\nsent %+v", m.Kind(), p, m)
		}
	}()
	b, err := c.Append(nil, m)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", m.Kind(), err)
	}
	got, err := c.Decode(b)
	if err != nil {
		return fmt.Errorf("%s: decode: %w\nsent %+v", m.Kind(), err, m)
	}
	want := reflect.ValueOf(m)
	normalize(want)
	normalize(reflect.ValueOf(got))
	if !reflect.DeepEqual(got, m) {
		return fmt.Errorf("%s: round trip differs at %s\nsent %+v\ngot  %+v", m.Kind(), firstDiff(want, reflect.ValueOf(got), ""), m, got)
	}
	return nil
}

// Fill sets every field of the struct m points to, exported or not, to
// random contents from r: integers across their whole range with their
// edges and small values favoured, strings of arbitrary bytes, slices,
// maps and pointers (nil or not), nested structs. It fails on kinds a
// message cannot carry (interfaces, functions, channels).
func Fill(r *rand.Rand, m any) error {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("wiretest: Fill of %T; want a non-nil pointer", m)
	}
	return fill(r, v.Elem(), v.Elem().Type().String())
}

func fill(r *rand.Rand, v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(randInt(r, v.Type().Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(randUint(r, v.Type().Bits()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(r.NormFloat64() * math.Pow(10, float64(r.IntN(10)))) // never NaN, which equals nothing
	case reflect.String:
		v.SetString(string(randBytes(r)))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(randBytes(r))
			return nil
		}
		n := r.IntN(maxLen + 1)
		if n == 0 && r.IntN(2) == 0 {
			v.SetZero() // nil; otherwise empty
			return nil
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			if err := fill(r, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if err := fill(r, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		n := r.IntN(maxLen + 1)
		if n == 0 && r.IntN(2) == 0 {
			v.SetZero()
			return nil
		}
		v.Set(reflect.MakeMapWithSize(v.Type(), n))
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			if err := fill(r, k, path+"[key]"); err != nil {
				return err
			}
			if err := fill(r, e, path+"[value]"); err != nil {
				return err
			}
			v.SetMapIndex(k, e)
		}
	case reflect.Pointer:
		if r.IntN(4) == 0 {
			v.SetZero()
			return nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		return fill(r, v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			if err := fill(r, Field(v, i), path+"."+v.Type().Field(i).Name); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("wiretest: cannot fill %s of kind %s", path, v.Kind())
	}
	return nil
}

// Field is struct v's field i, settable even if unexported (v must be
// addressable), so that Fill and the tests that break a codec reach every
// field the encoding carries.
func Field(v reflect.Value, i int) reflect.Value {
	f := v.Field(i)
	if f.CanSet() {
		return f
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// randInt draws a bits-wide signed integer: a quarter small (-3..3), an
// eighth at the type's edges, the rest uniform over the whole range.
func randInt(r *rand.Rand, bits int) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1)
	switch x := r.IntN(8); {
	case x < 2:
		return r.Int64N(7) - 3
	case x == 2:
		return [...]int64{lo, hi, lo + 1, hi - 1}[r.IntN(4)]
	}
	return int64(r.Uint64()) >> (64 - bits)
}

// randUint draws a bits-wide unsigned integer the way randInt does.
func randUint(r *rand.Rand, bits int) uint64 {
	hi := uint64(math.MaxUint64) >> (64 - bits)
	switch x := r.IntN(8); {
	case x < 2:
		return r.Uint64N(4)
	case x == 2:
		return [...]uint64{hi, hi - 1, 1 << (bits - 1)}[r.IntN(3)]
	}
	return r.Uint64() >> (64 - bits)
}

func randBytes(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(maxBytes+1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// normalize makes every empty slice and map under v nil.
func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			normalize(Field(v, i))
		}
	case reflect.Array:
		for i := range v.Len() {
			normalize(v.Index(i))
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			if !v.IsNil() {
				v.SetZero()
			}
			return
		}
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				normalize(v.Index(i))
			}
			return
		}
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			normalize(e)
			v.SetMapIndex(it.Key(), e)
		}
	}
}

// firstDiff names the first place where a and b (normalized values of one
// type) differ.
func firstDiff(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return fmt.Sprintf("%s: sent %v, got %v", path, a, b)
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			fa, fb := Field(a, i), Field(b, i)
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				return firstDiff(fa, fb, path+"."+a.Type().Field(i).Name)
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: sent %d elements, got %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if !reflect.DeepEqual(a.Index(i).Interface(), b.Index(i).Interface()) {
				return firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return fmt.Sprintf("%s: sent %#v, got %#v", path, a.Interface(), b.Interface())
}
