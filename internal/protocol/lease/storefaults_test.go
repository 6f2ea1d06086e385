package lease_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/store"
)

// storeFaultConfig is config's seeded run with failing stores: reads and
// writes fail at up to maxError each, crashes are torn, and a node that
// fail-stops restarts after a while. unsafe makes the replicas ignore the
// errors instead of fail-stopping.
func storeFaultConfig(t *testing.T, seed uint64, maxError float64, unsafe bool) scenario.Config {
	c := config(t, seed, 19_000)
	if unsafe {
		lease.UnsafeIgnoreStoreErrors(c.Settings.(*lease.Config))
	}
	r := rand.New(rand.NewPCG(seed, 0x737466)) // "stf"
	c.StoreFaults = sim.StoreFaults{ReadError: r.Float64() * maxError, WriteError: r.Float64() * maxError,
		TornCrash: true, RestartAfter: c.Duration / 4}
	return c
}

// storeFaultProblem says what is wrong with a run under store faults — a
// history the checker does not pass (a broken invariant included), or a
// fail-stop that was not an injected fault — or is "".
func storeFaultProblem(res *scenario.Result) string {
	if res.Check.Verdict != "pass" {
		return res.Check.Model + " " + res.Check.Verdict + ": key " + res.Check.Key + ": " + res.Check.Detail
	}
	for _, f := range res.FailStops {
		if !strings.Contains(f, store.ErrInjected.Error()) {
			return "fail-stop " + f + " is not an injected fault"
		}
	}
	return ""
}

// TestLeaseStoreFaults: seeded runs whose stores fail reads and writes and
// whose crashes are torn, on top of the usual faults. A replica whose
// store fails fail-stops, and nothing that depends on the failure leaves
// (doc.go, "Storage failure"), so every history is still sequentially
// consistent per key, no invariant breaks, and every fail-stop is an
// injected fault.
func TestLeaseStoreFaults(t *testing.T) {
	first, last := uint64(1), uint64(*runsFlag/20)
	if *seedFlag != 0 {
		first, last = *seedFlag, *seedFlag
	}
	if testing.Short() {
		last = min(last, first+20)
	}
	ops, stops := 0, 0
	for seed := first; seed <= last; seed++ {
		res, err := scenario.Run(storeFaultConfig(t, seed, 0.02, false))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if p := storeFaultProblem(res); p != "" {
			t.Fatalf("seed %d: %s\nreplay: go test ./internal/protocol/lease -run TestLeaseStoreFaults -seed %d -v", seed, p, seed)
		}
		ops, stops = ops+res.Check.Ops, stops+len(res.FailStops)
	}
	runs := int(last - first + 1)
	t.Logf("%d runs, %d operations, %d fail-stops", runs, ops, stops)
	if runs >= 20 && (stops < runs/2 || ops < runs*20) {
		t.Fatalf("the runs exercised too little: %d operations, %d fail-stops in %d runs", ops, stops, runs)
	}
}

// TestTeethStoreErrorIgnored: replicas that read a failed read as absent
// and carry on after a failed write — as lease once did for 10 of its 12
// reads, Paxos ballots included — produce a history the checker rejects
// within a few seeds; the same seed with fail-stop passes.
func TestTeethStoreErrorIgnored(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		bad, err := scenario.Run(storeFaultConfig(t, seed, 0.02, true))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if bad.Check.Verdict == "pass" {
			continue
		}
		t.Logf("seed %d, store errors ignored: %s", seed, storeFaultProblem(bad))
		good, err := scenario.Run(storeFaultConfig(t, seed, 0.02, false))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if p := storeFaultProblem(good); p != "" {
			t.Fatalf("seed %d with fail-stop: %s\nreplay: go test ./internal/protocol/lease -run TestTeethStoreErrorIgnored -v", seed, p)
		}
		return
	}
	t.Fatal("no seed of 1..50 caught replicas that ignore store errors\nreplay: go test ./internal/protocol/lease -run TestTeethStoreErrorIgnored -v")
}
