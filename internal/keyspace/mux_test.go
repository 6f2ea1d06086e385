package keyspace_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

func world(t *testing.T) *topo.Topology {
	w, err := topo.Preset("local3")
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

// TestTwoKeyspacesOneCluster: two quorum keyspaces with different policies
// share a cluster; the same key holds different values in each, and an
// unknown keyspace is refused by name.
func TestTwoKeyspacesOneCluster(t *testing.T) {
	tp := world(t)
	fast, err := quorum.NewKeyspace(tp, quorum.Config{Read: wire.One, Write: wire.All})
	if err != nil {
		t.Fatal(err)
	}
	safe, err := quorum.NewKeyspace(tp, quorum.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := keyspace.NewFactory([]keyspace.Def{{Name: "default", Factory: fast.Factory()}, {Name: "safe", Factory: safe.Factory()}})
	if err != nil {
		t.Fatal(err)
	}
	replies := map[wire.RequestID]*wire.Reply{}
	s := sim.New(sim.Config{Seed: 1, Topology: tp, Factory: f, OnReply: func(r *wire.Reply) { replies[r.ID] = r },
		Codec: sim.MustCodec(keyspace.MessageTypes(sim.MustCodec(quorum.MessageTypes())))}) // envelopes, as on a real node
	submit := func(id wire.RequestID, ks string, op wire.Op, key, val string) {
		s.Submit(0, 0, &wire.Request{ID: id, Client: 1, Keyspace: ks, Op: op, Key: key, Value: []byte(val)})
	}
	submit(1, "", wire.OpPut, "k", "in-default")
	submit(2, "safe", wire.OpPut, "k", "in-safe")
	submit(6, "", wire.OpPut, "k/safe/k", "default-key-that-looks-prefixed")
	s.Run(int64(time.Second))
	submit(3, "default", wire.OpGet, "k", "")
	submit(4, "safe", wire.OpGet, "k", "")
	submit(5, "nope", wire.OpGet, "k", "")
	s.Run(int64(2 * time.Second))
	for id, want := range map[wire.RequestID]string{3: "in-default", 4: "in-safe"} {
		r := replies[id]
		if r == nil || r.Err != nil || string(r.Value) != want {
			t.Errorf("request %d = %+v; want %q", id, r, want)
		}
	}
	if r := replies[5]; r == nil || r.Err == nil || !strings.Contains(r.Err.Msg, "keyspaces: default, safe") {
		t.Errorf("unknown keyspace: %+v; want an error listing the keyspaces", r)
	}
	// The default keyspace's keys are stored as they are; the others under
	// their prefix.
	if rec, ok, _ := s.Engine(0).Get("k"); !ok || string(rec.Value) != "in-default" {
		t.Errorf("default keyspace stored %q, %v under k", rec.Value, ok)
	}
	if rec, ok, _ := s.Engine(0).Get("k/safe/k"); !ok || string(rec.Value) != "in-safe" {
		t.Errorf("keyspace safe stored %q, %v under k/safe/k (a default key must not overwrite it)", rec.Value, ok)
	}
	if rec, ok, _ := s.Engine(0).Get("k//safe/k"); !ok || string(rec.Value) != "default-key-that-looks-prefixed" {
		t.Errorf("the default key k/safe/k is stored escaped as k//safe/k; got %q, %v", rec.Value, ok)
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	inner, err := wire.NewCodec(quorum.MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	c, err := keyspace.Codec(inner)
	if err != nil {
		t.Fatal(err)
	}
	m := &keyspace.Envelope{KS: 3, Msg: &quorum.Mutate{Op: 9, Key: "k", Rec: store.Record{Value: []byte("v")}}}
	b, err := c.Append(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	env := got.(*keyspace.Envelope)
	if env.KS != 3 || !reflect.DeepEqual(env.Msg, m.Msg) {
		t.Fatalf("round trip = %d %#v; want 3 %#v", env.KS, env.Msg, m.Msg)
	}
	if _, err := c.Decode(b[:len(b)-2]); err == nil {
		t.Error("truncated envelope decoded")
	}
}

// TestMuxReplicaByName: the Mux hands out each keyspace's own replica by
// name, and nil for a name it does not serve.
func TestMuxReplicaByName(t *testing.T) {
	tp := world(t)
	ks, err := quorum.NewKeyspace(tp, quorum.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := keyspace.NewFactory([]keyspace.Def{{Name: "default", Factory: ks.Factory()}, {Name: "other", Factory: ks.Factory()}})
	if err != nil {
		t.Fatal(err)
	}
	m := f(0).(*keyspace.Mux)
	a, b := m.Replica("default"), m.Replica("other")
	if _, ok := a.(*quorum.Replica); !ok {
		t.Fatalf("Replica(%q) = %T; want *quorum.Replica", "default", a)
	}
	if a == b {
		t.Error("two keyspaces share one replica")
	}
	if r := m.Replica("nope"); r != nil {
		t.Errorf("Replica(%q) = %T; want nil", "nope", r)
	}
}

// TestCondRefusal: a keyspace defined with a CondRefusal answers
// conditional writes with it before its protocol sees them; plain writes
// and the other keyspaces are untouched.
func TestCondRefusal(t *testing.T) {
	tp := world(t)
	ks, err := quorum.NewKeyspace(tp, quorum.Config{})
	if err != nil {
		t.Fatal(err)
	}
	refusal := &wire.Error{Code: wire.ErrInvalid, Msg: "no conditional writes here"}
	f, err := keyspace.NewFactory([]keyspace.Def{{Name: "default", Factory: ks.Factory(), CondRefusal: refusal}})
	if err != nil {
		t.Fatal(err)
	}
	replies := map[wire.RequestID]*wire.Reply{}
	s := sim.New(sim.Config{Seed: 1, Topology: tp, Factory: f, OnReply: func(r *wire.Reply) { replies[r.ID] = r }})
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("v"), Cond: true})
	s.Submit(0, 0, &wire.Request{ID: 2, Client: 1, Op: wire.OpDelete, Key: "k", Cond: true})
	s.Submit(0, 0, &wire.Request{ID: 3, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("v")})
	s.Run(int64(time.Second))
	for _, id := range []wire.RequestID{1, 2} {
		if r := replies[id]; r == nil || r.Err == nil || *r.Err != *refusal {
			t.Errorf("conditional write %d: %+v; want the refusal", id, r)
		}
	}
	if r := replies[3]; r == nil || r.Err != nil {
		t.Errorf("plain write: %+v; want it applied", r)
	}
	if rec, ok, _ := s.Engine(0).Get("k"); !ok || string(rec.Value) != "v" {
		t.Errorf("stored %q, %v; want only the plain write's v", rec.Value, ok)
	}
}
