package dirrc_test

import (
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirrc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
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

type grantAt struct {
	from wire.NodeID
	at   int64
}

// failoverConfig is a fault-free contended run (no loss, exact clocks, so
// a clock reading is the simulated time) on a three-replica directory
// spread over the regions.
func failoverConfig(t testing.TB, seed uint64, grants *[]grantAt) scenario.Config {
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
			*grants = append(*grants, grantAt{from, at - sim.Epoch})
			mu.Unlock()
		}
	})
	return scenario.Config{
		Seed: seed, WorldDef: swarmWorld(t), Protocol: dirrc.Name, Settings: set,
		Workload: wl, Clients: 4, ClosedLoop: true, Duration: 4 * time.Second, ClientTimeout: 3 * time.Second,
		Check: "auto",
	}
}

// nodeName is node n's name in swarmWorld(): regions a, b, c of two nodes.
func nodeName(n wire.NodeID) string {
	return fmt.Sprintf("%s-%d", []string{"a", "b", "c"}[n/2], n%2)
}

// lastBefore is the last grant before t.
func lastBefore(gs []grantAt, t int64) (grantAt, bool) {
	i := slices.IndexFunc(gs, func(g grantAt) bool { return g.at >= t })
	if i < 0 {
		i = len(gs)
	}
	if i == 0 {
		return grantAt{}, false
	}
	return gs[i-1], true
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
	var worst, total time.Duration
	ran := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		replay := fmt.Sprintf("go test ./internal/protocol/dirrc -run '^TestFailover$' -v  # seed %d", seed)
		var first []grantAt
		if _, err := scenario.Run(failoverConfig(t, seed, &first)); err != nil {
			t.Fatal(err)
		}
		crash := int64(foCrashAt)
		leader, ok := lastBefore(first, crash)
		if !ok {
			t.Logf("seed %d: no grant before %s (no leader to kill): skipped", seed, foCrashAt)
			continue
		}
		var grants []grantAt
		c := failoverConfig(t, seed, &grants)
		c.Faults = []scenario.Fault{{At: foCrashAt, For: 2 * time.Second, Crash: nodeName(leader.from)}}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: history not release consistent after the leader's crash: %+v\n    replay: %s", seed, res.Check, replay)
		}
		if again, _ := lastBefore(grants, crash); again != leader {
			t.Fatalf("seed %d: the run with the crash differs before it: last grant %+v, want %+v\n    replay: %s", seed, again, leader, replay)
		}
		i := slices.IndexFunc(grants, func(g grantAt) bool { return g.at >= crash })
		if i < 0 {
			t.Fatalf("seed %d: no grant after the leader n%d crashed at %s\n    replay: %s", seed, leader.from, foCrashAt, replay)
		}
		next := grants[i]
		if next.from == leader.from {
			t.Fatalf("seed %d: crashed leader n%d granted at %s\n    replay: %s", seed, leader.from, time.Duration(next.at), replay)
		}
		after := len(grants) - i
		if after < 5 {
			t.Errorf("seed %d: only %d grants after the crash: acquires did not resume\n    replay: %s", seed, after, replay)
		}
		took := time.Duration(next.at - crash)
		worst, total, ran = max(worst, took), total+took, ran+1
		t.Logf("seed %d: leader n%d crashed at %s; n%d granted %s later; %d grants after; %d ops, check %s",
			seed, leader.from, foCrashAt, next.from, took, after, res.Ops, res.Check.Verdict)
		if took > failoverBound {
			t.Errorf("seed %d: first grant %s after the crash; bound %s\n    replay: %s", seed, took, failoverBound, replay)
		}
	}
	if ran < seeds/2 {
		t.Fatalf("only %d of %d seeds had a leader to kill", ran, seeds)
	}
	t.Logf("failover over %d seeds: mean %s, worst %s; bound %s", ran, total/time.Duration(ran), worst, failoverBound)
}
