package rsm_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// quiet is a run of a group of n with no fault: clients in every region
// write and read for three seconds.
func quiet(t testing.TB, seed uint64, n int) scenario.Config {
	c := swarmConfig(t, seed, n)
	c.RandomFaults, c.Net, c.StoreFaults = false, scenario.Net{}, sim.StoreFaults{}
	c.Duration = 3 * time.Second
	c.Clients = 2 * n
	return c
}

// TestElectAndApplyInOrder: groups of 3 and 5 elect a leader and every
// member applies the same commands in the same order; the history is
// linearizable and the run is deterministic (the same seed, the same
// trace).
func TestElectAndApplyInOrder(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("n%d", n), func(t *testing.T) {
			res := simtest.Deterministic(t, quiet(t, 1, n))
			if p := simtest.Problem(res); p != "" {
				t.Fatalf("%s\nreplay: %s", p, simtest.Replay(t, 1))
			}
			built.Lock()
			ks := built.ks
			built.Unlock()
			if res.Check.Ops < 50 {
				t.Fatalf("%d operations checked; want at least 50 (was a leader elected?)", res.Check.Ops)
			}
			var all []uint64 // every index a command was applied at
			for i := range ks.log {
				all = append(all, i)
			}
			slices.Sort(all)
			var lens []int
			for id := range wire.NodeID(n) {
				seq := ks.seq[id]
				if len(seq) > len(all) || !slices.Equal(seq, all[:len(seq)]) {
					t.Fatalf("n%d applied commands at %v; not a prefix of %v", id, seq, all)
				}
				lens = append(lens, len(seq))
			}
			// A quiet group: every member is at most a few commands behind
			// when the run stops.
			if lo, hi := slices.Min(lens), slices.Max(lens); hi < 50 || hi-lo > 10 {
				t.Errorf("members applied %v commands; want every member near the longest, at least 50", lens)
			}
			t.Logf("seed 1: members applied %v commands; %d operations; trace %s", lens, res.Check.Ops, res.TraceHash)
		})
	}
}
