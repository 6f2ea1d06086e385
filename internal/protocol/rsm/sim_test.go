package rsm_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
)

// world is n regions of one node each, 10–40ms apart: a group of n.
func world(t testing.TB, n int) *topo.World {
	var b strings.Builder
	fmt.Fprintf(&b, "name: rsm%d\ndescription: %d regions of one node, for rsm groups\nnodes_per_region: 1\nregions:\n", n, n)
	for i := range n {
		fmt.Fprintf(&b, "  - {name: r%d, provider: sim, lat: 0, long: 0}\n", i)
	}
	b.WriteString("links:\n")
	for i := range n {
		for j := i + 1; j < n; j++ {
			fmt.Fprintf(&b, "  - {from: r%d, to: r%d, one_way_ms: %d, jitter: {dist: exponential, mean_ms: 3}}\n", i, j, 10+10*((i+j)%4))
		}
	}
	w, err := topo.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// swarmConfig draws one seeded run of a group of n: its timers, a
// snapshot every few entries (so logs are compacted, restarted members
// restore snapshots and lagging ones are sent them), a contended key
// space, a random schedule of crashes (the leader's among them: every node
// is a member), partitions and network faults.
func swarmConfig(t testing.TB, seed uint64, n int) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 7))
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(4), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
	}); err != nil {
		t.Fatal(err)
	}
	c := scenario.Config{
		Seed:     seed,
		WorldDef: world(t, n),
		Protocol: regName,
		Settings: &regSettings{
			TickInterval:    time.Duration(10+r.IntN(40)) * time.Millisecond,
			ElectionTicks:   3 + r.IntN(8),
			RequestTimeout:  time.Second,
			SnapshotEntries: 3 + r.IntN(6),
		},
		Workload:      wl,
		Clients:       2 + r.IntN(4),
		ClosedLoop:    true,
		Duration:      2*time.Second + time.Duration(r.IntN(3000))*time.Millisecond,
		ClientTimeout: 2 * time.Second,
		Clock:         scenario.Clock{MaxOffset: 50 * time.Millisecond, MaxDriftPPM: 200},
		RandomFaults:  true,
		Check:         "linearizable",
	}
	if r.IntN(2) == 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	return c
}

// TestSwarm runs seeded groups of 3 and 5 under crashes, restarts,
// partitions, loss, duplication and reordering (and faulty stores with
// torn crashes in a third of the seeds), taking a snapshot every 3 to 8
// entries; every history must be linearizable, every member's applied
// sequence a prefix of one sequence (the Apply invariant), and every
// snapshot restored what that sequence makes of the state (Restore's
// check). The runs must have taken snapshots, restarted members from
// them and installed them on lagging followers.
func TestSwarm(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("n%d", n), func(t *testing.T) {
			taken, restarts, installs := snapEvents.taken.Load(), snapEvents.restarts.Load(), snapEvents.installs.Load()
			sum := simtest.Swarm{Seeds: 30, Short: 3, Config: func(tb testing.TB, seed uint64) scenario.Config {
				return swarmConfig(tb, seed, n)
			}}.Run(t)
			for _, k := range []string{"rsm.prevote", "rsm.vote", "rsm.app", "rsm.heartbeat", "rsm.readindex", "rsm.snap"} {
				if sum.Seeds >= 5 && sum.Messages[k] == 0 {
					t.Errorf("no %s message in %d runs: the runs do not exercise it", k, sum.Seeds)
				}
			}
			taken, restarts, installs = snapEvents.taken.Load()-taken, snapEvents.restarts.Load()-restarts, snapEvents.installs.Load()-installs
			if sum.Seeds >= 5 && (taken == 0 || restarts == 0 || installs == 0) {
				t.Errorf("%d runs took %d snapshots, restored %d at restarts, installed %d from leaders; want each to happen",
					sum.Seeds, taken, restarts, installs)
			}
			t.Logf("snapshots: %d taken, %d restored at restarts, %d installed; messages: %v; errors: %v",
				taken, restarts, installs, sum.Messages, sum.Errors)
		})
	}
}

// TestRegressionSeeds replays every seed that once found a bug.
func TestRegressionSeeds(t *testing.T) {
	simtest.Regressions(t, func(tb testing.TB, seed uint64) scenario.Config { return swarmConfig(tb, seed, 3) })
}
