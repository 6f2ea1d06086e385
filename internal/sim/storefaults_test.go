package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// stopper writes the request's key, messages the other node, replies, and
// then, if the value says so, fail-stops: "store" as after a failed write,
// "invariant" through env.Invariant. A write after the failure must not
// land.
type stopper struct {
	got     *[]string
	started *int
}

func (r *stopper) Start(e env.Env) { *r.started++ }
func (r *stopper) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	*r.got = append(*r.got, m.Kind())
}
func (r *stopper) Timer(e env.Env, p any) {}
func (r *stopper) Request(e env.Env, req *wire.Request) {
	_ = e.Store().Put(req.Key, store.Record{Value: req.Value})
	e.Send(1-e.Self(), &ping{})
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client})
	switch string(req.Value) {
	case "store":
		e.FailStop(fmt.Errorf("test: %w", store.ErrInjected))
	case "invariant":
		env.Invariant(e, 1 > 2, "one is not above %d", 2)
	default:
		return
	}
	if err := e.Store().Put("after", store.Record{Value: []byte("x")}); err == nil {
		panic("a write after FailStop succeeded")
	}
}

func newStopperSim(t *testing.T, sf StoreFaults, onViolation func(Failure)) (*Sim, *[]string, *int, *[]*wire.Reply) {
	var got []string
	var started int
	var replies []*wire.Reply
	s := New(Config{Seed: 5, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), StoreFaults: sf, OnViolation: onViolation,
		Factory: func(wire.NodeID) env.Replica { return &stopper{got: &got, started: &started} },
		OnReply: func(r *wire.Reply) { replies = append(replies, r) }})
	return s, &got, &started, &replies
}

// TestFailStopDropsOutputAndRestarts: a handler that fail-stops sends
// nothing, replies nothing, loses its unsynced writes (and cannot write
// after the failure); the failure is recorded as injected, and the node
// is down until RestartAfter, then boots a fresh replica.
func TestFailStopDropsOutputAndRestarts(t *testing.T) {
	s, got, started, replies := newStopperSim(t, StoreFaults{RestartAfter: 200 * time.Millisecond}, nil)
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("store")})
	s.Run(int64(100 * time.Millisecond))
	if len(*got) != 0 || len(*replies) != 0 {
		t.Fatalf("a fail-stopped handler's output left: messages %v, replies %d", *got, len(*replies))
	}
	if s.Up(0) {
		t.Fatal("node 0 is up right after it fail-stopped")
	}
	for _, k := range []string{"k", "after"} {
		if _, ok, _ := s.Engine(0).Get(k); ok {
			t.Fatalf("write %q survived the fail-stop", k)
		}
	}
	fs := s.Failures()
	if len(fs) != 1 || fs[0].Node != 0 || !fs[0].Injected() || fs[0].Violation() || fs[0].At != int64(time.Millisecond) {
		t.Fatalf("Failures() = %v; want one injected failure of n0 at 1ms", fs)
	}
	s.Run(int64(time.Second))
	if !s.Up(0) || *started != 3 {
		t.Fatalf("after RestartAfter: up %v, %d starts; want up and 3", s.Up(0), *started)
	}
	// A plain request on the restarted node goes through.
	s.Submit(0, 0, &wire.Request{ID: 2, Client: 1, Key: "k", Value: []byte("v")})
	s.Run(int64(2 * time.Second))
	if len(*replies) != 1 || len(*got) != 1 {
		t.Fatalf("after restart: %d replies, %d messages; want 1 and 1", len(*replies), len(*got))
	}
}

