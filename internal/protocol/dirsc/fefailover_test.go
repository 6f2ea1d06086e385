package dirsc_test

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// Frontend failover settings: region a's frontend group (three members,
// world(foNodes)) and its clients' timeouts.
const (
	feTick          = 10 * time.Millisecond
	feElectionTicks = 10
	feOpTimeout     = time.Second
)

// feBound is the stated bound on the time from the crash of region a's
// frontend leader to the region's next answer from another member: an
// operation in flight at the dead leader is answered "timeout" by its
// gateway after op_timeout + 2·resend_interval, so its client (closed
// loop) may wait that long before it sends again; meanwhile the two
// survivors elect a leader within 2·E·tick, twice should their votes
// split; then the new leader, which inherits no Shared lease (rule F11),
// may need the directory again: four round trips of at most 100ms in
// world() (request, invalidation, ack, grant).
const feBound = feOpTimeout + 2*foResend + 2*2*feElectionTicks*feTick + 4*100*time.Millisecond

// feConfig is failoverConfig with region a's served operations recorded
// (region a's nodes are 0..foNodes-1) and the frontend groups' timers
// set.
func feConfig(t testing.TB, seed uint64, keys int, served *[]simtest.Event) scenario.Config {
	var grants []simtest.Event
	c := failoverConfig(t, seed, &grants)
	set := c.Settings.(*dirsc.Config)
	set.FrontendTick, set.FrontendElectionTicks, set.OpTimeout = feTick, feElectionTicks, feOpTimeout
	dirsc.ProbeServes(set, func(from wire.NodeID, at int64) {
		if from < foNodes {
			*served = append(*served, simtest.Event{From: from, At: at - sim.Epoch})
		}
	})
	c.Clients = 9 // three a region, one on each node
	// TestFrontendFailover uses sixteen keys rather than four: with four,
	// rows thrash between the regions and a region backed off after many
	// busy answers may wait for a row longer than any failover (the
	// thesis's drawback, A.3; no fairness is promised), which it is not
	// about. TestFrontendLoss uses four, so each key is used again soon
	// after the loss.
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "a", "record_count": keys, "read_proportion": 0.5,
		"update_proportion": 0.5, "request_distribution": "uniform"}); err != nil {
		t.Fatal(err)
	}
	c.Workload = wl
	return c
}

// TestFrontendFailover kills region a's frontend leader mid-run (the member
// that answered its region's last operation before the crash, found by a
// first run of the same seed) and requires another member of region a to
// answer an operation within feBound of the crash, and the whole history
// to stay linearizable (doc.go, rules F8–F12). The crashed member restarts
// 2s later and replays its group's log.
func TestFrontendFailover(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	mean, worst := simtest.Failover{
		Package: "./internal/protocol/dirsc", Seeds: seeds, CrashAt: foCrashAt, Down: 2 * time.Second, Bound: feBound,
		Config:   func(seed uint64, served *[]simtest.Event) scenario.Config { return feConfig(t, seed, 16, served) },
		NodeName: nodeName,
	}.Run(t)
	t.Logf("frontend failover over %d seeds: mean %s, worst %s; bound %s", seeds, mean, worst, feBound)
}

// TestFrontendLoss loses region a's frontend leader for good at 1.5s (its
// disk gone: it never restarts; rows region a held Modified had their only
// current copy there before frontends were replicated). Every write
// acknowledged before the loss must survive: each key's last acknowledged
// write before the crash must be read, or overwritten, afterwards; and
// the history must be linearizable.
func TestFrontendLoss(t *testing.T) {
	seeds := *failoverSeeds
	if testing.Short() {
		seeds = 5
	}
	simtest.Loss{
		Package: "./internal/protocol/dirsc", Seeds: seeds, CrashAt: foCrashAt,
		Config:   func(seed uint64, served *[]simtest.Event) scenario.Config { return feConfig(t, seed, 4, served) },
		NodeName: nodeName,
		Durable: func(h check.History, crash int64) map[string]check.Op {
			last := map[string]check.Op{} // each key's last write acknowledged before the crash
			for _, op := range h.Ops {
				if op.Kind == check.Write && op.Outcome == check.OK && op.Return < crash && op.Return > last[op.Key].Return {
					last[op.Key] = op
				}
			}
			return last
		},
	}.Run(t)
}
