package quorum

import (
	"slices"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// pump delivers every queued message, each env's in turn, until none is
// left, dropping those drop selects.
func pump(rs []*Replica, es []*fakeEnv, drop func(from, to wire.NodeID, m wire.Msg) bool) {
	for progress := true; progress; {
		progress = false
		for from, e := range es {
			msgs := e.sent
			e.sent = nil
			for _, s := range msgs {
				progress = true
				if drop != nil && drop(wire.NodeID(from), s.to, s.msg) {
					continue
				}
				rs[s.to].Step(es[s.to], wire.NodeID(from), s.msg)
			}
		}
	}
}

// fireCommitWaits runs e's commit-wait timers (the clock has passed them).
func fireCommitWaits(r *Replica, e *fakeEnv) {
	for id, p := range e.timers {
		if ot, ok := p.(*opTimer); ok && ot.kind == timerCommitWait {
			delete(e.timers, id)
			r.Timer(e, p)
		}
	}
}

// TestQueryOrderPerRequestLevel: a query-ordered keyspace's query uses its
// read level, so a request at a weaker level breaks the order for every
// client. QUORUM/QUORUM, one replica in each of three regions, a's clock
// 1ms ahead of c's (within δ = 2ms): W1 puts v1 at ONE via a, its Mutates
// to b and c are lost, and it completes; W2 puts v2 at ONE via c after
// that; W2's query {c, b} misses a, so W2 is stamped below W1, and a
// later ALL read returns v1. With the level check (the default) both
// ONE writes are refused with ErrInvalid; the QUORUM and ALL levels pass.
func TestQueryOrderPerRequestLevel(t *testing.T) {
	tp := threeRegions(t) // from c, b is nearer than a
	for _, anyLevel := range []bool{true, false} {
		cfg := Config{Read: wire.Quorum, Write: wire.Quorum, WriteOrder: WriteOrderQuery, anyLevel: anyLevel}
		ks, err := NewKeyspace(tp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var rs []*Replica
		var es []*fakeEnv
		for i := 0; i < 3; i++ {
			es = append(es, newFakeEnv(t, wire.NodeID(i), tp))
			rs = append(rs, ks.Factory()(wire.NodeID(i)).(*Replica))
		}
		es[0].now += int64(time.Millisecond)
		for i := range rs {
			rs[i].Start(es[i])
			es[i].now += int64(10 * time.Millisecond)
		}
		lostW1 := func(from, to wire.NodeID, m wire.Msg) bool { _, ok := m.(*Mutate); return ok && from == 0 }
		rs[0].Request(es[0], &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("v1"), Level: wire.One})
		pump(rs, es, lostW1)
		for i := range es {
			es[i].now += int64(500 * time.Microsecond)
		}
		if len(es[0].replies) != 1 {
			t.Fatalf("anyLevel=%v: W1 replies %+v; want one", anyLevel, es[0].replies)
		}
		if !anyLevel {
			if e := es[0].replies[0].Err; e == nil || e.Code != wire.ErrInvalid {
				t.Fatalf("W1 at ONE under query order with QUORUM reads: %+v; want ErrInvalid", es[0].replies[0])
			}
			t.Logf("refusal: %s", es[0].replies[0].Err.Msg)
			rs[1].Request(es[1], &wire.Request{ID: 4, Client: 2, Op: wire.OpGet, Key: "k", Level: wire.One})
			if r := es[1].replies; len(r) != 1 || r[0].Err == nil || r[0].Err.Code != wire.ErrInvalid {
				t.Fatalf("read at ONE under query order with QUORUM reads: %+v; want ErrInvalid", r)
			}
			for i, l := range []wire.Level{wire.Quorum, wire.All, wire.LevelDefault} {
				rs[2].Request(es[2], &wire.Request{ID: wire.RequestID(10 + i), Client: 3, Op: wire.OpPut, Key: "k", Value: []byte("v"), Level: l})
				pump(rs, es, nil)
				if r := es[2].replies; len(r) != i+1 || r[i].Err != nil {
					t.Fatalf("put at %s: replies %+v; want success", l, r)
				}
			}
			continue
		}
		if es[0].replies[0].Err != nil {
			t.Fatalf("anyLevel: W1 failed: %+v", es[0].replies[0])
		}
		rs[2].Request(es[2], &wire.Request{ID: 2, Client: 2, Op: wire.OpPut, Key: "k", Value: []byte("v2"), Level: wire.One})
		pump(rs, es, nil)
		if len(es[2].replies) != 1 || es[2].replies[0].Err != nil {
			t.Fatalf("anyLevel: W2 replies %+v", es[2].replies)
		}
		rs[1].Request(es[1], &wire.Request{ID: 3, Client: 3, Op: wire.OpGet, Key: "k", Level: wire.All})
		pump(rs, es, nil)
		if len(es[1].replies) != 1 || string(es[1].replies[0].Value) != "v1" {
			t.Fatalf("anyLevel: the ALL read after W2 got %+v; the scenario should show it returning the older v1", es[1].replies)
		}
	}
}

// TestQueryRound drives a query-ordered write's query round by hand:
// the write is stamped above the highest version the query found; answers
// that arrive after the round ended (late, duplicate, from replicas the
// speculative retry asked) change nothing; and a timeout during the
// query answers ErrTimeout once, with nothing written and later answers
// ignored.
func TestQueryRound(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{Read: wire.Quorum, Write: wire.Quorum, WriteOrder: WriteOrderQuery})
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEnv(t, 0, tp)
	r := ks.Factory()(0).(*Replica)
	r.Start(e)
	r.Request(e, &wire.Request{ID: 1, Client: 9, Op: wire.OpPut, Key: "k", Value: []byte("v"), Level: wire.Quorum})
	if len(e.sent) != 1 {
		t.Fatalf("the query of a QUORUM-of-3 read level sent %d messages; want 1 (the local replica is read in place)", len(e.sent))
	}
	q := e.sent[0].msg.(*Read)
	if e.sent[0].to != 1 {
		t.Fatalf("query sent to %d; want the nearest, 1", e.sent[0].to)
	}
	// The speculative retry also asks node 2.
	for id, p := range e.timers {
		if p.(*opTimer).kind == timerSpeculate {
			delete(e.timers, id)
			r.Timer(e, p)
		}
	}
	if len(e.sent) != 2 || e.sent[1].to != 2 {
		t.Fatalf("speculative retry: sent %+v; want a Read to 2", e.sent)
	}
	e.sent = nil
	// Node 1 holds a version whose wall time is far ahead of this clock.
	ahead := wire.Version{TS: hlcAt(e.now + int64(time.Hour)), Node: 1}
	r.Step(e, 1, &ReadResp{Op: q.Op, Key: "k", Found: true, Rec: recAt(ahead)})
	if len(e.sent) != 2 {
		t.Fatalf("after the query's answers: sent %d messages; want the 2 Mutates", len(e.sent))
	}
	m := e.sent[0].msg.(*Mutate)
	if !ahead.Less(m.Rec.Version) {
		t.Fatalf("write stamped %v, not above the query's %v", m.Rec.Version, ahead)
	}
	e.sent = nil
	// Late and duplicate answers to the ended query: node 2 (asked by the
	// retry), node 1 again, with an even higher version.
	higher := wire.Version{TS: hlcAt(e.now + 2*int64(time.Hour)), Node: 2}
	r.Step(e, 2, &ReadResp{Op: q.Op, Key: "k", Found: true, Rec: recAt(higher)})
	r.Step(e, 1, &ReadResp{Op: q.Op, Key: "k", Found: true, Rec: recAt(higher)})
	if len(e.sent) != 0 || len(e.replies) != 0 {
		t.Fatalf("late query answers: sent %+v, replies %+v; want nothing", e.sent, e.replies)
	}
	if o := r.ops[m.Op]; o == nil || o.version != m.Rec.Version || o.phase != phaseCollect {
		t.Fatalf("late query answers changed the write: %+v", o)
	}
	r.Step(e, 1, &MutateAck{Op: m.Op, Key: "k"})
	if len(e.replies) != 1 || e.replies[0].Err != nil || e.replies[0].Version != m.Rec.Version {
		t.Fatalf("replies %+v; want one success at %v, with no commit wait", e.replies, m.Rec.Version)
	}
	r.Step(e, 1, &ReadResp{Op: q.Op, Key: "k", Found: true, Rec: recAt(higher)})
	if len(e.sent) != 0 || len(e.replies) != 1 || len(r.ops) != 0 {
		t.Fatal("an answer after the write finished did something")
	}

	// A timeout during the query.
	r.Request(e, &wire.Request{ID: 2, Client: 9, Op: wire.OpPut, Key: "k", Value: []byte("w"), Level: wire.Quorum})
	q2 := e.sent[0].msg.(*Read)
	e.sent = nil
	for id, p := range e.timers {
		if ot := p.(*opTimer); ot.op == q2.Op && ot.kind == timerTimeout {
			delete(e.timers, id)
			r.Timer(e, p)
		}
	}
	if len(e.replies) != 2 || e.replies[1].Err == nil || e.replies[1].Err.Code != wire.ErrTimeout {
		t.Fatalf("timeout during the query: replies %+v; want ErrTimeout", e.replies)
	}
	r.Step(e, 1, &ReadResp{Op: q2.Op, Key: "k"})
	r.Step(e, 2, &ReadResp{Op: q2.Op, Key: "k"})
	for id, p := range e.timers {
		delete(e.timers, id)
		r.Timer(e, p)
	}
	if len(e.sent) != 0 || len(e.replies) != 2 || len(r.ops) != 0 {
		t.Fatalf("after the timeout: sent %+v, replies %d, ops %d; want nothing more", e.sent, len(e.replies), len(r.ops))
	}
	if rec, _, _ := e.st.Get("k"); string(rec.Value) != "v" {
		t.Fatalf("the timed-out write changed the local replica: %q", rec.Value)
	}
}

