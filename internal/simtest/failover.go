package simtest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/wire"
)

// Event is something a node did at a simulated time (since sim.Epoch): a
// leader's grant, say, recorded by a test's probe.
type Event struct {
	From wire.NodeID
	At   int64
}

// Failover kills a group's leader mid-run and bounds how long the others
// take to act again. For each seed it runs Config once to find the leader
// (the node with the last event before CrashAt), runs it again with that
// node crashed at CrashAt for Down, and requires: the history passes its
// checker, the run is the same up to the crash, another node's event
// follows within Bound (and at least MinAfter events follow), never the
// crashed node's while it is down.
type Failover struct {
	Package  string // for the replay command: "./internal/protocol/dirsc"
	Seeds    int
	CrashAt  time.Duration
	Down     time.Duration
	Bound    time.Duration
	MinAfter int // events after the crash (0: one is enough)
	// SkipLeaderless skips a seed with no event before the crash (no
	// leader to kill) instead of failing it; at least half the seeds must
	// still run.
	SkipLeaderless bool
	// Config is the seed's run; record appends each event to events.
	Config func(seed uint64, events *[]Event) scenario.Config
	// NodeName is node n's name in the run's world (a crash fault names it).
	NodeName func(n wire.NodeID) string
}

// lastBefore is the last event before t.
func lastBefore(es []Event, t int64) (Event, bool) {
	i := slices.IndexFunc(es, func(e Event) bool { return e.At >= t })
	if i < 0 {
		i = len(es)
	}
	if i == 0 {
		return Event{}, false
	}
	return es[i-1], true
}

// Run runs every seed and returns the mean and worst time from the crash
// to another node's first event.
func (f Failover) Run(t *testing.T) (mean, worst time.Duration) {
	t.Helper()
	var total time.Duration
	ran := 0
	crash := int64(f.CrashAt)
	for seed := uint64(1); seed <= uint64(f.Seeds); seed++ {
		replay := fmt.Sprintf("go test %s -run '^%s$' -v  # seed %d", f.Package, t.Name(), seed)
		var first []Event
		if _, err := scenario.Run(f.Config(seed, &first)); err != nil {
			t.Fatal(err)
		}
		leader, ok := lastBefore(first, crash)
		if !ok {
			if f.SkipLeaderless {
				t.Logf("seed %d: no event before %s (no leader to kill): skipped", seed, f.CrashAt)
				continue
			}
			t.Fatalf("seed %d: no event before %s\n    replay: %s", seed, f.CrashAt, replay)
		}
		var events []Event
		c := f.Config(seed, &events)
		c.Faults = []scenario.Fault{{At: f.CrashAt, For: f.Down, Crash: f.NodeName(leader.From)}}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: history fails its checker after the leader's crash: %+v\n    replay: %s", seed, res.Check, replay)
		}
		if again, _ := lastBefore(events, crash); again != leader {
			t.Fatalf("seed %d: the run with the crash differs before it: last event %+v, want %+v\n    replay: %s", seed, again, leader, replay)
		}
		i := slices.IndexFunc(events, func(e Event) bool { return e.At >= crash })
		if i < 0 {
			t.Fatalf("seed %d: no event after the leader n%d crashed at %s\n    replay: %s", seed, leader.From, f.CrashAt, replay)
		}
		next := events[i]
		if next.From == leader.From {
			t.Fatalf("seed %d: crashed leader n%d acted at %s\n    replay: %s", seed, leader.From, time.Duration(next.At), replay)
		}
		after := len(events) - i
		if after < f.MinAfter {
			t.Errorf("seed %d: only %d events after the crash; want %d: the group did not resume\n    replay: %s", seed, after, f.MinAfter, replay)
		}
		took := time.Duration(next.At - crash)
		worst, total, ran = max(worst, took), total+took, ran+1
		t.Logf("seed %d: leader n%d crashed at %s; n%d acted %s later; %d events after; %d ops, check %s",
			seed, leader.From, f.CrashAt, next.From, took, after, res.Ops, res.Check.Verdict)
		if took > f.Bound {
			t.Errorf("seed %d: first event %s after the crash; bound %s\n    replay: %s", seed, took, f.Bound, replay)
		}
	}
	if ran < f.Seeds/2 || ran == 0 {
		t.Fatalf("only %d of %d seeds had a leader to kill", ran, f.Seeds)
	}
	return total / time.Duration(ran), worst
}

// Loss loses a group's leader for good mid-run (its disk gone: it never
// restarts) and requires that no durable write was lost. For each seed it
// runs Config once to find the leader (as Failover does), runs it again
// with that node crashed at CrashAt and never restarted, and requires the
// history to pass its checker and, for every key, the last write Durable
// reports (by key) to be followed by a read or write of the key that
// succeeds after the crash: with a passing checker, that operation saw
// the write or a later one.
type Loss struct {
	Package  string
	Seeds    int
	CrashAt  time.Duration
	Config   func(seed uint64, events *[]Event) scenario.Config
	NodeName func(n wire.NodeID) string
	// Durable is each key's last write that must survive a loss at crash
	// (sc: acknowledged before it; rc: released before it).
	Durable func(h check.History, crash int64) map[string]check.Op
}

// Run runs every seed.
func (l Loss) Run(t *testing.T) {
	t.Helper()
	crash := int64(l.CrashAt)
	for seed := uint64(1); seed <= uint64(l.Seeds); seed++ {
		replay := fmt.Sprintf("go test %s -run '^%s$' -v  # seed %d", l.Package, t.Name(), seed)
		var first []Event
		if _, err := scenario.Run(l.Config(seed, &first)); err != nil {
			t.Fatal(err)
		}
		leader, ok := lastBefore(first, crash)
		if !ok {
			t.Fatalf("seed %d: no event before the crash at %s\n    replay: %s", seed, l.CrashAt, replay)
		}
		var events []Event
		c := l.Config(seed, &events)
		c.Faults = []scenario.Fault{{At: l.CrashAt, Crash: l.NodeName(leader.From)}} // never restarted
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: history fails its checker after n%d was lost: %+v\n    replay: %s", seed, leader.From, res.Check, replay)
		}
		durable := l.Durable(res.History, crash)
		survived := map[string]bool{}
		for _, o := range res.History.Ops {
			if _, ok := durable[o.Key]; ok && o.Outcome == check.OK && o.Call > crash && (o.Kind == check.Read || o.Kind == check.Write) {
				survived[o.Key] = true
			}
		}
		for _, k := range slices.Sorted(maps.Keys(durable)) {
			if !survived[k] {
				t.Errorf("seed %d: key %q: no read or write succeeded after the loss of n%d (its last durable write %q unchecked)\n    replay: %s",
					seed, k, leader.From, durable[k].Value, replay)
			}
		}
		t.Logf("seed %d: n%d lost at %s; %d keys with durable writes, all read or written after; %d ops, check %s",
			seed, leader.From, l.CrashAt, len(durable), res.Ops, res.Check.Verdict)
	}
}
