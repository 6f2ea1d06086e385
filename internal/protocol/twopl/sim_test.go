package twopl_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
	_ "github.com/lightcone/lightcone/internal/protocol/occ" // protocol occ, this package's OCC mode
	"github.com/lightcone/lightcone/internal/protocol/twopl"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/workload"
)

// protocols are the package's two: 2PL and OCC.
var protocols = []string{twopl.Name, twopl.OCCName}

// settings is cfg as proto's settings.
func settings(proto string, cfg *twopl.Config) any {
	if proto == twopl.OCCName {
		return &twopl.OCCConfig{Config: *cfg}
	}
	return cfg
}

// nonCoordinators are the swarm world's nodes that are not a region's
// coordinator: the ones its crashes hit (doc.go, "Crashes").
var nonCoordinators = []string{"a-1", "b-1", "c-1"}

// swarmConfig draws one seeded run: few records (contention), one to
// three keys per transaction, read-only share, add or write updates,
// settings, message loss, duplication and reordering, crashes of
// non-coordinators and partitions between regions; checked for strict
// serializability (doc.go, "Guarantee").
func swarmConfig(t testing.TB, seed uint64, proto string) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 0x32706c)) // "2pl"
	spec := &workload.TxnSpec{
		Records: 2 + r.IntN(5), MinKeys: 1, MaxKeys: 1 + r.IntN(3),
		ReadOnlyProportion: []float64{-1, 0.2, 0.5}[r.IntN(3)],
		Update:             []string{workload.UpdateAdd, workload.UpdateWrite}[r.IntN(2)],
	}
	spec.MaxKeys = min(spec.MaxKeys, spec.Records)
	cfg := &twopl.Config{
		LockTimeout: time.Duration(300+r.IntN(900)) * time.Millisecond,
		Retries:     []int{-1, 1, 2}[r.IntN(3)],
	}
	cfg.Resend = time.Duration(50+r.IntN(150)) * time.Millisecond
	c := scenario.Config{
		Seed:          seed,
		WorldDef:      simtest.World3(t, 20, 35, 60, 5),
		Protocol:      proto,
		Settings:      settings(proto, cfg),
		Transactions:  spec,
		Clients:       2 + r.IntN(6),
		ClosedLoop:    true,
		Duration:      2*time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
		ClientTimeout: 3 * time.Second,
		Clock:         scenario.Clock{MaxOffset: 5 * time.Millisecond, MaxDriftPPM: 100},
		Check:         "strict-serializable",
	}
	// Runs with adds have the same faults: an add whose outcome is unknown
	// records no written value (check.TxnAccess.WriteUnknown), and the
	// checker places it by the version its readers saw.
	if r.IntN(3) > 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	for range r.IntN(4) {
		at := time.Duration(r.Int64N(int64(c.Duration)))
		d := time.Duration(100+r.IntN(1500)) * time.Millisecond
		if r.IntN(2) == 0 {
			c.Faults = append(c.Faults, scenario.Fault{At: at, For: d, Crash: nonCoordinators[r.IntN(3)]})
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
// of the transactional workload on a few contended records, under message
// loss, duplication and reordering, partitions and crashes of
// non-coordinator nodes; every history must be strictly serializable. Stores do not
// fail here: a coordinator's fail-stop is a coordinator crash (doc.go,
// "Crashes").
func TestSwarm(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			sum := simtest.Swarm{Seeds: 100, Short: 10, StoreFaults: -1, Config: func(tb testing.TB, seed uint64) scenario.Config {
				return swarmConfig(tb, seed, proto)
			}}.Run(t)
			m := sum.Messages
			t.Logf("client errors %v; wounds %d, prepares %d, decides %d", sum.Errors, m["twopl.wound"], m["twopl.prepare"], m["twopl.decide"])
			if sum.Seeds >= 50 && (proto == twopl.Name && m["twopl.wound"] == 0 || sum.Errors["unavailable"] == 0) {
				t.Errorf("no wounds (%d) or no aborts (%v) over %d seeds: the swarm does not exercise contention", m["twopl.wound"], sum.Errors, sum.Seeds)
			}
		})
	}
}

// TestSwarmSingleKey runs YCSB gets and puts (one-operation
// transactions) on two contended keys under the same faults; every
// history must be linearizable.
func TestSwarmSingleKey(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) { swarmSingleKey(t, proto) })
	}
}

