package codectest_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all" // every protocol, from the registry
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/wire/wiretest"
)

var (
	seedFlag  = flag.Uint64("seed", 1, "random source of the round trips")
	itersFlag = flag.Int("iters", 2000, "random messages of each type (TestRoundTripEveryMessage)")
)

// wantKinds is how many message kinds the protocols register: a message
// must be registered (and so round-tripped here) to be sent. A protocol
// that registers later is round-tripped without being listed.
var wantKinds = map[string]int{"quorum": 5, "lease": 26, "meteor": 7}

// allTypes is every registered protocol's message types and their codec.
func allTypes(t *testing.T) (*wire.Codec, []wire.MsgType) {
	t.Helper()
	var all []wire.MsgType
	seen := 0
	for _, d := range protocol.All() {
		if want, ok := wantKinds[d.Name]; ok && len(d.MessageTypes) != want {
			t.Errorf("%s registers %d message kinds; want %d", d.Name, len(d.MessageTypes), want)
		} else if ok {
			seen++
		}
		if len(d.MessageTypes) == 0 {
			t.Errorf("%s registers no message types", d.Name)
		}
		all = append(all, d.MessageTypes...)
	}
	if seen != len(wantKinds) {
		t.Errorf("%d of the protocols %v registered", seen, wantKinds)
	}
	c, err := protocol.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c, all
}

// fix restores the invariants of messages that random contents break.
// ConfirmBatch and ConfirmBatchAck carry parallel slices, encoded as one
// count and pairs: the encoder indexes the second slice by the first.
func fix(m wire.Msg) {
	switch m := m.(type) {
	case *lease.ConfirmBatch:
		n := min(len(m.Keys), len(m.Ballots))
		m.Keys, m.Ballots = m.Keys[:n], m.Ballots[:n]
	case *lease.ConfirmBatchAck:
		n := min(len(m.OK), len(m.Known))
		m.OK, m.Known = m.OK[:n], m.Known[:n]
	}
}

func replay(name string) string {
	return fmt.Sprintf("go test ./internal/protocol/codectest -run '^%s$' -seed %d", name, *seedFlag)
}

// TestRoundTripEveryMessage: every registered message type of every
// protocol, filled with random contents, decodes to what was encoded.
func TestRoundTripEveryMessage(t *testing.T) {
	c, types := allTypes(t)
	r := rand.New(rand.NewPCG(*seedFlag, 0))
	if err := wiretest.Check(c, types, r, *itersFlag, fix); err != nil {
		t.Fatalf("%v\nreplay: %s", err, replay("TestRoundTripEveryMessage"))
	}
}

// dropping is a codec that loses one field of one message type: the field
// at path is zeroed after every decode of kind.
type dropping struct {
	wiretest.Codec
	kind string
	path []int
}

func (c dropping) Decode(b []byte) (wire.Msg, error) {
	m, err := c.Codec.Decode(b)
	if err == nil && baseKind(m) == c.kind {
		zeroAt(reflect.ValueOf(m), c.path)
	}
	return m, err
}

func baseKind(m wire.Msg) string {
	if b, ok := m.(interface{ BaseKind() string }); ok {
		return b.BaseKind()
	}
	return m.Kind()
}

// zeroAt zeroes the field at path (field indices, through pointers, slices
// and arrays: in every element) under v.
func zeroAt(v reflect.Value, path []int) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			zeroAt(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			zeroAt(v.Index(i), path)
		}
	case reflect.Struct:
		f := wiretest.Field(v, path[0])
		if len(path) == 1 {
			f.SetZero()
			return
		}
		zeroAt(f, path[1:])
	}
}

// field is one field of a message type at any depth: its index path and
// its name as RoundTrip reports it, with [] for any element.
type field struct {
	path []int
	name string
}

func fields(t reflect.Type, path []int, name string, depth int) []field {
	for t.Kind() == reflect.Pointer || (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8 {
		if t.Kind() != reflect.Pointer {
			name += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 8 {
		return nil
	}
	var out []field
	for i := range t.NumField() {
		f := field{append(append([]int(nil), path...), i), name + "." + t.Field(i).Name}
		out = append(out, f)
		out = append(out, fields(t.Field(i).Type, f.path, f.name, depth+1)...)
	}
	return out
}

var index = regexp.MustCompile(`\[\d+\]`)

// TestCheckCatchesEveryDroppedField is the property test's teeth: for every
// field of every message type, at every depth, a codec that loses that
// field fails the round trip, and the failure names the field.
func TestCheckCatchesEveryDroppedField(t *testing.T) {
	c, types := allTypes(t)
	mutants := 0
	for _, mt := range types {
		fs := fields(reflect.TypeOf(mt.New()), nil, "", 0)
		if len(fs) == 0 {
			t.Errorf("%s: no fields", mt.Kind)
		}
		for _, f := range fs {
			mutants++
			r := rand.New(rand.NewPCG(*seedFlag, uint64(mutants)))
			err := wiretest.Check(dropping{c, mt.Kind, f.path}, []wire.MsgType{mt}, r, 200, fix)
			switch {
			case err == nil:
				t.Errorf("%s: a codec that drops %s passed 200 round trips; replay: %s", mt.Kind, f.name, replay("TestCheckCatchesEveryDroppedField"))
			case !strings.Contains(index.ReplaceAllString(err.Error(), "[]"), f.name):
				t.Errorf("%s: dropping %s failed as %v; want the field named", mt.Kind, f.name, err)
			}
		}
	}
	t.Logf("%d message types, %d dropped fields, all caught", len(types), mutants)
}

// TestCheckReportsDroppedValue: one mutation spelled out. A quorum codec
// that loses a written record's value is reported with the field's path.
func TestCheckReportsDroppedValue(t *testing.T) {
	c, err := wire.NewCodec(quorum.MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	rec := store.Record{Value: []byte("v"), Version: wire.Version{Node: 1}}
	if err := wiretest.RoundTrip(c, &quorum.Mutate{Op: 1, Key: "k", Rec: rec}); err != nil {
		t.Fatalf("RoundTrip through the real codec: %v", err)
	}
	var value field
	for _, f := range fields(reflect.TypeOf(quorum.Mutate{}), nil, "", 0) {
		if f.name == ".Rec.Value" {
			value = f
		}
	}
	err = wiretest.RoundTrip(dropping{c, "quorum.mutate", value.path}, &quorum.Mutate{Op: 1, Key: "k", Rec: rec})
	if err == nil || !strings.Contains(err.Error(), ".Rec.Value") {
		t.Fatalf("RoundTrip through a codec that drops Rec.Value = %v; want a difference at .Rec.Value", err)
	}
	t.Log(err)
}