// TestFailStopTornCrashKeepsAPrefix: under TornCrash a fail-stop keeps some
// of the handler's writes made before the failure (over several seeds, at
// least once), never one made after it.
func TestFailStopTornCrashKeepsAPrefix(t *testing.T) {
	kept := 0
	for seed := uint64(1); seed <= 20; seed++ {
		var started int
		var got []string
		s := New(Config{Seed: seed, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), StoreFaults: StoreFaults{TornCrash: true, RestartAfter: -1},
			Factory: func(wire.NodeID) env.Replica { return &stopper{got: &got, started: &started} }})
		s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("store")})
		s.Run(int64(time.Second))
		if _, ok, _ := s.Engine(0).Get("k"); ok {
			kept++
		}
		if _, ok, _ := s.Engine(0).Get("after"); ok {
			t.Fatalf("seed %d: a write made after FailStop survived the torn crash", seed)
		}
		if s.Up(0) {
			t.Fatalf("seed %d: RestartAfter < 0, yet the node restarted", seed)
		}
	}
	if kept == 0 || kept == 20 {
		t.Fatalf("the write before the failure survived %d of 20 torn crashes; want some, not all", kept)
	}
}

// TestInvariantViolation: a broken invariant reaches OnViolation (the run
// goes on), and without it the simulator panics naming the seed.
func TestInvariantViolation(t *testing.T) {
	var seen []Failure
	s, _, _, replies := newStopperSim(t, StoreFaults{}, func(f Failure) { seen = append(seen, f) })
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("invariant")})
	s.Run(int64(time.Second))
	if len(seen) != 1 || !seen[0].Violation() || seen[0].Injected() || !strings.Contains(seen[0].Err.Error(), "invariant violated: one is not above 2") {
		t.Fatalf("OnViolation saw %v; want one violation", seen)
	}
	if len(*replies) != 0 {
		t.Fatal("the violating handler's reply left")
	}

	s, _, _, _ = newStopperSim(t, StoreFaults{}, nil)
	s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Key: "k", Value: []byte("invariant")})
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "invariant violated") || !strings.Contains(msg, "seed 5") {
			t.Fatalf("panic %q; want the violation and its seed", msg)
		}
	}()
	s.Run(int64(time.Second))
	t.Fatal("a violation without OnViolation did not panic")
}

// TestStoreFaultsAreDeterministic: the injected faults are drawn from the
// seed — the same seed injects the same faults and takes the same steps —
// and they do reach the replicas.
func TestStoreFaultsAreDeterministic(t *testing.T) {
	run := func() (uint64, int, int, int) {
		var got []string
		var started int
		s := New(Config{Seed: 9, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), StoreFaults: StoreFaults{ReadError: 0.2, WriteError: 0.2},
			Factory: func(wire.NodeID) env.Replica { return &failOnError{&echo{got: &got, started: &started}} }})
		for i := range 200 {
			s.Submit(0, wire.NodeID(i%2), &wire.Request{ID: wire.RequestID(i), Client: 1, Key: "k", Value: []byte("v")})
			s.Run(int64(i) * int64(10*time.Millisecond))
		}
		s.Run(int64(10 * time.Second))
		r, w := s.InjectedStoreFaults()
		return s.TraceHash(), r, w, len(s.Failures())
	}
	h1, r1, w1, f1 := run()
	h2, r2, w2, f2 := run()
	if h1 != h2 || r1 != r2 || w1 != w2 || f1 != f2 {
		t.Fatalf("seed 9 twice: hash %x/%x, faults %d+%d/%d+%d, failures %d/%d", h1, h2, r1, w1, r2, w2, f1, f2)
	}
	// echo's own write ignores its error: not every fault fail-stops.
	if f1 == 0 || f1 > w1 {
		t.Fatalf("%d write faults injected, %d fail-stops; want some of each, no more stops than faults", w1, f1)
	}
}

// failOnError is echo that fail-stops on a failed write.
type failOnError struct{ *echo }

func (r *failOnError) Request(e env.Env, req *wire.Request) {
	if err := e.Store().Put(req.Key, store.Record{Value: req.Value}); err != nil {
		if !errors.Is(err, store.ErrInjected) {
			panic(err)
		}
		e.FailStop(err)
		return
	}
	r.echo.Request(e, req)
}