func swarmSingleKey(t *testing.T, proto string) {
	simtest.Swarm{Seeds: 50, Short: 5, StoreFaults: -1, Config: func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, proto)
		c.Transactions = nil
		c.Check = "auto"
		var wl yaml.Node
		if err := wl.Encode(map[string]any{"preset": "a", "record_count": 2, "request_distribution": "uniform"}); err != nil {
			tb.Fatal(err)
		}
		c.Workload = wl
		return c
	}}.Run(t)
}

// TestTeethOneRegion: deciding on one region's locks (or validation)
// instead of a majority's lets two regions run conflicting transactions
// at once; the checker rejects the histories.
func TestTeethOneRegion(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) { teethOneRegion(t, proto) })
	}
}

func teethOneRegion(t *testing.T, proto string) {
	failed := 0
	for seed := uint64(1); seed <= 10; seed++ {
		c := swarmConfig(t, seed, proto)
		c.Faults, c.Net = nil, scenario.Net{}
		c.Clients, c.Duration = 6, 500*time.Millisecond
		c.Transactions.ReadOnlyProportion, c.Transactions.Update = -1, workload.UpdateAdd
		var cfg twopl.Config
		switch s := c.Settings.(type) {
		case *twopl.Config:
			cfg = *s
		case *twopl.OCCConfig:
			cfg = s.Config
		}
		twopl.UnsafeOneRegion(&cfg)
		c.Settings = settings(proto, &cfg)
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check != nil && res.Check.Verdict == check.Violation.String() {
			failed++
		}
	}
	if failed < 5 {
		t.Fatalf("%d of 10 one-region runs rejected by the checker; want most", failed)
	}
}

// TestLatencyFloor: without contention or faults, a read-only
// transaction takes one round trip to the nearest region that completes a
// majority (the lock grants; OCC: two, the reads and the validation), a
// read-write one more (a majority applying the decision): each region's median is within a
// millisecond or two of its floor (the intra-region hops to and from the
// coordinator).
func TestLatencyFloor(t *testing.T) {
	for _, tc := range []struct {
		proto  string
		rounds float64 // round trips of a read-only transaction
	}{{twopl.Name, 1}, {twopl.OCCName, 2}} {
		t.Run(tc.proto, func(t *testing.T) { latencyFloor(t, tc.proto, tc.rounds) })
	}
}

func latencyFloor(t *testing.T, proto string, rounds float64) {
	c := scenario.Config{
		Seed: 1, WorldDef: simtest.World3(t, 20, 35, 60, 0.01), Protocol: proto,
		Transactions: &workload.TxnSpec{Records: 100000, MinKeys: 1, MaxKeys: 4},
		Clients:      6, ClosedLoop: true, Duration: 20 * time.Second, ClientTimeout: 5 * time.Second,
		Check: "strict-serializable",
	}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check == nil || res.Check.Verdict != check.Pass.String() {
		t.Fatalf("check: %+v", res.Check)
	}
	rtt := map[string]float64{"a": 40, "b": 40, "c": 70} // to the nearest other region (ms)
	want := map[string]map[string]float64{}              // region -> op -> floor (ms)
	for reg, d := range rtt {
		want[reg] = map[string]float64{"read": rounds * d, "rmw": (rounds + 1) * d}
	}
	seen := 0
	for _, row := range res.Rows {
		f, ok := want[row.Region][row.Op]
		if !ok || row.Count == 0 {
			continue
		}
		seen++
		t.Logf("%s %s: p50 %.1fms p99 %.1fms, floor %.1fms (%d ops)", row.Region, row.Op, row.P50, row.P99, row.Floor, row.Count)
		f += 0.5 // the client's hops to its gateway and back
		if row.Floor != f {
			t.Errorf("%s %s: floor %.1fms; want %.1fms", row.Region, row.Op, row.Floor, f)
		}
		if row.P50 < f || row.P50 > f+2 {
			t.Errorf("%s %s: p50 %.1fms; want within 2ms above its floor %.1fms", row.Region, row.Op, row.P50, f)
		}
	}
	if seen != 6 {
		t.Errorf("%d rows measured; want read and rmw in each of three regions", seen)
	}
}
