package dirsc_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// snapshotting is TestSwarm's run with the directory group and the
// region frontend groups taking a snapshot of their rows every 2 to 6
// commands.
func snapshotting(tb testing.TB, seed uint64) scenario.Config {
	c := config(tb, seed)
	s := *c.Settings.(*dirsc.Config)
	s.DirectorySnapshotEntries = 2 + int(seed%5)
	s.FrontendSnapshotEntries = 2 + int(seed/5%5)
	c.Settings = &s
	return c
}

// TestSwarmSnapshots: TestSwarm's runs with the groups' logs compacted
// every few commands, so restarted members restore their rows from
// snapshots (directory: the replicated fields, sharers' leases from now;
// frontend: state, fence and data, no lease) and lagging ones are sent
// the leader's; every history must be linearizable.
func TestSwarmSnapshots(t *testing.T) {
	sum := simtest.Swarm{Seeds: 100, Short: 10, Config: snapshotting}.Run(t)
	if sum.Seeds >= 10 && sum.Messages["rsm.snap"] == 0 {
		t.Fatalf("no group member was sent a snapshot in %d runs", sum.Seeds)
	}
	t.Logf("%d snapshots sent", sum.Messages["rsm.snap"])
}
