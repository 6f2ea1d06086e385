package dirsc_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// strayGrants records grants sent by a node outside the row's directory
// group, by seed.
type strayGrants struct {
	mu    sync.Mutex
	seeds map[uint64]string
	n     int
	// sharded counts the grants of sharded rows.
	sharded int
}

// shardedConfig is config with the directory sharded (directory_shards):
// region a's rows ("a/...") and region b's ("b/...") each have a group of
// one to all of their region's nodes (config draws 1–3 a region); the shared rows (and region dir's)
// stay with the default directory, placed as config draws it. 70% of each
// client's operations are on its region's rows (region_keys). Every grant
// must come from a replica of its row's group.
func (s *strayGrants) config(t testing.TB, seed uint64) scenario.Config {
	c := config(t, seed)
	r := rand.New(rand.NewPCG(seed, 0x73686172)) // "shar"
	set := *c.Settings.(*dirsc.Config)
	n := c.WorldDef.NodesPerRegion
	set.DirectoryShards = []dirgroup.Shard{
		{Prefix: "a/", Region: "a", Replicas: 1 + r.IntN(n)},
		{Prefix: "b/", Region: "b", Replicas: 1 + r.IntN(n)},
	}
	c.RegionKeys = 0.7
	ks, err := dirsc.NewKeyspace(topo.NewTopology(c.WorldDef), set)
	if err != nil {
		t.Fatal(err)
	}
	dirsc.ProbeGrantKeys(&set, func(from wire.NodeID, key string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !slices.Equal(ks.DirectoryOf(key), ks.Directories()) {
			s.sharded++
		}
		if !slices.Contains(ks.DirectoryOf(key), from) {
			s.n++
			if _, ok := s.seeds[seed]; !ok {
				s.seeds[seed] = key
			}
		}
	})
	c.Settings = &set
	return c
}

// TestSwarmSharded: seeded runs as TestSwarm's, with the directory split
// into three groups (the default and one per client region): every history
// must be linearizable, and every grant of a row must come from its own
// group (a sharded row's directory traffic stays in its shard).
func TestSwarmSharded(t *testing.T) {
	s := &strayGrants{seeds: map[uint64]string{}}
	sum := simtest.Swarm{Seeds: 200, Short: 20, Config: s.config}.Run(t)
	m := sum.Messages
	t.Logf("messages: request %d, busy %d, grant %d, inval %d, sync %d", m["sc.request"], m["sc.busy"], m["sc.grant"], m["sc.inval"], m["sc.sync"])
	if s.n > 0 {
		t.Errorf("%d grants from outside their row's directory group (seed: first such row) %v", s.n, s.seeds)
	}
	if sum.Seeds >= 20 && (m["sc.inval"] == 0 || s.sharded == 0 || s.sharded == m["sc.grant"]) {
		t.Fatalf("the runs did not exercise invalidations (%d) and grants of both sharded (%d) and shared rows (of %d)", m["sc.inval"], s.sharded, m["sc.grant"])
	}
	t.Logf("grants of sharded rows: %d", s.sharded)
}
