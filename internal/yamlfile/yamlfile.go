// Package yamlfile decodes the YAML files users write (scenarios, worlds,
// server configs, keyspace setups) strictly, with errors a person can act
// on: each names the file, the line, the field, and for a field the type
// lacks, the fields it has:
//
//	lc.yaml:2: unknown field "protcol" in scenario (did you mean "protocol"?); valid fields: seed, world, protocol, ...
//	lc.yaml:4: net.loss: "lots" is not a number
//	lc.yaml:3: syntax error: did not find expected ',' or ']'
//
// yaml.v3 alone names neither the file nor the valid fields, and for a
// syntax error names the line where the construct with the mistake began
// (sometimes counted from 0), not the mistake's.
package yamlfile

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a problem at a line of a YAML file.
type Error struct {
	File string // the file's name; "" if unknown (see InFile)
	Line int    // 1-based; 0 if unknown
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Load reads file and decodes it into v (Decode).
func Load(file string, v any, what string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return Decode(file, data, v, what)
}

// Decode decodes data, the contents of file ("" if it has no name), into
// v, a pointer, strictly: a field v's type lacks, a field given twice and
// a value of the wrong type are errors naming the line and the field.
// what names the document's top level in errors ("scenario"). An empty
// document leaves v as it is.
func Decode(file string, data []byte, v any, what string) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return &Error{File: file, Line: syntaxLine(data, err), Msg: "syntax error: " + strings.TrimPrefix(stripLine(err.Error()), "yaml: ")}
	}
	return InFile(file, DecodeNode(&root, v, what))
}

// DecodeNode decodes n into v as Decode does, for YAML kept as a node and
// decoded later (a protocol's settings, a workload): its errors carry
// n's lines.
func DecodeNode(n *yaml.Node, v any, what string) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == 0 {
		return nil
	}
	c := checker{what: what}
	if err := c.check(n, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return c.decodeError(n, "", err)
	}
	return nil
}

// InFile puts file's name ("" for none) on the *Error in err and moves
// the location to the front ("lc.yaml:3: workload: ..." for "workload:
// line 3: ..."); an err without one gets the file's name before it.
func InFile(file string, err error) error {
	if err == nil {
		return nil
	}
	var ye *Error
	if !errors.As(err, &ye) {
		if file == "" {
			return err
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	out := *ye
	if out.File == "" {
		out.File = file
	}
	out.Msg = strings.TrimSuffix(err.Error(), ye.Error()) + out.Msg
	return &out
}

// checker walks a node against the type it decodes into.
type checker struct{ what string }

var (
	nodeType          = reflect.TypeOf(yaml.Node{})
	unmarshalerType   = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textUnmarshalType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// name is how errors call path: the top level is c.what.
func (c checker) name(path string) string {
	if path == "" {
		return c.what
	}
	return path
}

// check reports the first unknown field, field given twice or value of
// the wrong type under n, with its line and path ("faults[2].skew.node").
// Aliases are left to the decoder; nodes decoded later (yaml.Node fields)
// and interfaces are not checked.
func (c checker) check(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	null := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch {
	case n.Kind == yaml.AliasNode || null || t == nodeType || t.Kind() == reflect.Interface:
		return nil
	case reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalType):
		// The type reads itself: its error is the message.
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return c.decodeError(n, path, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: expected a mapping with fields %s, got %s", c.name(path), strings.Join(fieldNames(t), ", "), describe(n))}
		}
		fields, rest := structFields(t)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
				continue // a merge key: the decoder follows it
			}
			fp := join(path, k.Value)
			if line, dup := seen[k.Value]; dup {
				return &Error{Line: k.Line, Msg: fmt.Sprintf("%s: given twice (first on line %d)", fp, line)}
			}
			seen[k.Value] = k.Line
			ft, ok := fields[k.Value]
			switch {
			case ok:
			case rest != nil:
				ft = rest
			default:
				return &Error{Line: k.Line, Msg: c.unknown(k.Value, path, fieldNames(t))}
			}
			if err := c.check(v, ft, fp); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: expected a mapping, got %s", c.name(path), describe(n))}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := c.check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: expected a list, got %s", c.name(path), describe(n))}
		}
		for i, e := range n.Content {
			if err := c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", c.name(path), i)); err != nil {
				return err
			}
		}
		return nil
	}
	return c.leaf(n, t, path)
}

// leaf decodes a scalar n alone into a new t, so that its error names its
// path.
func (c checker) leaf(n *yaml.Node, t reflect.Type, path string) error {
	want := map[reflect.Kind]string{reflect.Bool: "true or false", reflect.Float32: "a number", reflect.Float64: "a number"}[t.Kind()]
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "an integer"
	case reflect.Int64:
		if t.PkgPath() == "" {
			want = "an integer" // not time.Duration, which takes "1s"
		}
	}
	if want != "" && n.Kind != yaml.ScalarNode {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: expected %s, got %s", c.name(path), want, describe(n))}
	}
	// yaml.v3 would truncate 2.5 into an integer.
	if want == "an integer" && n.ShortTag() != "!!int" {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: %s is not an integer", c.name(path), describe(n))}
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		if want != "" {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: %s is not %s", c.name(path), describe(n), want)}
		}
		return c.decodeError(n, path, err)
	}
	return nil
}

