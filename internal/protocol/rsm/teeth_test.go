package rsm_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// skipHardState is the swarm's run of a group of 3 with the group's
// HardState (term, vote, commit) never persisted, or persisted (safe).
func skipHardState(skip bool) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, 3)
		c.Settings.(*regSettings).SkipHardState = skip
		return c
	}
}

// TestTeethPersistBeforeSend: a member that sends its vote (and its
// acknowledgements) without first making its term and vote durable can,
// after a crash, vote twice in one term: two leaders of one term commit
// different commands at one index. The Apply invariant or the
// linearizability checker must reject a run.
func TestTeethPersistBeforeSend(t *testing.T) {
	seed, res := simtest.Teeth{Seeds: 300, Unsafe: skipHardState(true), Safe: skipHardState(false)}.Run(t)
	t.Logf("seed %d: %v", seed, simtest.Problem(res))
}

// compactFirst is the swarm's run of a group of 3 with faulty stores and
// torn crashes in every seed, deleting compacted entries before storing
// the snapshot that covers them (unsafe) or after (safe).
func compactFirst(unsafe bool) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		c := swarmConfig(tb, seed, 3)
		c.Settings.(*regSettings).CompactFirst = unsafe
		c.StoreFaults = simtest.DrawStoreFaults(seed, 1, 0.05, c.Duration)
		return c
	}
}

// TestTeethSnapshotBeforeCompaction: a member that deletes compacted
// entries before it stores the snapshot covering them loses committed
// entries to a torn crash between the two (a write failing midway
// fail-stops it with a prefix of its writes kept); restarted, its log has
// a hole no snapshot covers. The load's invariant, or the checker, must
// reject a run.
func TestTeethSnapshotBeforeCompaction(t *testing.T) {
	seed, res := simtest.Teeth{Seeds: 100, Unsafe: compactFirst(true), Safe: compactFirst(false)}.Run(t)
	t.Logf("seed %d: %v", seed, simtest.Problem(res))
}
