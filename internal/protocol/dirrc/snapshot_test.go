package dirrc_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirrc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// snapshotting is TestSwarm's run with the directory group taking a
// snapshot of its rows every 2 to 6 commands.
func snapshotting(tb testing.TB, seed uint64) scenario.Config {
	c := swarmConfig(tb, seed)
	s := *c.Settings.(*dirrc.Config)
	s.DirectorySnapshotEntries = 2 + int(seed%5)
	c.Settings = &s
	return c
}

// TestSwarmSnapshots: TestSwarm's runs with the directory's log compacted
// every few commands, so restarted replicas restore their rows from
// snapshots (Restore: the replicated fields, heads' deadlines from now)
// and lagging ones are sent the leader's; every history must be release
// consistent.
func TestSwarmSnapshots(t *testing.T) {
	sum := simtest.Swarm{Seeds: 100, Short: 10, Config: snapshotting}.Run(t)
	if sum.Seeds >= 10 && sum.Messages["rsm.snap"] == 0 {
		t.Fatalf("no directory replica was sent a snapshot in %d runs", sum.Seeds)
	}
	t.Logf("%d snapshots sent", sum.Messages["rsm.snap"])
}
