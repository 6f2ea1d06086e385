package sim

import (
	"log/slog"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// echo replies to requests after its timer, records what it receives, and
// writes a key (unsynced until its handler ends) per request.
type echo struct {
	got     *[]string
	started *int
}

type ping struct{ n int }

func (*ping) Kind() string { return "test.ping" }

func (r *echo) Start(e env.Env) { *r.started++ }
func (r *echo) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	*r.got = append(*r.got, m.Kind())
}
func (r *echo) Request(e env.Env, req *wire.Request) {
	_ = e.Store().Put(req.Key, store.Record{Value: req.Value})
	e.SetTimer(10*time.Millisecond, req)
	for _, n := range e.Topology().Nodes {
		if n.ID != e.Self() {
			e.Send(n.ID, &ping{})
		}
	}
}
func (r *echo) Timer(e env.Env, p any) {
	req := p.(*wire.Request)
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: req.Value})
}

func testWorld(t *testing.T) *topo.Topology {
	w, err := topo.Parse([]byte("name: two\nnodes_per_region: 1\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 30}]\nintra: {one_way_ms: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

func newTestSim(t *testing.T, got *[]string, started *int, replies *[]*wire.Reply, replyAt *[]int64) *Sim {
	var s *Sim
	s = New(Config{Seed: 3, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler),
		Factory: func(wire.NodeID) env.Replica { return &echo{got: got, started: started} },
		OnReply: func(r *wire.Reply) { *replies = append(*replies, r); *replyAt = append(*replyAt, s.Now()) }})
	return s
}

// TestLatencyTimersAndPersistence: a request reaches its gateway after the
// client's hop, the timer fires 10ms later, the reply takes the hop back;
// the message to the other region takes its 30ms; the write was synced.
func TestLatencyTimersAndPersistence(t *testing.T) {
	var got []string
	var started int
	var replies []*wire.Reply
	var at []int64
	s := newTestSim(t, &got, &started, &replies, &at)
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("v")})
	s.Run(int64(29 * time.Millisecond))
	if len(got) != 0 {
		t.Fatalf("the ping arrived before 30ms of one-way delay: %v", got)
	}
	s.Run(int64(time.Second))
	if len(replies) != 1 || at[0] != int64(12*time.Millisecond) {
		t.Fatalf("replies %v at %v; want one at 12ms (1ms hop, 10ms timer, 1ms hop)", replies, at)
	}
	if len(got) != 1 || got[0] != "test.ping" {
		t.Fatalf("node 1 got %v; want one ping", got)
	}
	if s.Engine(0).Unsynced() != 0 {
		t.Fatal("the handler's write was not synced before its messages left")
	}
	if started != 2 {
		t.Fatalf("%d replicas started; want 2", started)
	}
}

// TestCrashLosesTimersAndRestartBoots: a crash drops pending timers (no
// reply), keeps synced data, and a restart boots a fresh replica.
func TestCrashLosesTimersAndRestartBoots(t *testing.T) {
	var got []string
	var started int
	var replies []*wire.Reply
	var at []int64
	s := newTestSim(t, &got, &started, &replies, &at)
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("v")})
	s.Run(int64(5 * time.Millisecond))
	s.Crash(0)
	s.Run(int64(time.Second))
	if len(replies) != 0 {
		t.Fatal("a crashed node's timer fired")
	}
	if _, ok, _ := s.Engine(0).Get("k"); !ok {
		t.Fatal("synced write lost in the crash")
	}
	s.Restart(0)
	if started != 3 || !s.Up(0) {
		t.Fatalf("restart: %d starts, up %v; want 3 and true", started, s.Up(0))
	}
}

// TestPartitionsNestAndHeal: overlapping partitions of one link heal one at
// a time; Heal clears all.
func TestPartitionsNestAndHeal(t *testing.T) {
	var got []string
	var started int
	var replies []*wire.Reply
	var at []int64
	s := newTestSim(t, &got, &started, &replies, &at)
	a, b := []wire.NodeID{0}, []wire.NodeID{1}
	s.Partition(a, b)
	s.Partition(a, b)
	s.Unpartition(a, b)
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k"})
	s.Run(int64(time.Second))
	if len(got) != 0 {
		t.Fatal("a message crossed a link still cut by the second partition")
	}
	s.Heal()
	s.Submit(0, 0, &wire.Request{ID: 2, Client: 1, Key: "k"})
	s.Run(int64(2 * time.Second))
	if len(got) != 1 {
		t.Fatalf("after Heal node 1 got %d messages; want 1", len(got))
	}
}

// TestClockOffsetAndDrift: SetClock's offset and drift show in Now and in
// how long a local-clock timer takes in true time.
func TestClockOffsetAndDrift(t *testing.T) {
	var got []string
	var started int
	var replies []*wire.Reply
	var at []int64
	s := newTestSim(t, &got, &started, &replies, &at)
	s.SetClock(0, 5*time.Millisecond, 100_000) // +5ms, 10% fast
	if e := s.ClockError(0); e != 5*time.Millisecond {
		t.Fatalf("ClockError = %s; want 5ms", e)
	}
	s.Run(int64(time.Second))
	if e := s.ClockError(0); e < 104*time.Millisecond || e > 106*time.Millisecond {
		t.Fatalf("after 1s at +10%%, ClockError = %s; want 105ms", e)
	}
	// A 10ms local timer on a 10%-fast clock takes about 9.09ms of true time.
	start := s.Now()
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k"})
	s.Run(start + int64(time.Second))
	if d := time.Duration(at[0] - start); d < 11*time.Millisecond || d > 11100*time.Microsecond {
		t.Fatalf("reply after %s; want ≈ 1ms + 9.09ms + 1ms", d)
	}
}

// TestServiceTimeQueues: with a 5ms service time, three requests arriving
// together at one node are handled one after another, so their replies
// come 5ms apart; the pings they send leave only when each is handled.
func TestServiceTimeQueues(t *testing.T) {
	var got []string
	var started int
	var replies []*wire.Reply
	var at []int64
	var s *Sim
	s = New(Config{Seed: 3, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), ServiceTime: 5 * time.Millisecond,
		Factory: func(wire.NodeID) env.Replica { return &echo{got: &got, started: &started} },
		OnReply: func(r *wire.Reply) { replies = append(replies, r); at = append(at, s.Now()) }})
	for i := range 3 {
		s.Submit(0, 0, &wire.Request{ID: wire.RequestID(i + 1), Client: 1, Key: "k", Value: []byte("v")})
	}
	s.Run(int64(time.Second))
	// 1ms hop, then handled at 6, 11, 16ms; 10ms timer; 1ms hop back.
	want := []int64{int64(17 * time.Millisecond), int64(22 * time.Millisecond), int64(27 * time.Millisecond)}
	if len(at) != 3 || at[0] != want[0] || at[1] != want[1] || at[2] != want[2] {
		t.Fatalf("replies at %v; want %v", at, want)
	}
	if len(got) != 3 {
		t.Fatalf("node 1 handled %d pings; want 3", len(got))
	}
}