func hlcAt(wall int64) hlc.Timestamp { return hlc.Timestamp{WallNanos: wall} }

func recAt(v wire.Version) store.Record { return store.Record{Value: []byte("old"), Version: v} }

// TestQueryRefusal: which request levels a query-ordered keyspace refuses
// (one replica in each of three regions). Writes whose sets can miss a
// read-level set are refused where the keyspace's reads see completed
// writes (regular or linearizable); reads whose sets can miss one where
// it is linearizable; the keyspace's own levels never.
func TestQueryRefusal(t *testing.T) {
	tp := threeRegions(t)
	for _, tc := range []struct {
		read, write      wire.Level
		refuseW, refuseR []wire.Level
	}{
		{wire.Quorum, wire.Quorum, []wire.Level{wire.One, wire.LocalOne, wire.LocalQuorum}, []wire.Level{wire.One, wire.LocalOne, wire.LocalQuorum}},
		// Regular: reads may miss each other anyway.
		{wire.One, wire.All, []wire.Level{wire.One, wire.Two, wire.Quorum, wire.LocalOne, wire.LocalQuorum}, nil},
		{wire.All, wire.One, nil, nil},
		// Eventual: nothing is claimed that a level could break.
		{wire.One, wire.One, nil, nil},
	} {
		ks, err := NewKeyspace(tp, Config{Read: tc.read, Write: tc.write, WriteOrder: WriteOrderQuery})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range wire.Levels() {
			for _, read := range []bool{false, true} {
				want := slices.Contains(tc.refuseW, l)
				if read {
					want = slices.Contains(tc.refuseR, l)
				}
				if got := ks.queryRefusal(l, read, 0) != nil; got != want {
					t.Errorf("%s/%s: level %s (read %v) refused = %v; want %v", tc.read, tc.write, l, read, got, want)
				}
			}
		}
		clock, _ := NewKeyspace(tp, Config{Read: tc.read, Write: tc.write, WriteOrder: WriteOrderClock})
		for _, l := range wire.Levels() {
			if clock.queryRefusal(l, false, 0) != nil || clock.queryRefusal(l, true, 0) != nil {
				t.Errorf("%s/%s clock order refuses %s", tc.read, tc.write, l)
			}
		}
	}
}
