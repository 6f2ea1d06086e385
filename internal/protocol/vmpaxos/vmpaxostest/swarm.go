// Package vmpaxostest is the seeded swarm both of CRIC's baselines
// (fastpaxos, ppaxos) are checked with.
package vmpaxostest

import (
	"math/rand/v2"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
)

// world is three regions with two nodes each: the first one or two of a
// region run acceptors, and every node is a gateway.
const world = `
name: vm3
description: three regions, two nodes each, for seeded fault runs of CRIC's baselines
nodes_per_region: 2
regions:
  - {name: a, provider: sim, lat: 0, long: 0}
  - {name: b, provider: sim, lat: 0, long: 0}
  - {name: c, provider: sim, lat: 0, long: 0}
links:
  - {from: a, to: b, one_way_ms: 20, jitter: {dist: exponential, mean_ms: 5}}
  - {from: b, to: c, one_way_ms: 35, jitter: {dist: exponential, mean_ms: 5}}
  - {from: a, to: c, one_way_ms: 60, jitter: {dist: exponential, mean_ms: 5}}
`

// World is the swarm's world: three regions with two nodes each.
func World(t testing.TB) *topo.World {
	w, err := topo.Parse([]byte(world))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Swarm returns the generator of protocol's seeded runs: one or two
// acceptors per region (hierarchical quorums), the fast round on or off,
// node crashes (acceptors and proposers) and partitions (RandomFaults),
// lost, duplicated and reordered messages, and several clients per region
// on one to eight keys (concurrent proposers).
func Swarm(protocol string) simtest.Generator {
	return func(t testing.TB, seed uint64) scenario.Config {
		w := World(t)
		r := rand.New(rand.NewPCG(seed, 0x766d70)) // "vmp"
		var wl yaml.Node
		if err := wl.Encode(map[string]any{
			"preset": "a", "record_count": 1 + r.IntN(8), "operation_count": 1000,
			"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
		}); err != nil {
			t.Fatal(err)
		}
		c := scenario.Config{
			Seed:     seed,
			WorldDef: w,
			Protocol: protocol,
			Settings: &cric.Config{
				ReplicasPerRegion: 1 + r.IntN(2),
				FastRound:         r.IntN(2) == 0,
				StorageTimeout:    300 * time.Millisecond,
				OpTimeout:         2 * time.Second,
			},
			Workload:      wl,
			Clients:       3 + r.IntN(6),
			ClosedLoop:    true,
			Duration:      time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
			ClientTimeout: 3 * time.Second,
			RandomFaults:  true,
			Check:         "linearizable",
		}
		if r.IntN(3) > 0 {
			c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.1, Reorder: r.Float64() * 0.1}
		}
		return c
	}
}
