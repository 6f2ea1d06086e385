package dirrc_test

import (
	"flag"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirrc"
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
	foResend        = 100 * time.Millisecond
	foHeartbeat     = 50 * time.Millisecond
	foHoldLease     = 500 * time.Millisecond
	foCrashAt       = 1500 * time.Millisecond
)

// failoverBound is the stated bound on the time from the leader's crash to
// the first grant by another replica: the longest election timeout
// (2·E·tick); a frontend's move to the next replica after resend_interval
// + heartbeat_interval of silence, twice (the next may not be the leader);
// the new leader's wait before forcing out a head whose holder it cannot
// hear (hold_lease + its step-down grace, (2E+1)·tick: rule R4), should
// the crash catch a release in flight; and four round trips of at most
// 150ms in the world (pre-vote, vote, the command's commit, the grant).
const failoverBound = 2*foElectionTicks*foTick + 2*(foResend+foHeartbeat) + foHoldLease + (2*foElectionTicks+1)*foTick + 4*150*time.Millisecond

var failoverSeeds = flag.Int("failover-seeds", 20, "seeds of TestFailover")

// failoverConfig is a fault-free contended run (no loss, exact clocks, so
// a clock reading is the simulated time) on a three-replica directory
// spread over the regions, three nodes a region: the directory replica
// killed is a member of its region's frontend group, and two of three
// keep the region's frontend up (a group of two tolerates no loss: the
// region's rows would wait for the restart).
func failoverConfig(t testing.TB, seed uint64, grants *[]simtest.Event) scenario.Config {
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "f", "record_count": 2, "operation_count": 1000,
		"read_proportion": 0.5, "read_modify_write_proportion": 0.5, "request_distribution": "uniform"}); err != nil {
		t.Fatal(err)
	}
	set := &dirrc.Config{
		Placement: dirgroup.Placement{DirectoryReplicas: 3, DirectoryRegions: []string{"c", "a", "b"},
			DirectoryTick: foTick, DirectoryElectionTicks: foElectionTicks},
		HoldLease: foHoldLease, HeartbeatInterval: foHeartbeat, ResendInterval: foResend,
		HoldTimeout: time.Second, AcquireTimeout: 2 * time.Second,
	}
	var mu sync.Mutex
	dirrc.ProbeEvents(set, func(from wire.NodeID, at int64, event string) {
		if event == "grant" {
			mu.Lock()
			*grants = append(*grants, simtest.Event{From: from, At: at - sim.Epoch})
			mu.Unlock()
		}
	})
	return scenario.Config{
		Seed: seed, WorldDef: swarmWorld(t, feNodes), Protocol: dirrc.Name, Settings: set,
		Workload: wl, Clients: 4, ClosedLoop: true, Duration: 4 * time.Second, ClientTimeout: 3 * time.Second,
		Check: "auto",
	}
}

// TestFailover kills the directory's leader mid-run (the replica that sent
// the last grant before the crash, found by a first run of the same seed)
// and requires another replica's first grant within failoverBound of the
// crash, acquires to go on after it, and the history to pass the
// release-consistency checker. The crashed leader restarts 2s later and
// replays its log.
func TestFailover(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	mean, worst := simtest.Failover{
		Package: "./internal/protocol/dirrc", Seeds: seeds, CrashAt: foCrashAt, Down: 2 * time.Second, Bound: failoverBound,
		MinAfter: 5, SkipLeaderless: true,
		Config:   func(seed uint64, grants *[]simtest.Event) scenario.Config { return failoverConfig(t, seed, grants) },
		NodeName: feNodeName,
	}.Run(t)
	t.Logf("failover: mean %s, worst %s; bound %s", mean, worst, failoverBound)
}
