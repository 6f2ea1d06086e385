package dirsc_test

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// Failover test settings: the directory group's tick and election timeout
// (E ticks: a follower campaigns after [E, 2E) ticks of silence).
const (
	foTick          = 20 * time.Millisecond
	foElectionTicks = 10
	foResend        = 200 * time.Millisecond
	foCrashAt       = 1500 * time.Millisecond
	foShareLease    = 200 * time.Millisecond
)

// failoverBound is the stated bound on the time from the leader's crash to
// the first grant by another replica: the longest election timeout
// (2·E·tick, from the last heartbeat, before the crash); one split vote
// (the next timeout, at most 3·E·tick: rsm doc.go, "Determinism"; a
// second split is rarer, about one seed in 100 here); two request
// timeouts of a frontend (resend_interval each: one to give up on the dead
// leader, one should the next replica not yet know the new one); a
// stretched share lease (a Shared row's silent sharer); and four round
// trips of at most 100ms in world() (pre-vote, vote, the command's commit,
// the invalidation).
const failoverBound = 2*foElectionTicks*foTick + 3*foElectionTicks*foTick + 2*foResend + foShareLease*102/100 + 4*100*time.Millisecond

// failoverConfig is a fault-free contended run (no loss, exact clocks, so
// a clock reading is the simulated time) on a three-replica directory
// spread over the regions.
func failoverConfig(t testing.TB, seed uint64, grants *[]simtest.Event) scenario.Config {
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "a", "record_count": 4, "read_proportion": 0.5,
		"update_proportion": 0.5, "request_distribution": "uniform"}); err != nil {
		t.Fatal(err)
	}
	set := &dirsc.Config{
		Placement: dirgroup.Placement{DirectoryReplicas: 3, DirectoryRegions: []string{"dir", "a", "b"},
			DirectoryTick: foTick, DirectoryElectionTicks: foElectionTicks},
		ShareLease: foShareLease, MaxDriftPPM: 100,
		ResendInterval: foResend, OpTimeout: time.Second,
	}
	dirsc.ProbeGrants(set, func(from wire.NodeID, at int64) {
		*grants = append(*grants, simtest.Event{From: from, At: at - sim.Epoch})
	})
	return scenario.Config{
		Seed: seed, WorldDef: world(t, foNodes), Protocol: dirsc.Name, Settings: set,
		Workload: wl, Clients: 4, ClosedLoop: true, Duration: 4 * time.Second, ClientTimeout: 2 * time.Second,
		Check: "auto",
	}
}

var failoverSeeds = flag.Int("failover-seeds", 20, "seeds of TestFailover")

// foNodes is the failover tests' nodes per region: a region's frontend
// group of three survives the loss of one member (the directory's leader
// is the second node of its region).
const foNodes = 3

// nodeName is node n's name in world(foNodes): regions a, b, dir.
func nodeName(n wire.NodeID) string {
	return fmt.Sprintf("%s-%d", []string{"a", "b", "dir"}[n/foNodes], n%foNodes)
}

// TestFailover kills the directory's leader mid-run (the replica that sent
// the last grant before the crash, found by a first run of the same seed)
// and requires another replica's first grant within failoverBound of the
// crash, and the history to stay linearizable. The crashed leader restarts
// 2s later and replays its log.
func TestFailover(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	mean, worst := simtest.Failover{
		Package: "./internal/protocol/dirsc", Seeds: seeds, CrashAt: foCrashAt, Down: 2 * time.Second, Bound: failoverBound,
		Config:   func(seed uint64, grants *[]simtest.Event) scenario.Config { return failoverConfig(t, seed, grants) },
		NodeName: nodeName,
	}.Run(t)
	t.Logf("failover over %d seeds: mean %s, worst %s; bound %s (2·E·tick %s + a split vote %s + 2·resend %s + stretched lease + 4 RTT)",
		seeds, mean, worst, failoverBound, 2*foElectionTicks*foTick, 3*foElectionTicks*foTick, foResend)
}
