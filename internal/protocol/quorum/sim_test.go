package quorum_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// swarmWorld is a small three-region world; 2 nodes per region.
func swarmWorld(t testing.TB) *topo.World {
	w, err := topo.Parse([]byte(`
name: swarm3
description: three regions, two nodes each, for seeded fault runs
nodes_per_region: 2
regions:
  - {name: a, provider: sim, lat: 0, long: 0}
  - {name: b, provider: sim, lat: 0, long: 0}
  - {name: c, provider: sim, lat: 0, long: 0}
links:
  - {from: a, to: b, one_way_ms: 20, jitter: {dist: exponential, mean_ms: 5}}
  - {from: b, to: c, one_way_ms: 35, jitter: {dist: exponential, mean_ms: 5}}
  - {from: a, to: c, one_way_ms: 60, jitter: {dist: exponential, mean_ms: 5}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// swarmConfig draws one seeded run: the replica count, clock errors within
// the bound the protocol assumes, a fault schedule, and a small contended
// key space (swarm testing: each seed its own shape).
func swarmConfig(t testing.TB, seed uint64, read, write wire.Level) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 42))
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(4), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
	}); err != nil {
		t.Fatal(err)
	}
	const offset = quorum.DefaultMaxClockOffset
	c := scenario.Config{
		Seed:     seed,
		WorldDef: swarmWorld(t),
		Protocol: "quorum",
		Settings: &quorum.Config{
			ReplicasPerRegion: []int{1 + r.IntN(2)},
			Read:              read, Write: write,
			MaxClockOffset: offset,
			ReadTimeout:    time.Second, WriteTimeout: time.Second,
			// Clock order (auto's choice on this world too, except for
			// ONE reads and LOCAL_ONE reads a write level covers, whose
			// query is free), which TestTeethSkewBeyondBound needs;
			// queryOrdered switches.
			WriteOrder: quorum.WriteOrderClock,
		},
		Workload:      wl,
		Clients:       3 + r.IntN(4),
		ClosedLoop:    true,
		Duration:      time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
		ClientTimeout: 2 * time.Second,
		// Within the bound: |offset + drift·t| ≤ δ over the run.
		Clock:        scenario.Clock{MaxOffset: offset / 2, MaxDriftPPM: 100},
		RandomFaults: true,
		Check:        "auto",
	}
	if r.IntN(2) == 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	return c
}

// TestSwarm runs seeded simulations for every read/write level
// combination (simtest.Swarm: 8 seeds each in CI, 512 in all; -seeds N,
// -soak), with crashes, partitions, message loss, duplication and
// reordering, clock offsets within the bound, and faulty stores in a third
// of the seeds; each history is checked against the guarantee GuaranteeOf
// claims for the combination (doc.go).
func TestSwarm(t *testing.T) {
	faulty, stops := 0, 0
	swarmEveryLevel(t, 8, swarmConfig, func(sum simtest.Summary) {
		faulty, stops = faulty+sum.FaultySeeds, stops+sum.FailStops
	})
	if faulty >= 50 && stops == 0 {
		t.Errorf("no replica fail-stopped in %d runs with faulty stores: the runs do not reach storage failure", faulty)
	}
}

// swarmEveryLevel runs a swarm of seeds seeds (1 with -short) of gen for
// every read/write level combination, each a subtest, and gives each
// swarm's summary to done (if set).
func swarmEveryLevel(t *testing.T, seeds int, gen func(tb testing.TB, seed uint64, read, write wire.Level) scenario.Config, done func(simtest.Summary)) {
	for _, r := range wire.Levels() {
		for _, w := range wire.Levels() {
			t.Run(r.String()+"-"+w.String(), func(t *testing.T) {
				sum := simtest.Swarm{Seeds: seeds, Short: 1, Config: func(tb testing.TB, seed uint64) scenario.Config {
					return gen(tb, seed, r, w)
				}}.Run(t)
				if done != nil {
					done(sum)
				}
			})
		}
	}
}

// TestSwarmPublishedReads: the swarm's runs at every level combination
// with the simulator answering reads from the replies fast-path reads
// publish (doc.go, "Published reads"), as the real server does — with
// clock order and the 2δ wait (swarmConfig), the measured commit wait
// (whose younger versions must not be published) and query order; each
// history must still pass its level's checker, and reads must have been
// answered so.
func TestSwarmPublishedReads(t *testing.T) {
	for _, g := range []struct {
		name string
		gen  func(tb testing.TB, seed uint64, read, write wire.Level) scenario.Config
		// min is the least share of operations answered so: the
		// measured wait's runs publish only versions older than 2δ,
		// and their keys are rewritten more often than that.
		min float64
	}{
		{"clock", swarmConfig, 0.05},
		{"measured", func(tb testing.TB, seed uint64, r, w wire.Level) scenario.Config { return measured(tb, seed, r, w, 0) }, 0.0005},
		{"query", func(tb testing.TB, seed uint64, r, w wire.Level) scenario.Config {
			return queryOrdered(tb, seed, r, w, false)
		}, 0.05},
	} {
		t.Run(g.name, func(t *testing.T) {
			var served uint64
			ops := 0
			swarmEveryLevel(t, 2, func(tb testing.TB, seed uint64, read, write wire.Level) scenario.Config {
				c := g.gen(tb, seed, read, write)
				c.PublishReads = true
				return c
			}, func(sum simtest.Summary) { served, ops = served+sum.PublishedReads, ops+sum.Ops })
			t.Logf("%d reads answered from published replies, %d operations checked", served, ops)
			if float64(served) < g.min*float64(ops) || served == 0 {
				t.Fatalf("only %d of %d operations were reads answered from published replies", served, ops)
			}
		})
	}
}
