package quorum_test

import (
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/wire"
)

// findViolation runs seeds until the checker rejects a history; it returns
// the first rejecting seed, or 0.
func findViolation(t *testing.T, seeds int, mk func(seed uint64) scenario.Config) (uint64, *scenario.Result) {
	t.Helper()
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res, err := scenario.Run(mk(seed))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Check.Verdict == "violation" {
			return seed, res
		}
	}
	return 0, nil
}

// TestTeethWeakLevelsAreNotLinearizable: ONE/ONE claims only valid reads; the
// linearizability checker must catch it returning stale values.
func TestTeethWeakLevelsAreNotLinearizable(t *testing.T) {
	seed, res := findViolation(t, 200, func(seed uint64) scenario.Config {
		c := swarmConfig(t, seed, wire.One, wire.One)
		c.Check = "linearizable"
		return c
	})
	if seed == 0 {
		t.Fatal("200 runs of ONE/ONE under faults all passed the linearizability checker; it has no teeth")
	}
	t.Logf("seed %d: %s", seed, res.Check.Detail)
}

// TestTeethSkewBeyondBound: QUORUM/QUORUM is linearizable only while clocks
// stay within MaxClockOffset of true time. With one clock far behind, its
// writes are stamped older than writes that completed before them and are
// lost (last writer wins), which the checker must catch.
func TestTeethSkewBeyondBound(t *testing.T) {
	seed, res := findViolation(t, 200, func(seed uint64) scenario.Config {
		c := swarmConfig(t, seed, wire.Quorum, wire.Quorum)
		c.RandomFaults = false
		c.Net = scenario.Net{}
		c.Clock = scenario.Clock{}
		c.Faults = []scenario.Fault{{Skew: &scenario.Skew{Node: "b-0", Offset: -300 * time.Millisecond}}}
		c.Check = "linearizable" // auto would claim only valid reads here
		return c
	})
	if seed == 0 {
		t.Fatal("200 runs of QUORUM/QUORUM with 300ms skew (bound 2ms) all passed: the checker has no teeth")
	}
	t.Logf("seed %d: %s", seed, res.Check.Detail)
	// The same runs within the bound pass.
	for seed := uint64(1); seed <= 50; seed++ {
		c := swarmConfig(t, seed, wire.Quorum, wire.Quorum)
		c.RandomFaults = false
		c.Faults = []scenario.Fault{{Skew: &scenario.Skew{Node: "b-0", Offset: -time.Millisecond}}}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: within the bound: %s %s: %s", seed, res.Check.Model, res.Check.Verdict, res.Check.Detail)
		}
	}
}

// TestTeethRegularNeedsWriteOverlap: when reads need not overlap writes
// (ONE/ONE), the regular-register checker catches reads that miss a write
// completed before they began.
func TestTeethRegularNeedsWriteOverlap(t *testing.T) {
	seed, _ := findViolation(t, 300, func(seed uint64) scenario.Config {
		c := swarmConfig(t, seed, wire.One, wire.One)
		c.Check = "regular"
		return c
	})
	if seed == 0 {
		t.Fatal("300 runs of ONE/ONE passed the regular-register checker; it has no teeth")
	}
}

// TestGatewayCrashRestartStorm crashes a coordinator for a few milliseconds
// every ~50ms, so answers meant for its previous incarnation keep arriving
// after each restart. They must never be taken for answers to the new
// incarnation's operations (which reuse nothing: Replica.Start).
func TestGatewayCrashRestartStorm(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 40
	}
	for seed := uint64(1); seed <= uint64(runs); seed++ {
		c := swarmConfig(t, seed, wire.Quorum, wire.Quorum)
		c.RandomFaults = false
		c.WorldDef.NodesPerRegion = 1 // every client of region a uses a-0
		qc := c.Settings.(*quorum.Config)
		qc.ReplicasPerRegion = []int{1}
		c.Clients = 6
		// Give up quickly so clients keep the restarted gateway busy.
		c.ClientTimeout = 300 * time.Millisecond
		qc.ReadTimeout, qc.WriteTimeout = 250*time.Millisecond, 250*time.Millisecond
		c.Faults = nil
		for at := 20 * time.Millisecond; at < c.Duration; at += 50 * time.Millisecond {
			c.Faults = append(c.Faults, scenario.Fault{At: at, For: time.Duration(1+seed%5) * time.Millisecond, Crash: "a-0"})
		}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: %s %s: %s\nreplay: go test ./internal/protocol/quorum -run TestGatewayCrashRestartStorm -v",
				seed, res.Check.Model, res.Check.Verdict, res.Check.Detail)
		}
	}
}
