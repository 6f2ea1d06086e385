package dirrc_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirrc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// Frontend failover settings: region a's frontend group (three members,
// swarmWorld(3)), and the directory's three replicas all in region c, so
// the crash of a member of region a never takes a directory replica.
const (
	feNodes         = 3
	feTick          = 10 * time.Millisecond
	feElectionTicks = 10
)

// feBound is the stated bound on the time from the crash of region a's
// frontend leader to the region's next answer from another member. The
// survivors elect a leader within 2·E·tick, twice should their votes
// split; the gateways then answer their requests out to the dead leader
// "timeout" (dirgroup.Gateway.Settle), and each client releases (refused:
// its hold was the dead leader's, rule F3) and acquires again. The new
// leader's fe_acquire, of a later term, supersedes the region's old place
// at the directory (rule 3), which then grants it once the regions queued
// ahead of it have released: each holds the row for a grant, a sync from
// the previous holder and one access (four round trips of at most 150ms
// in swarmWorld), and the new leader needs one more directory round trip
// and a commit in its region. Resends after a lost answer add
// resend_interval + heartbeat_interval.
const feBound = 2*2*feElectionTicks*feTick + foResend + foHeartbeat + 2*4*150*time.Millisecond + 2*150*time.Millisecond

// feNodeName is node n's name in swarmWorld(feNodes).
func feNodeName(n wire.NodeID) string {
	return fmt.Sprintf("%s-%d", []string{"a", "b", "c"}[int(n)/feNodes], int(n)%feNodes)
}

// feConfig is failoverConfig with the directory's replicas all in region
// c, one client on each node, the frontend groups' timers set and region
// a's successful answers recorded (region a's nodes are 0..feNodes-1).
func feConfig(t testing.TB, seed uint64, keys int, served *[]simtest.Event) scenario.Config {
	var grants []simtest.Event
	c := failoverConfig(t, seed, &grants)
	set := c.Settings.(*dirrc.Config)
	set.DirectoryRegions = []string{"c"}
	set.Frontends = dirgroup.Frontends{FrontendTick: feTick, FrontendElectionTicks: feElectionTicks}
	var mu sync.Mutex
	dirrc.ProbeEvents(set, func(from wire.NodeID, at int64, event string) {
		if event == "serve" && from < feNodes {
			mu.Lock()
			*served = append(*served, simtest.Event{From: from, At: at - sim.Epoch})
			mu.Unlock()
		}
	})
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "f", "record_count": keys, "operation_count": 1000,
		"read_proportion": 0.5, "read_modify_write_proportion": 0.5, "request_distribution": "uniform"}); err != nil {
		t.Fatal(err)
	}
	c.Workload, c.Clients = wl, 3*feNodes
	return c
}

// TestFrontendFailover kills region a's frontend leader mid-run (the member
// that answered its region's last request before the crash, found by a
// first run of the same seed) and requires another member of region a to
// answer a request within feBound of the crash, and the whole history to
// pass the release-consistency checker (doc.go, rules F1–F6). The crashed
// member restarts 2s later and replays its group's log.
func TestFrontendFailover(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	mean, worst := simtest.Failover{
		Package: "./internal/protocol/dirrc", Seeds: seeds, CrashAt: foCrashAt, Down: 2 * time.Second, Bound: feBound,
		MinAfter: 5,
		Config:   func(seed uint64, served *[]simtest.Event) scenario.Config { return feConfig(t, seed, 16, served) },
		NodeName: feNodeName,
	}.Run(t)
	t.Logf("frontend failover over %d seeds: mean %s, worst %s; bound %s", seeds, mean, worst, feBound)
}

// TestFrontendLoss loses region a's frontend leader for good at 1.5s (its
// disk gone: it never restarts; before frontends were replicated, the
// region's copies written under its holds were only there). Every write
// whose release returned OK before the loss must survive: each key's last
// such write must be read, or overwritten, by an operation that succeeds
// after the loss; and the history must pass the release-consistency
// checker, which requires a read in a later hold to see it.
func TestFrontendLoss(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	simtest.Loss{
		Package: "./internal/protocol/dirrc", Seeds: seeds, CrashAt: foCrashAt,
		Config:   func(seed uint64, served *[]simtest.Event) scenario.Config { return feConfig(t, seed, 4, served) },
		NodeName: feNodeName,
		Durable: func(h check.History, crash int64) map[string]check.Op {
			// Each key's last write released OK before the crash: its
			// client's next release of the key returned OK before it.
			last := map[string]check.Op{}
			ops := slices.Clone(h.Ops)
			slices.SortStableFunc(ops, func(a, b check.Op) int { return int(a.Call - b.Call) })
			for j, w := range ops {
				if w.Kind != check.Write || w.Outcome != check.OK {
					continue
				}
				for _, o := range ops[j+1:] {
					if o.Client != w.Client || o.Key != w.Key || o.Kind != check.Release {
						continue
					}
					if o.Outcome == check.OK && o.Return < crash && w.Return > last[w.Key].Return {
						last[w.Key] = w
					}
					break
				}
			}
			return last
		},
	}.Run(t)
}
