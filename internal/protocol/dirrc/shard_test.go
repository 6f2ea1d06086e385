package dirrc_test

import (
	"math/rand/v2"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/dirrc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// shardedConfig is swarmConfig with the directory sharded
// (directory_shards): region a's rows ("a/...") and region b's ("b/...")
// each have a group of one or two replicas in their region; the shared
// rows (and region c's) stay with the default directory, placed as
// swarmConfig draws it (a node may be in two groups). 70% of each
// client's operations are on its region's rows (region_keys).
func shardedConfig(t testing.TB, seed uint64) scenario.Config {
	c := swarmConfig(t, seed)
	r := rand.New(rand.NewPCG(seed, 0x73686172)) // "shar"
	set := *c.Settings.(*dirrc.Config)
	set.DirectoryShards = []dirgroup.Shard{
		{Prefix: "a/", Region: "a", Replicas: 1 + r.IntN(2)},
		{Prefix: "b/", Region: "b", Replicas: 1 + r.IntN(2)},
	}
	c.Settings, c.RegionKeys = &set, 0.7
	return c
}

// TestSwarmSharded: seeded runs as TestSwarm's, with the directory split
// into three groups (the default and one per client region); each history
// must be release consistent. testdata/sharded.txt shows a sharded row's
// fe_acquire, heartbeats and release going to its group alone.
func TestSwarmSharded(t *testing.T) {
	sum := simtest.Swarm{Seeds: 200, Short: 20, Config: shardedConfig}.Run(t)
	m := sum.Messages
	t.Logf("messages: fe_acquire %d, grant %d, heartbeat %d, sync %d", m["rc.fe_acquire"], m["rc.grant"], m["rc.heartbeat"], m["rc.sync"])
}

// TestShardedRegressionSeeds replays every seed of TestSwarmSharded that
// once found a bug.
func TestShardedRegressionSeeds(t *testing.T) {
	simtest.Regressions(t, shardedConfig,
		223, // a duplicated Fwd of a put reached the frontend while the same client held the row again, and wrote the old value over a newer one (fix: the frontend drops a Fwd it took already)
	)
}
