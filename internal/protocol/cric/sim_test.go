package cric_test

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

// swarmWorld is three regions with two nodes (proposers) each and storage
// services with log-normal tails.
func swarmWorld(t testing.TB) *topo.World {
	w, err := topo.Parse([]byte(`
name: cric3
description: three regions, two proposers each, storage services with tails, for seeded fault runs
nodes_per_region: 2
regions:
  - {name: a, provider: sim, lat: 0, long: 0}
  - {name: b, provider: sim, lat: 0, long: 0}
  - {name: c, provider: sim, lat: 0, long: 0}
links:
  - {from: a, to: b, one_way_ms: 20, jitter: {dist: exponential, mean_ms: 5}}
  - {from: b, to: c, one_way_ms: 35, jitter: {dist: exponential, mean_ms: 5}}
  - {from: a, to: c, one_way_ms: 60, jitter: {dist: exponential, mean_ms: 5}}
storage_services:
  - {region: a, read: {median_ms: 5, p99_ms: 40}, write: {median_ms: 10, p99_ms: 80}}
  - {region: b, read: {median_ms: 5, p99_ms: 40}, write: {median_ms: 10, p99_ms: 80}}
  - {region: c, read: {median_ms: 5, p99_ms: 40}, write: {median_ms: 10, p99_ms: 80}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// swarmConfig draws one seeded run: replicas per region (1 to 3:
// hierarchical quorums), the fast round on or off, propose assistants on
// (even seeds) or off, proposer crashes and
// partitions (RandomFaults), lost, duplicated and reordered storage
// requests and answers, storage-service outages, and several clients per
// region on one to four keys (concurrent proposers).
func swarmConfig(t testing.TB, seed uint64) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 0x637269)) // "cri"
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(4), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
	}); err != nil {
		t.Fatal(err)
	}
	c := scenario.Config{
		Seed:     seed,
		WorldDef: swarmWorld(t),
		Protocol: cric.Name,
		Settings: &cric.Config{
			ReplicasPerRegion: 1 + r.IntN(3),
			FastRound:         r.IntN(2) == 0,
			StorageTimeout:    300 * time.Millisecond,
			OpTimeout:         2 * time.Second,
			// Not drawn from r: earlier seeds' draws stay as they were.
			ProposeAssistants: seed%2 == 0,
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
	// One or two outages of a region's storage service, apart in time.
	for i, at := 0, time.Duration(r.IntN(500))*time.Millisecond; i < 1+r.IntN(2); i++ {
		d := time.Duration(50+r.IntN(500)) * time.Millisecond
		c.Faults = append(c.Faults, scenario.Fault{At: at, For: d, Outage: []string{"a", "b", "c"}[r.IntN(3)]})
		at += d + time.Duration(r.IntN(500))*time.Millisecond
	}
	return c
}

// TestSwarm runs seeded simulations (simtest.Swarm: 100 seeds in CI, -seeds
// N for more, -seed S to replay one) with proposer crashes, partitions,
// lost, duplicated and reordered storage messages, service outages and
// concurrent proposers on few keys; every history must be linearizable.
func TestSwarm(t *testing.T) {
	sum := simtest.Swarm{Seeds: 100, Short: 10, StoreFaults: -1, Config: swarmConfig}.Run(t)
	t.Logf("client errors %v; messages %v", sum.Errors, sum.Messages)
}

// TestRegressionSeeds replays every seed that once found a bug, forever.
// 1808: a write whose accept answers were lost was chosen at version j, saw
// a later version chosen with another value, and proposed itself again at
// a higher version: applied twice (rule 3a now forbids it).
func TestRegressionSeeds(t *testing.T) {
	simtest.Regressions(t, swarmConfig, 1808)
}
