package quorum_test

import (
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestTeethWeakLevelsAreNotLinearizable: ONE/ONE claims only valid reads; the
// linearizability checker must catch it returning stale values.
func TestTeethWeakLevelsAreNotLinearizable(t *testing.T) {
	simtest.Teeth{Seeds: 200, Unsafe: func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, wire.One, wire.One)
		c.Check = "linearizable"
		return c
	}}.Run(t)
}

// skewed is QUORUM/QUORUM with node b-0's clock off by skew and no other
// fault, checked for linearizability (auto would claim only valid reads
// beyond the bound).
func skewed(skew time.Duration) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, wire.Quorum, wire.Quorum)
		c.RandomFaults = false
		c.Net = scenario.Net{}
		c.Clock = scenario.Clock{}
		c.Faults = []scenario.Fault{{Skew: &scenario.Skew{Node: "b-0", Offset: skew}}}
		c.Check = "linearizable"
		return c
	}
}

// TestTeethSkewBeyondBound: QUORUM/QUORUM is linearizable only while clocks
// stay within MaxClockOffset of true time. With one clock far behind, its
// writes are stamped older than writes that completed before them and are
// lost (last writer wins), which the checker must catch; the same runs
// within the bound (1ms, bound 2ms) pass.
func TestTeethSkewBeyondBound(t *testing.T) {
	simtest.Teeth{Seeds: 200, Unsafe: skewed(-300 * time.Millisecond), Safe: skewed(-time.Millisecond)}.Run(t)
}

// TestTeethRegularNeedsWriteOverlap: when reads need not overlap writes
// (ONE/ONE), the regular-register checker catches reads that miss a write
// completed before they began.
func TestTeethRegularNeedsWriteOverlap(t *testing.T) {
	simtest.Teeth{Seeds: 300, Unsafe: func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, wire.One, wire.One)
		c.Check = "regular"
		return c
	}}.Run(t)
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

// TestTeethCeiling: a write stamped above the replica's ceiling skips the
// read of its key's record (doc.go, "Writes without a read"). If the
// ceiling stayed at its start instead of rising with every version stored,
// a write arriving after a newer one of its key would replace it, and the
// checker must catch the lost write; the same runs with the ceiling kept
// pass.
func TestTeethCeiling(t *testing.T) {
	gen := func(unsafe bool) simtest.Generator {
		return func(tb testing.TB, seed uint64) scenario.Config {
			c := swarmConfig(tb, seed, wire.Quorum, wire.Quorum)
			c.Check = "linearizable"
			if unsafe {
				quorum.UnsafeBlindBelowCeiling(c.Settings.(*quorum.Config))
			}
			return c
		}
	}
	simtest.Teeth{Seeds: 200, Unsafe: gen(true), Safe: gen(false)}.Run(t)
}
