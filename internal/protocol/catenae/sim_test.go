package catenae_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/catenae"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/workload"
)

// swarmConfig draws one seeded run: few records (contention), one to
// three keys per transaction, read-only share, add or write updates,
// settings (epoch, execution speed, order), message loss, duplication and
// reordering, crashes of any node (coordinators included: they recover
// from their stores), regions' outages, partitions between regions and
// clock skew; checked
// for strong session serializability (doc.go, "Guarantee").
func swarmConfig(t testing.TB, seed uint64) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 0xca7e7a))
	spec := &workload.TxnSpec{
		Records: 2 + r.IntN(6), MinKeys: 1, MaxKeys: 1 + r.IntN(3),
		ReadOnlyProportion: []float64{-1, 0.2, 0.5}[r.IntN(3)],
		Update:             []string{workload.UpdateAdd, workload.UpdateWrite}[r.IntN(2)],
	}
	spec.MaxKeys = min(spec.MaxKeys, spec.Records)
	cfg := &catenae.Config{
		Epoch:        time.Duration(2+r.IntN(20)) * time.Millisecond,
		ChainService: time.Duration(100+r.IntN(3000)) * time.Microsecond,
	}
	if r.IntN(5) == 0 {
		cfg.Order = catenae.OrderCanonical
	}
	c := scenario.Config{
		Seed:          seed,
		WorldDef:      simtest.World3(t, 20, 35, 60, 5),
		Protocol:      catenae.Name,
		Settings:      cfg,
		Transactions:  spec,
		Clients:       2 + r.IntN(8),
		ClosedLoop:    true,
		Duration:      2*time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
		ClientTimeout: 3 * time.Second,
		Clock:         scenario.Clock{MaxOffset: time.Duration(r.IntN(30)) * time.Millisecond, MaxDriftPPM: 100},
		Check:         "strong-session-serializable",
	}
	if r.IntN(3) > 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	nodes := []string{"a-0", "a-1", "b-0", "b-1", "c-0", "c-1"}
	for range r.IntN(4) {
		at := time.Duration(r.Int64N(int64(c.Duration)))
		d := time.Duration(100+r.IntN(1500)) * time.Millisecond
		switch r.IntN(3) {
		case 0:
			c.Faults = append(c.Faults, scenario.Fault{At: at, For: d, Crash: nodes[r.IntN(len(nodes))]})
			continue
		case 1: // a region's outage: both its nodes down
			reg := r.IntN(3)
			for _, n := range nodes[2*reg : 2*reg+2] {
				c.Faults = append(c.Faults, scenario.Fault{At: at, For: d, Crash: n})
			}
			continue
		}
		regions := []string{"a", "b", "c"}
		cut := r.IntN(3)
		rest := append(append([]string{}, regions[:cut]...), regions[cut+1:]...)
		c.Faults = append(c.Faults, scenario.Fault{At: at, For: d, Partition: [][]string{{regions[cut]}, rest}})
	}
	return c
}

// TestSwarm runs seeded simulations (simtest.Swarm: 100 in CI, -seeds N)
// of the transactional workload on a few contended records under message
// loss, duplication and reordering, partitions, crashes of any node,
// regions' outages and clock offsets, and on a third of the seeds faulty stores (read and
// write errors, torn crashes: doc.go, "Persistence"); every history must
// be strong-session serializable.
func TestSwarm(t *testing.T) {
	sum := simtest.Swarm{Seeds: 100, Short: 10, MaxStoreError: 0.002, Config: swarmConfig}.Run(t)
	t.Logf("client errors %v; epoch messages %d", sum.Errors, sum.Messages["catenae.epoch"])
}

