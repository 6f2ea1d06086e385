package quorum

import (
	"testing"
	"time"
)

// TestMeasuredCommitWaitBound drives one replica's clock probes by hand:
// the wait is 2δ until every peer's probe has arrived, then the largest
// of (own clock − peer's) the probes show, aged by 2ρ, kept at its
// tightest, and never below 0 or above 2δ.
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
	const twoDelta = int64(2 * DefaultMaxClockOffset)
	if w := r.commitWait(e); w != twoDelta {
		t.Fatalf("no probes: wait %d; want 2δ = %d", w, twoDelta)
	}
	ms := int64(time.Millisecond)
	r.Step(e, 1, &Clock{Wall: e.now - ms}) // node 1 looks 1ms behind
	if w := r.commitWait(e); w != twoDelta {
		t.Fatalf("a probe from one peer of two: wait %d; want 2δ", w)
	}
	r.Step(e, 2, &Clock{Wall: e.now - 3*ms/2})
	if w := r.commitWait(e); w != 3*ms/2 {
		t.Fatalf("probes 1ms and 1.5ms behind: wait %d; want 1.5ms", w)
	}
	e.now += int64(time.Second) // ages both by 2ρ/(1−ρ) of 1s: 2002002.002ns, rounded up
	if w := r.commitWait(e); w != 3*ms/2+2002003 {
		t.Fatalf("after 1s without probes: wait %d; want 1.5ms + 2002003ns", w)
	}
	e.now += int64(time.Second)
	if w := r.commitWait(e); w != twoDelta {
		t.Fatalf("after 2s without probes: wait %d; want 2δ (the bound's)", w)
	}
	r.Step(e, 1, &Clock{Wall: e.now + ms})   // node 1 now 1ms ahead
	r.Step(e, 2, &Clock{Wall: e.now - ms/2}) // node 2 0.5ms behind: tighter than 1.5ms aged
	if w := r.commitWait(e); w != ms/2 {
		t.Fatalf("fresh probes: wait %d; want 0.5ms", w)
	}
	r.Step(e, 2, &Clock{Wall: e.now - 3*ms}) // a slow probe: looser, ignored
	if w := r.commitWait(e); w != ms/2 {
		t.Fatalf("a looser probe replaced a tighter one: wait %d; want 0.5ms", w)
	}
	e.now += int64(time.Millisecond)
	// 2ρ/(1−ρ) of 1ms is 2002ns, rounded up.
	if w := r.commitWait(e); w != ms/2+2003 {
		t.Fatalf("aged 1ms: wait %d; want 0.5ms + 2003ns", w)
	}
	r.Step(e, 2, &Clock{Wall: e.now + 2*ms}) // every peer ahead: no wait past the version's own time
	r.Step(e, 1, &Clock{Wall: e.now + 2*ms})
	if w := r.commitWait(e); w != 0 {
		t.Fatalf("every peer ahead: wait %d; want 0", w)
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
}
