package cric_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// teeth draws swarm runs with the fast round on (or off) and one unsafe
// switch applied when unsafe is set.
func teeth(fast bool, unsafe func(*cric.Config)) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed)
		cc := c.Settings.(*cric.Config)
		cc.FastRound = fast
		if unsafe != nil {
			unsafe(cc)
		}
		return c
	}
}

// TestTeethFastRoundBelowSuperQuorum: a fast round that counts its value
// chosen below the super quorum (here at its first acceptance) lets a later
// read's quorum miss an acknowledged write; the checker must catch it, and
// the same runs with the rule kept pass.
func TestTeethFastRoundBelowSuperQuorum(t *testing.T) {
	simtest.Teeth{Seeds: 300, Unsafe: teeth(true, cric.UnsafeFastBelowSuper), Safe: teeth(true, nil)}.Run(t)
}

// TestTeethReadIgnoresUncommittedVersion: a read that returns the newest
// version whose commit bit is set, ignoring a higher version that may
// already be chosen (the writer sets commit bits after answering), returns
// stale values; the checker must catch it.
func TestTeethReadIgnoresUncommittedVersion(t *testing.T) {
	simtest.Teeth{Seeds: 300, Unsafe: teeth(false, cric.UnsafeReadCommittedOnly), Safe: teeth(false, nil)}.Run(t)
}

// TestReplay: a run is a function of its seed (same trace hash twice).
func TestReplay(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		simtest.Deterministic(t, swarmConfig(t, seed))
	}
}