// TestTeeth: deciding a conflicting component on a region's own order
// (no majority validation), or ordering each key of a chain on its own,
// lets regions or keys disagree on the order; the checker rejects the
// histories.
func TestTeeth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unsafe func(*catenae.Config)
	}{{"skip-validation", catenae.UnsafeNoValidation}, {"reorder-chain", catenae.UnsafeReorderChain}} {
		t.Run(tc.name, func(t *testing.T) {
			failed := 0
			for seed := uint64(1); seed <= 10; seed++ {
				c := swarmConfig(t, seed)
				c.Faults, c.Net = nil, scenario.Net{}
				c.Clients, c.Duration = 8, time.Second
				c.Transactions.Records, c.Transactions.MinKeys, c.Transactions.MaxKeys = 4, 2, 3
				c.Transactions.ReadOnlyProportion, c.Transactions.Update = 0.3, workload.UpdateAdd
				cfg := *c.Settings.(*catenae.Config)
				cfg.Order = catenae.OrderSpeed
				cfg.ChainService = 3 * time.Millisecond
				tc.unsafe(&cfg)
				c.Settings = &cfg
				res, err := scenario.Run(c)
				if err != nil {
					t.Fatal(err)
				}
				if res.Check != nil && res.Check.Verdict == check.Violation.String() {
					failed++
				}
			}
			if failed < 5 {
				t.Fatalf("%d of 10 runs rejected by the checker; want most", failed)
			}
		})
	}
}

// TestLatencyFloor: without contention or faults, a read-only transaction
// is served in its region (its floor, 0, plus the client's hops), and a
// read-write one waits for every region's epoch message, one way from the
// farthest region (the floor), plus at most an epoch and a few
// milliseconds of chain execution.
func TestLatencyFloor(t *testing.T) {
	c := scenario.Config{
		Seed: 1, WorldDef: simtest.World3(t, 20, 35, 60, 0.01), Protocol: catenae.Name,
		Transactions: &workload.TxnSpec{Records: 100000, MinKeys: 1, MaxKeys: 4},
		Clients:      6, ClosedLoop: true, Duration: 20 * time.Second, ClientTimeout: 5 * time.Second,
		Check: "strong-session-serializable",
	}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check == nil || res.Check.Verdict != check.Pass.String() {
		t.Fatalf("check: %+v", res.Check)
	}
	far := map[string]float64{"a": 60, "b": 35, "c": 60} // one way from the farthest other region (ms)
	seen := 0
	for _, row := range res.Rows {
		if row.Count == 0 || (row.Op != "read" && row.Op != "rmw") {
			continue
		}
		seen++
		t.Logf("%s %s: p50 %.1fms p99 %.1fms, floor %.1fms (%d ops)", row.Region, row.Op, row.P50, row.P99, row.Floor, row.Count)
		f := 0.5 // the client's hops to its gateway and back
		if row.Op == "rmw" {
			f += far[row.Region]
		}
		if row.Floor != f {
			t.Errorf("%s %s: floor %.1fms; want %.1fms", row.Region, row.Op, row.Floor, f)
		}
		// Above the floor: the wait for the epoch's end (at most 10ms),
		// the chain (about 2ms per key, forward and back) and the
		// intra-region hops to the coordinator.
		if row.P50 < f || row.P50 > f+20 {
			t.Errorf("%s %s: p50 %.1fms; want within 20ms above its floor %.1fms", row.Region, row.Op, row.P50, f)
		}
	}
	if seen != 6 {
		t.Errorf("%d rows measured; want read and rmw in each of three regions", seen)
	}
}

// TestConflictsValidated: on a few contended records, conflicting
// components are decided by majorities (and some, whose regions all
// disagree, canonically); regions agree on most transactions' dependencies
// (Fig. 4.24's success rate); the history is serializable.
func TestConflictsValidated(t *testing.T) {
	c := scenario.Config{
		Seed: 1, WorldDef: simtest.World3(t, 20, 35, 60, 1), Protocol: catenae.Name,
		Transactions: &workload.TxnSpec{Records: 20, MinKeys: 1, MaxKeys: 3, ReadOnlyProportion: -1},
		Clients:      30, ClosedLoop: true, Duration: 10 * time.Second, ClientTimeout: 5 * time.Second,
		Check: "strong-session-serializable",
	}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check == nil || res.Check.Verdict != check.Pass.String() {
		t.Fatalf("check: %+v", res.Check)
	}
	n := res.Counters
	t.Logf("counters %v", n)
	for _, row := range res.Rows {
		if row.Count > 0 {
			t.Logf("%s %s: p50 %.1fms p99 %.1fms, floor %.1fms (%d ops)", row.Region, row.Op, row.P50, row.P99, row.Floor, row.Count)
		}
	}
	if n["majority_total"] == 0 || n["components_total"] < n["majority_total"] {
		t.Errorf("majority_total %v of components_total %v: want conflicting components decided by majorities", n["majority_total"], n["components_total"])
	}
	if agree := n["spec_agree_total"] / n["spec_compared_total"]; !(agree > 0.3 && agree < 1) {
		t.Errorf("speculation success %.2f; want most but not all transactions alike in every region", agree)
	}
}