// decodeError is a decoder's error on n at path, located: at its own
// line if it names one (a yaml.TypeError, or "line N: ..." from an
// UnmarshalYAML), else at n's.
func (c checker) decodeError(n *yaml.Node, path string, err error) error {
	var ye *Error
	if errors.As(err, &ye) {
		out := *ye
		if out.Line == 0 {
			out.Line = n.Line
		}
		out.Msg = c.name(path) + ": " + strings.TrimSuffix(err.Error(), ye.Error()) + out.Msg
		return &out
	}
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	line := n.Line
	if l, rest, ok := cutLine(msg); ok {
		line, msg = l, rest
	}
	return &Error{Line: line, Msg: c.name(path) + ": " + msg}
}

// unknown is the message for a field the type lacks, with the nearest
// valid name if one is close.
func (c checker) unknown(field, path string, valid []string) string {
	// At most two edits away; of equals, the one that starts alike.
	best, bestD, bestP := "", 3, 0
	for _, v := range valid {
		d, p := editDistance(field, v), commonPrefix(field, v)
		if d < bestD || d == bestD && p > bestP {
			best, bestD, bestP = v, d, p
		}
	}
	hint := ""
	if best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf("unknown field %q in %s%s; valid fields: %s", field, c.name(path), hint, strings.Join(valid, ", "))
}

// structFields maps a struct's YAML field names, inline structs' included,
// to their types; rest is the element type of an inline map, which takes
// every other name (nil if none).
func structFields(t reflect.Type) (fields map[string]reflect.Type, rest reflect.Type) {
	fields = map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := yamlName(f)
		switch {
		case inline && f.Type.Kind() == reflect.Map:
			rest = f.Type.Elem()
		case inline:
			sub, subRest := structFields(derefType(f.Type))
			for k, v := range sub {
				fields[k] = v
			}
			if subRest != nil {
				rest = subRest
			}
		case name != "":
			fields[name] = f.Type
		}
	}
	return fields, rest
}

// FieldNames lists the YAML field names of v, a struct or a pointer to
// one, in declaration order (for messages such as "expected a mapping
// with fields ...").
func FieldNames(v any) []string { return fieldNames(derefType(reflect.TypeOf(v))) }

// fieldNames lists a struct's YAML field names in declaration order,
// inline structs' in their place.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := yamlName(f)
		switch {
		case inline && f.Type.Kind() != reflect.Map:
			out = append(out, fieldNames(derefType(f.Type))...)
		case name != "":
			out = append(out, name)
		}
	}
	return out
}

// yamlName is a field's YAML name ("" if it has none) and whether it is
// inline, as yaml.v3 reads its tag.
func yamlName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	inline := strings.Contains(","+opts+",", ",inline,")
	if inline {
		return "", true
	}
	if !f.IsExported() || name == "-" {
		return "", false
	}
	if name == "" {
		return strings.ToLower(f.Name), false
	}
	return name, false
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	}
	return "something else"
}

// cutLine splits "line N: rest" (yaml.v3's form, "yaml: " first or not).
func cutLine(msg string) (int, string, bool) {
	s := strings.TrimPrefix(msg, "yaml: ")
	num, rest, ok := strings.Cut(strings.TrimPrefix(s, "line "), ": ")
	if !ok || !strings.HasPrefix(s, "line ") {
		return 0, msg, false
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, msg, false
	}
	return n, rest, true
}

// stripLine drops yaml.v3's "line N: " from a syntax error.
func stripLine(msg string) string {
	if _, rest, ok := cutLine(msg); ok {
		return rest
	}
	return msg
}

// maxSearchLines bounds syntaxLine's search (it parses up to this many
// prefixes); past it, yaml.v3's own line is used.
const maxSearchLines = 2000

// syntaxLine is the line of a syntax error in data: the first line from
// which every longer prefix of the document fails to parse (so an
// unclosed quote or bracket is placed where it opens, and a stray line
// where it stands). yaml.v3's own line, used for longer files, is where
// the enclosing construct began.
func syntaxLine(data []byte, err error) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > maxSearchLines {
		if l, _, ok := cutLine(err.Error()); ok {
			return l
		}
		return 0
	}
	for k := len(lines) - 1; k > 0; k-- {
		var n yaml.Node
		if yaml.Unmarshal(bytes.Join(lines[:k], nil), &n) == nil {
			return k + 1
		}
	}
	return 1
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
