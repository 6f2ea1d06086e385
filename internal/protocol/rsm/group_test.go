package rsm_test

import (
	"fmt"
	"maps"
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

// TestRestartAfterCompaction: a member crashed once its group has
// compacted its log (a snapshot every 5 entries), and restarted, restores
// its latest snapshot, replays the log after it and catches up: at the end
// every member, the restarted one included, holds exactly the registers
// that the run's one command sequence makes up to its last command, and is
// near the longest. Each member is crashed in turn, the leader among them.
func TestRestartAfterCompaction(t *testing.T) {
	for crashed := range wire.NodeID(3) {
		t.Run(fmt.Sprintf("n%d", crashed), func(t *testing.T) {
			c := quiet(t, 1, 3)
			c.Settings.(*regSettings).SnapshotEntries = 5
			c.Faults = []scenario.Fault{{At: 1500 * time.Millisecond, For: 500 * time.Millisecond, Crash: fmt.Sprintf("r%d-0", crashed)}}
			res := simtest.Deterministic(t, c)
			if p := simtest.Problem(res); p != "" {
				t.Fatalf("%s\nreplay: %s", p, simtest.Replay(t, 1))
			}
			built.Lock()
			ks := built.ks
			built.Unlock()
			if ks.counts.restarts != 1 {
				t.Fatalf("%d members restored a snapshot at a restart; want 1 (n%d's)\nreplay: %s", ks.counts.restarts, crashed, simtest.Replay(t, 1))
			}
			var lasts []uint64
			for id := range wire.NodeID(3) {
				r := ks.members[id]
				want := map[string]regVal{}
				for _, i := range slices.Sorted(maps.Keys(ks.log)) {
					if i <= r.last {
						applyReg(want, ks.log[i])
					}
				}
				if !maps.Equal(r.vals, want) {
					t.Errorf("n%d holds %v after command %d; the commands up to it make %v", id, r.vals, r.last, want)
				}
				lasts = append(lasts, r.last)
			}
			if lo, hi := slices.Min(lasts), slices.Max(lasts); hi-lo > 20 {
				t.Errorf("members' last commands are at %v; want the restarted one near the others", lasts)
			}
			t.Logf("seed 1: n%d crashed at 1.5s for 0.5s; last commands %v; %d snapshots taken, %d installed; %d operations",
				crashed, lasts, ks.counts.taken, ks.counts.installs, res.Check.Ops)
		})
	}
}
