package lease_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/wire"
)

// staleLeaseScript runs one client in region b against a key mastered in
// region a: write v1, read (a lease starts at b's replica), write v2 — a
// passive write once the master's record of that lease has expired — while
// the link from the master to b's replica is cut, so the lazy update is
// lost, then read again. It returns the client's history.
func staleLeaseScript(t *testing.T, replicaDriftPPM float64) check.History {
	sc := newScript(t, "name: two\nnodes_per_region: 2\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 20}]\n",
		lease.Config{LeaseLength: time.Second, MaxDriftPPM: 20_000, Passive: true, RenewTimeout: 300 * time.Millisecond})
	// A key mastered in region a whose region-b replica is not the client's
	// gateway (so the reply and the lazy update travel different links).
	key := sc.keyMasteredIn(0)
	master, replicaB := sc.replica(key, 0), sc.replica(key, 1)
	gateway := sc.other(replicaB)
	sc.s.SetClock(replicaB, 0, replicaDriftPPM)
	// Start after the masters' restart fence, (L+B)·(1+ρ)/(1−ρ) ≈ 1.4s.
	const t0 = 4 * time.Second
	sc.submit(t0, 1, gateway, wire.OpPut, key, "v1")
	sc.submit(t0+300*time.Millisecond, 1, gateway, wire.OpGet, key, "")
	sc.s.At(int64(t0+800*time.Millisecond), func() { sc.s.Block(master, replicaB) })
	sc.submit(t0+1500*time.Millisecond, 1, gateway, wire.OpPut, key, "v2")
	sc.submit(t0+1700*time.Millisecond, 1, gateway, wire.OpGet, key, "")
	sc.s.Run(int64(30 * time.Second))
	return sc.hist
}

// TestTeethDriftBeyondBound: with the region-b replica's clock at half
// speed (drift 25× the 2% bound), its lease outlives the master's record,
// a passive write completes without it, and the client reads its old value
// after writing the new one: the per-key checker must reject the history.
// Within the bound the same script cannot produce a stale read.
func TestTeethDriftBeyondBound(t *testing.T) {
	bad := staleLeaseScript(t, -500_000)
	if r := check.SequentialPerKey(bad, 0); r.Verdict != check.Violation {
		t.Fatalf("drift beyond the bound: %v over %d operations; want a violation (history %+v)", r, len(bad.Ops), bad.Ops)
	}
	good := staleLeaseScript(t, -10_000) // 1%, within the bound
	if r := check.SequentialPerKey(good, 0); r.Verdict != check.Pass {
		t.Fatalf("drift within the bound: %v; want pass (history %+v)", r, good.Ops)
	}
}
