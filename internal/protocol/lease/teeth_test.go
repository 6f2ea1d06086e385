package lease_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// staleLeaseScript runs one client in region b against a key mastered in
// region a: write v1, read (a lease starts at b's replica), write v2 — a
// passive write once the master's record of that lease has expired — while
// the link from the master to b's replica is cut, so the lazy update is
// lost, then read again. It returns the client's history.
func staleLeaseScript(t *testing.T, replicaDriftPPM float64) check.History {
	w, err := topo.Parse([]byte("name: two\nnodes_per_region: 2\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 20}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	ks, err := lease.NewKeyspace(tp, lease.Config{LeaseLength: time.Second, MaxDriftPPM: 20_000, Passive: true})
	if err != nil {
		t.Fatal(err)
	}
	// A key mastered in region a whose region-b replica is not the client's
	// gateway (so the reply and the lazy update travel different links).
	var key string
	var replicaB, gateway wire.NodeID
	for i := 0; i < 1000 && key == ""; i++ {
		k := fmt.Sprintf("k%d", i)
		reps := ks.Replicas(nil, k)
		if tp.RegionOf(ks.Master(k)) == 0 && reps[1] == tp.ByRegion[1][0] {
			key, replicaB, gateway = k, reps[1], tp.ByRegion[1][1]
		}
	}
	if key == "" {
		t.Fatal("no suitable key")
	}
	master := ks.Master(key)
	var hist check.History
	calls := map[wire.RequestID]check.Op{}
	var s *sim.Sim
	s = sim.New(sim.Config{Seed: 1, Topology: tp, Factory: ks.Factory(), OnReply: func(r *wire.Reply) {
		op := calls[r.ID]
		op.Return, op.Outcome = s.Now(), check.OK
		if r.Err != nil {
			op.Outcome = check.Failed
			if op.Kind == check.Write {
				op.Outcome, op.Return = check.Unknown, check.Never
			}
		}
		if op.Kind == check.Read {
			op.Value, op.Found = string(r.Value), r.Found
		}
		hist.Ops = append(hist.Ops, op)
	}})
	s.SetClock(replicaB, 0, replicaDriftPPM)
	submit := func(at time.Duration, id wire.RequestID, op wire.Op, v string) {
		s.At(int64(at), func() {
			kind := check.Read
			if op == wire.OpPut {
				kind = check.Write
			}
			calls[id] = check.Op{Client: 1, Key: key, Kind: kind, Value: v, Found: op == wire.OpPut, Call: s.Now()}
			s.Submit(1, gateway, &wire.Request{ID: id, Client: 1, Op: op, Key: key, Value: []byte(v)})
		})
	}
	// Start after the masters' restart fence, (L+B)·(1+ρ)/(1−ρ) ≈ 3.1s.
	const t0 = 4 * time.Second
	submit(t0, 1, wire.OpPut, "v1")
	submit(t0+300*time.Millisecond, 2, wire.OpGet, "")
	s.At(int64(t0+800*time.Millisecond), func() { s.Block(master, replicaB) })
	submit(t0+1500*time.Millisecond, 3, wire.OpPut, "v2")
	submit(t0+1700*time.Millisecond, 4, wire.OpGet, "")
	s.Run(int64(30 * time.Second))
	return hist
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
