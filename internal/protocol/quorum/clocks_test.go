package quorum

import (
	"testing"
	"time"
)

// TestMeasuredCommitWaitBound drives one replica's clock probes by hand:
// the wait is 2δ until every peer's probe has arrived, then the largest
// of (own clock − peer's) the probes show, aged by 2ρ/(1−ρ), kept at its
// tightest for as long as the peer's incarnation keeps probing, and never
// below 0 or above 2δ.
func TestMeasuredCommitWaitBound(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{CommitWait: CommitWaitMeasured, MaxDriftPPM: 1000})
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEnv(t, 0, tp)
	r := newReplica(ks, 0)
	r.Start(e)
	if len(e.sent) != 2 || len(e.timers) != 1 {
		t.Fatalf("Start sent %d probes and armed %d timers; want 2 and 1", len(e.sent), len(e.timers))
	}
	if c, ok := e.sent[0].msg.(*Clock); !ok || c.Wall != e.now || c.Epoch != e.now {
		t.Fatalf("first probe %#v; want the clock and the incarnation, both %d", e.sent[0].msg, e.now)
	}
	const twoDelta = int64(2 * DefaultMaxClockOffset)
	ms := int64(time.Millisecond)
	want := func(what string, w int64) {
		t.Helper()
		if got := r.commitWait(e); got != w {
			t.Fatalf("%s: wait %d; want %d", what, got, w)
		}
	}
	want("no probes", twoDelta)
	r.Step(e, 1, &Clock{Wall: e.now - ms, Epoch: 1}) // node 1 looks 1ms behind
	want("a probe from one peer of two", twoDelta)
	r.Step(e, 2, &Clock{Wall: e.now - 3*ms/2, Epoch: 1})
	want("probes 1ms and 1.5ms behind", 3*ms/2)
	r.Step(e, 0, &Clock{Wall: e.now - 3*ms, Epoch: 1}) // from itself: ignored
	want("a probe from self", 3*ms/2)

	// Aging: 2ρ/(1−ρ) of 200ms is 400400.4ns, rounded up.
	e.now += 200 * ms
	want("200ms on", 3*ms/2+400401)
	r.Step(e, 2, &Clock{Wall: e.now - 3*ms, Epoch: 1}) // looser than the aged bound: kept bound stays
	want("a looser probe", 3*ms/2+400401)
	r.Step(e, 2, &Clock{Wall: e.now - ms/2, Epoch: 1}) // tighter: replaces
	want("a tighter probe from node 2", ms+400401)     // node 1's aged bound is now the larger
	r.Step(e, 1, &Clock{Wall: e.now + ms, Epoch: 1})   // node 1 now 1ms ahead
	want("fresh probes", ms/2)

	// Silence: node 1 unheard for more than three intervals (300ms) is
	// unknown; its next probe counts however loose.
	e.now += 250 * ms
	r.Step(e, 2, &Clock{Wall: e.now - ms/4, Epoch: 1})
	want("node 1 unheard for 250ms (node 2 the larger, 0.25ms behind)", ms/4)
	e.now += 51 * ms
	r.Step(e, 2, &Clock{Wall: e.now - ms/4, Epoch: 1})
	want("node 1 unheard for 301ms", twoDelta)
	r.Step(e, 1, &Clock{Wall: e.now - 3*ms, Epoch: 1})
	want("node 1 heard again, 3ms behind", 3*ms)

	// Incarnations: a newer one's probe replaces the bound however loose;
	// an older one's is ignored, however tight.
	r.Step(e, 1, &Clock{Wall: e.now - 7*ms/2, Epoch: 2})
	want("node 1 restarted, 3.5ms behind", 7*ms/2)
	r.Step(e, 1, &Clock{Wall: e.now, Epoch: 1})
	want("a late probe of node 1's earlier incarnation", 7*ms/2)

	r.Step(e, 2, &Clock{Wall: e.now + 2*ms, Epoch: 1}) // every peer ahead: no wait past the version's own time
	r.Step(e, 1, &Clock{Wall: e.now + 2*ms, Epoch: 2})
	want("every peer ahead", 0)
	r.Step(e, 1, &Clock{Wall: e.now - ms/4, Epoch: 3}) // node 1 restarted again, 0.25ms behind
	if c := r.Counters(e.now); len(c) != 1 || c[0].Name != "commit_wait_seconds" || c[0].Value != 0.00025 {
		t.Fatalf("Counters = %+v; want commit_wait_seconds 0.00025", c)
	}

	var probes []any
	for id, p := range e.timers {
		if _, ok := p.(*probeTimer); ok {
			probes = append(probes, p)
			delete(e.timers, id)
		}
	}
	if len(probes) != 1 {
		t.Fatalf("%d probe timers armed; want 1", len(probes))
	}
	r.Timer(e, probes[0])
	if len(e.sent) != 4 || len(e.timers) != 1 {
		t.Fatalf("the probe timer fired: %d probes sent in all, %d timers armed; want 4 and 1 (the next round)", len(e.sent), len(e.timers))
	}
	r2 := newReplica(ks, 0)
	r2.Start(e)
	if w := r2.commitWait(e); w != twoDelta {
		t.Fatalf("a restarted replica: wait %d; want 2δ until its peers are heard", w)
	}
}

// TestBoundCommitWaitSendsNoProbes: the default commit wait is 2δ and
// sends nothing.
func TestBoundCommitWaitSendsNoProbes(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEnv(t, 0, tp)
	r := newReplica(ks, 0)
	r.Start(e)
	r.Step(e, 1, &Clock{Wall: e.now})
	if len(e.sent) != 0 || len(e.timers) != 0 || r.commitWait(e) != int64(2*DefaultMaxClockOffset) {
		t.Fatalf("bound: %d messages, %d timers, wait %d; want none, none, 2δ", len(e.sent), len(e.timers), r.commitWait(e))
	}
	if c := r.Counters(e.now); len(c) != 1 || c[0].Value != 0.004 {
		t.Fatalf("bound: Counters = %+v; want commit_wait_seconds 0.004", c)
	}
}