// TestClockSkewBeyondEpochs: coordinators' clocks up to two seconds apart
// (two hundred epochs) cost latency, not correctness (doc.go, "Clocks"):
// batches are whatever each region's payloads for an epoch number hold.
func TestClockSkewBeyondEpochs(t *testing.T) {
	simtest.Swarm{Seeds: 10, Short: 3, StoreFaults: -1, Config: func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed)
		c.Faults, c.Net = nil, scenario.Net{}
		c.Duration = 5 * time.Second
		c.Clock = scenario.Clock{MaxOffset: 2 * time.Second, MaxDriftPPM: 500}
		return c
	}}.Run(t)
}

// TestRecoversAfterFaults: after a coordinator crash (its region's
// read-write transactions, and every other region's, wait for it), a
// partition, and a second coordinator's crash, every region commits again
// once the faults end: every transaction a client starts a second after
// the last fault ends (and early enough to finish) commits.
func TestRecoversAfterFaults(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		c := swarmConfig(t, seed)
		// No loss: a lost Submit or Result leaves its outcome unknown
		// (doc.go, "Failures"); duplication and reordering only.
		c.Net = scenario.Net{Duplicate: 0.02, Reorder: 0.05}
		c.Duration, c.ClientTimeout = 12*time.Second, 3*time.Second
		c.Faults = []scenario.Fault{
			{At: 1 * time.Second, For: 1500 * time.Millisecond, Crash: "b-0"},
			{At: 2 * time.Second, For: time.Second, Partition: [][]string{{"a"}, {"b", "c"}}},
			{At: 3500 * time.Millisecond, For: 500 * time.Millisecond, Crash: "a-0"},
		}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || res.Check.Verdict != check.Pass.String() {
			t.Fatalf("seed %d: check %+v", seed, res.Check)
		}
		after := int64(5 * time.Second) // a second after the last fault ends
		ok, stuck := 0, 0
		for _, x := range res.Txns {
			if x.Call < after || x.Call > int64(c.Duration-c.ClientTimeout) {
				continue
			}
			if x.Outcome == check.OK {
				ok++
			} else {
				stuck++
			}
		}
		t.Logf("seed %d: %d committed, %d not, after the faults", seed, ok, stuck)
		if ok < 30 || stuck > 0 {
			t.Errorf("seed %d: after the faults %d transactions committed and %d did not; want all of at least 30", seed, ok, stuck)
		}
	}
}

// TestLongPartitionDrains: a region cut off for 8 s with 2 ms epochs
// (4,000 epochs behind) catches up within a few seconds of the heal:
// resends go on from where they stopped and runs of empty epochs travel as
// one payload.
func TestLongPartitionDrains(t *testing.T) {
	c := scenario.Config{
		Seed: 1, WorldDef: simtest.World3(t, 20, 35, 60, 1), Protocol: catenae.Name,
		Settings:     &catenae.Config{Epoch: 2 * time.Millisecond},
		Transactions: &workload.TxnSpec{Records: 1000, MinKeys: 1, MaxKeys: 3, ReadOnlyProportion: -1},
		Clients:      6, ClosedLoop: true, Duration: 14 * time.Second, ClientTimeout: 2 * time.Second,
		Faults: []scenario.Fault{{At: 2 * time.Second, For: 8 * time.Second, Partition: [][]string{{"c"}, {"a", "b"}}}},
		Check:  "strong-session-serializable",
	}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check == nil || res.Check.Verdict != check.Pass.String() {
		t.Fatalf("check: %+v", res.Check)
	}
	healed := int64(10 * time.Second)
	first := int64(-1)
	ok := 0
	for _, x := range res.Txns {
		if x.Call >= healed && x.Outcome == check.OK {
			ok++
			if first < 0 || x.Return < first {
				first = x.Return
			}
		}
	}
	t.Logf("after the heal: %d committed, the first %.2fs after it", ok, float64(first-healed)/1e9)
	if ok < 100 || first < 0 || first-healed > int64(3*time.Second) {
		t.Errorf("after the heal %d transactions committed, the first %.2fs after it; want at least 100, within 3s", ok, float64(first-healed)/1e9)
	}
}
