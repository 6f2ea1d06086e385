package simtest

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/wire"
)

// Node names a node in scripts: "n3" for NodeID 3.
func Node(id wire.NodeID) string { return fmt.Sprintf("n%d", id) }

// FormatMsg is m on one line: its kind and its non-zero fields, named in
// snake case, "lease.prepare{key=k ballot=2.n1}". Node IDs read n1, clock
// readings and HLC times read as durations since the run's start
// (sim.Epoch), a true boolean as its bare name.
func FormatMsg(m wire.Msg) string { return printer{}.msg(m) }

// FormatValue is v as FormatMsg prints a field of it, with its type's name
// for a struct ("lease.renewTimer{key=k}"): timer payloads.
func FormatValue(v any) string { return printer{}.any(v) }

// printer formats messages and values. With ids set, a uint64 field named
// Op or Nonce (a random ID that ties answers to their request) prints as
// #1, #2, ... in the order its values first appear, so a script's output
// reads which messages belong together.
type printer struct {
	ids map[string]map[uint64]int // by field name
}

func (p printer) msg(m wire.Msg) string { return m.Kind() + p.fields(reflect.ValueOf(m)) }

func (p printer) any(v any) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Struct {
		return rv.Type().String() + p.fields(rv)
	}
	return p.value(rv)
}

var (
	nodeType    = reflect.TypeFor[wire.NodeID]()
	tsType      = reflect.TypeFor[hlc.Timestamp]()
	versionType = reflect.TypeFor[wire.Version]()
	durType     = reflect.TypeFor[time.Duration]()
	stringer    = reflect.TypeFor[fmt.Stringer]()
)

// fields is "{a=1 b}" for a struct's exported non-zero fields.
func (p printer) fields(v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "{}"
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "{" + p.value(v) + "}"
	}
	var parts []string
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if !f.IsExported() || fv.IsZero() {
			continue
		}
		name := snake(f.Name)
		if fv.Kind() == reflect.Bool {
			parts = append(parts, name)
			continue
		}
		if ids := p.ids[f.Name]; ids != nil && fv.Kind() == reflect.Uint64 {
			n, ok := ids[fv.Uint()]
			if !ok {
				n = len(ids) + 1
				ids[fv.Uint()] = n
			}
			parts = append(parts, fmt.Sprintf("%s=#%d", name, n))
			continue
		}
		parts = append(parts, name+"="+p.value(fv))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// value formats one field's value.
func (p printer) value(v reflect.Value) string {
	switch v.Type() {
	case nodeType:
		return Node(wire.NodeID(v.Int()))
	case tsType:
		return timestamp(v.Interface().(hlc.Timestamp))
	case versionType:
		ver := v.Interface().(wire.Version)
		return timestamp(ver.TS) + "@" + Node(ver.Node)
	case durType:
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return p.value(v.Elem())
	case reflect.Struct:
		if v.Type().Implements(stringer) {
			return v.Interface().(fmt.Stringer).String()
		}
		return p.fields(v)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return word(string(v.Bytes()))
		}
		var parts []string
		for i := range v.Len() {
			parts = append(parts, p.value(v.Index(i)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Map:
		var parts []string
		for _, k := range v.MapKeys() {
			parts = append(parts, p.value(k)+":"+p.value(v.MapIndex(k)))
		}
		slices.Sort(parts)
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return word(v.String())
	case reflect.Int64:
		if clock(v.Int()) {
			return time.Duration(v.Int() - sim.Epoch).String()
		}
	}
	if v.CanInterface() && v.Type().Implements(stringer) {
		return v.Interface().(fmt.Stringer).String()
	}
	return fmt.Sprint(v.Interface())
}

// clock reports whether ns looks like a clock reading of a simulated node
// (within a year of sim.Epoch) rather than a count.
func clock(ns int64) bool {
	const year = int64(365 * 24 * time.Hour)
	return ns > sim.Epoch-year && ns < sim.Epoch+year
}

// timestamp is an HLC time as a duration since the run's start, or as
// wall.logical when its wall part is not a clock reading (lease versions
// count ballots there).
func timestamp(t hlc.Timestamp) string {
	if !clock(t.WallNanos) {
		return fmt.Sprintf("%d.%d", t.WallNanos, t.Logical)
	}
	s := time.Duration(t.WallNanos - sim.Epoch).String()
	if t.Logical != 0 {
		s += fmt.Sprintf("+%d", t.Logical)
	}
	return s
}

// word is s bare when it is one simple word, else quoted.
func word(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.:/", r))
	}) {
		return strconv.Quote(s)
	}
	return s
}

// snake is a Go field name in snake case: ReadAt → read_at, HLCTime →
// hlc_time.
func snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
