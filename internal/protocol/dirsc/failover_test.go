package dirsc_test

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
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
// (2·E·tick, from the last heartbeat, before the crash); two request
// timeouts of a frontend (resend_interval each: one to give up on the dead
// leader, one should the next replica not yet know the new one); a
// stretched share lease (a Shared row's silent sharer); and four round
// trips of at most 100ms in world() (pre-vote, vote, the command's commit,
// the invalidation).
const failoverBound = 2*foElectionTicks*foTick + 2*foResend + foShareLease*102/100 + 4*100*time.Millisecond

// failoverConfig is a fault-free contended run (no loss, exact clocks, so
// a clock reading is the simulated time) on a three-replica directory
// spread over the regions.
func failoverConfig(t testing.TB, seed uint64, grants *[]grantAt) scenario.Config {
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
	dirsc.ProbeGrants(set, func(from wire.NodeID, at int64) { *grants = append(*grants, grantAt{from, at - sim.Epoch}) })
	return scenario.Config{
		Seed: seed, WorldDef: world(t), Protocol: dirsc.Name, Settings: set,
		Workload: wl, Clients: 4, ClosedLoop: true, Duration: 4 * time.Second, ClientTimeout: 2 * time.Second,
		Check: "auto",
	}
}

var failoverSeeds = flag.Int("failover-seeds", 20, "seeds of TestFailover")

type grantAt struct {
	from wire.NodeID
	at   int64
}

// nodeName is node n's name in world(): regions a, b, dir of two nodes.
func nodeName(n wire.NodeID) string {
	return fmt.Sprintf("%s-%d", []string{"a", "b", "dir"}[n/2], n%2)
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
// crash, and the history to stay linearizable. The crashed leader restarts
// 2s later and replays its log.
func TestFailover(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	var worst time.Duration
	var total time.Duration
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		replay := fmt.Sprintf("go test ./internal/protocol/dirsc -run '^TestFailover$' -v  # seed %d", seed)
		var first []grantAt
		if _, err := scenario.Run(failoverConfig(t, seed, &first)); err != nil {
			t.Fatal(err)
		}
		crash := int64(foCrashAt)
		leader, ok := lastBefore(first, crash)
		if !ok {
			t.Fatalf("seed %d: no grant before %s\n    replay: %s", seed, foCrashAt, replay)
		}
		var grants []grantAt
		c := failoverConfig(t, seed, &grants)
		c.Faults = []scenario.Fault{{At: foCrashAt, For: 2 * time.Second, Crash: nodeName(leader.from)}}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || res.Check.Verdict != "pass" {
			t.Fatalf("seed %d: history not linearizable after the leader's crash: %+v\n    replay: %s", seed, res.Check, replay)
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
		took := time.Duration(next.at - crash)
		worst, total = max(worst, took), total+took
		t.Logf("seed %d: leader n%d crashed at %s; n%d granted %s later; %d ops, check %s",
			seed, leader.from, foCrashAt, next.from, took, res.Ops, res.Check.Verdict)
		if took > failoverBound {
			t.Errorf("seed %d: first grant %s after the crash; bound %s\n    replay: %s", seed, took, failoverBound, replay)
		}
	}
	t.Logf("failover over %d seeds: mean %s, worst %s; bound %s (2·E·tick %s + 2·resend %s + stretched lease + 4 RTT)",
		seeds, total/time.Duration(seeds), worst, failoverBound, 2*foElectionTicks*foTick, foResend)
}
