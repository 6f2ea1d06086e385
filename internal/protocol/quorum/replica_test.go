package quorum

import (
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// fakeEnv is a hand-driven Env: it records what the replica sends.
type fakeEnv struct {
	t       *testing.T
	self    wire.NodeID
	now     int64
	rng     *rand.Rand
	st      *store.Mem
	topo    *topo.Topology
	sent    []sent
	replies []*wire.Reply
	timers  map[env.TimerID]any
	nextTID env.TimerID
}

type sent struct {
	to  wire.NodeID
	msg wire.Msg
}

func newFakeEnv(t *testing.T, self wire.NodeID, tp *topo.Topology) *fakeEnv {
	return &fakeEnv{t: t, self: self, now: 1e18, rng: rand.New(rand.NewPCG(1, 2)), st: store.NewMem(), topo: tp, timers: map[env.TimerID]any{}}
}

func (f *fakeEnv) Self() wire.NodeID                 { return f.self }
func (f *fakeEnv) Now() int64                        { return f.now }
func (f *fakeEnv) Wall() int64                       { return f.now }
func (f *fakeEnv) Latency(wire.NodeID) time.Duration { return 0 }
func (f *fakeEnv) Send(to wire.NodeID, m wire.Msg)   { f.sent = append(f.sent, sent{to, m}) }
func (f *fakeEnv) Reply(r *wire.Reply)               { f.replies = append(f.replies, r) }
func (f *fakeEnv) CancelTimer(id env.TimerID)        { delete(f.timers, id) }
func (f *fakeEnv) Rand() *rand.Rand                  { return f.rng }
func (f *fakeEnv) Store() store.Store                { return f.st }
func (f *fakeEnv) Topology() *topo.Topology          { return f.topo }
func (f *fakeEnv) Log() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (f *fakeEnv) FailStop(cause error)              { f.t.Fatalf("fail-stop: %v", cause) }
func (f *fakeEnv) SetTimer(d time.Duration, p any) env.TimerID {
	f.nextTID++
	f.timers[f.nextTID] = p
	return f.nextTID
}

func threeRegions(t *testing.T) *topo.Topology {
	w, err := topo.Parse([]byte(`
name: t3
nodes_per_region: 1
regions: [{name: a}, {name: b}, {name: c}]
links:
  - {from: a, to: b, one_way_ms: 10}
  - {from: b, to: c, one_way_ms: 10}
  - {from: a, to: c, one_way_ms: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

// TestStaleAnswersAreIgnored: answers that do not belong to an operation
// (another key, the wrong kind, an earlier incarnation) change nothing.
func TestStaleAnswersAreIgnored(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEnv(t, 0, tp)
	r := ks.Factory()(0).(*Replica)
	r.Start(e)
	r.Request(e, &wire.Request{ID: 1, Client: 9, Op: wire.OpPut, Key: "k", Value: []byte("v"), Level: wire.All})
	if len(e.sent) != 2 {
		t.Fatalf("an ALL put sent %d messages; want 2 (the other replicas; its own is written in place)", len(e.sent))
	}
	op := e.sent[0].msg.(*Mutate).Op
	// A read answer carrying the write's op ID must not be taken as an ack
	// (nor crash on the write's missing read state).
	r.Step(e, 1, &ReadResp{Op: op, Key: "k", Found: true})
	r.Step(e, 2, &ReadResp{Op: op, Key: "k", Found: true})
	// Acks for another key must not count either.
	r.Step(e, 1, &MutateAck{Op: op, Key: "other"})
	r.Step(e, 2, &MutateAck{Op: op, Key: "other"})
	if len(e.replies) != 0 {
		t.Fatalf("stale answers completed the write: %+v", e.replies[0])
	}
	r.Step(e, 1, &MutateAck{Op: op, Key: "k"})
	r.Step(e, 1, &MutateAck{Op: op, Key: "k"}) // duplicate
	if len(e.replies) != 0 {
		t.Fatal("the local write and one replica's ack (twice) completed an ALL write of three")
	}
	r.Step(e, 2, &MutateAck{Op: op, Key: "k"})
	e.now += int64(time.Second) // past the commit wait
	for id, p := range e.timers {
		delete(e.timers, id)
		r.Timer(e, p)
	}
	if len(e.replies) != 1 || e.replies[0].Err != nil {
		t.Fatalf("replies = %+v; want one success", e.replies)
	}
	// A restarted replica never reuses its predecessor's operation IDs.
	r2 := ks.Factory()(0).(*Replica)
	r2.Start(e)
	e.sent = nil
	r2.Request(e, &wire.Request{ID: 2, Client: 9, Op: wire.OpGet, Key: "k"})
	if got := e.sent[0].msg.(*Read).Op; got == op || got == op+1 {
		t.Fatalf("restarted replica's first op ID %d collides with the previous incarnation's %d", got, op)
	}
}

// TestUnknownOpIsInvalid: an operation the protocol does not know is
// refused, never executed as a write.
func TestUnknownOpIsInvalid(t *testing.T) {
	tp := threeRegions(t)
	ks, _ := NewKeyspace(tp, Config{})
	e := newFakeEnv(t, 0, tp)
	r := ks.Factory()(0)
	r.Start(e)
	r.Request(e, &wire.Request{ID: 1, Client: 1, Op: 99, Key: "k", Value: []byte("v")})
	if len(e.sent) != 0 || len(e.replies) != 1 || e.replies[0].Err == nil || e.replies[0].Err.Code != wire.ErrInvalid {
		t.Fatalf("unknown op: sent %d, replies %+v; want one ErrInvalid and nothing sent", len(e.sent), e.replies)
	}
}

// TestReadOfMissingKey: a read of a key no replica has answers "not found"
// at once and writes nothing (in particular, no empty value by "repair").
func TestReadOfMissingKey(t *testing.T) {
	for _, nodes := range []int{1, 3} {
		tp := threeRegions(t)
		if nodes == 1 {
			w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: a}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			tp = topo.NewTopology(w)
		}
		ks, err := NewKeyspace(tp, Config{})
		if err != nil {
			t.Fatal(err)
		}
		e := newFakeEnv(t, 0, tp)
		r := ks.Factory()(0).(*Replica)
		r.Start(e)
		r.Request(e, &wire.Request{ID: 1, Client: 1, Op: wire.OpGet, Key: "nothing", Level: wire.One})
		if len(e.replies) != 1 || e.replies[0].Found || e.replies[0].Err != nil {
			t.Fatalf("%d nodes: read of a missing key at ONE: replies %+v; want one not-found", nodes, e.replies)
		}
		if _, ok, _ := e.st.Get("nothing"); ok {
			t.Fatalf("%d nodes: a read of a missing key stored a record", nodes)
		}
		if len(r.ops) != 0 {
			t.Fatalf("%d nodes: %d operations left pending", nodes, len(r.ops))
		}
	}
}

// TestQuorumReadOfMissingKey is the general path's version: the local
// replica and one other both lack the key.
func TestQuorumReadOfMissingKey(t *testing.T) {
	tp := threeRegions(t)
	ks, _ := NewKeyspace(tp, Config{})
	e := newFakeEnv(t, 0, tp)
	r := ks.Factory()(0).(*Replica)
	r.Start(e)
	r.Request(e, &wire.Request{ID: 1, Client: 1, Op: wire.OpGet, Key: "nothing", Level: wire.Quorum})
	if len(e.sent) != 1 {
		t.Fatalf("QUORUM read of 3 sent %d messages; want 1 (plus the local read)", len(e.sent))
	}
	rd := e.sent[0].msg.(*Read)
	r.Step(e, e.sent[0].to, &ReadResp{Op: rd.Op, Key: rd.Key})
	if len(e.replies) != 1 || e.replies[0].Found || e.replies[0].Err != nil {
		t.Fatalf("replies %+v; want one not-found", e.replies)
	}
	if _, ok, _ := e.st.Get("nothing"); ok || len(r.ops) != 0 {
		t.Fatalf("stored a record (%v) or left %d operations pending", ok, len(r.ops))
	}
}

// TestCeilingCoversRestartedStamps: a replica starting with its clock at
// c may hold a version stamped up to c + 4δ (another node restarted with
// its clock δ ahead stamps from its clock + 2δ, up to true time + 3δ, and
// true time may be c + δ). A later write below that version, stamped by a
// coordinator that has not seen it, must still be compared with it and
// dropped, not written over it without a read (doc.go, "Writes without a
// read"). A ceiling of c + 2δ took it for newer.
func TestCeilingCoversRestartedStamps(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEnv(t, 1, tp)
	delta := int64(ks.cfg.MaxClockOffset)
	newer := store.Record{Value: []byte("a"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: e.now + 4*delta - 1}, Node: 0}}
	if err := e.st.Put("k", newer); err != nil {
		t.Fatal(err)
	}
	r := ks.Factory()(1).(*Replica)
	r.Start(e)
	older := store.Record{Value: []byte("c"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: e.now + 3*delta}, Node: 2}}
	r.Step(e, 2, &Mutate{Op: 7, Key: "k", Rec: older})
	if got, _, _ := e.st.Get("k"); string(got.Value) != "a" {
		t.Fatalf("after an older write arrived, k = %q at %v; want the newer %q kept", got.Value, got.Version, "a")
	}
}
