package fastpaxos_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/fastpaxos"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos/vmpaxostest"
	"github.com/lightcone/lightcone/internal/simtest"
)

// TestSwarm runs seeded simulations (simtest.Swarm: 100 seeds in CI, -seeds
// N for more, -seed S to replay one) with acceptor and proposer crashes,
// partitions, lost, duplicated and reordered messages and concurrent
// proposers on few keys; every history must be linearizable.
func TestSwarm(t *testing.T) {
	sum := simtest.Swarm{Seeds: 100, Short: 10, Config: vmpaxostest.Swarm(fastpaxos.Name)}.Run(t)
	t.Logf("client errors %v; messages %v", sum.Errors, sum.Messages)
}

// TestReplay: a run is a function of its seed (same trace hash twice).
func TestReplay(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		simtest.Deterministic(t, vmpaxostest.Swarm(fastpaxos.Name)(t, seed))
	}
}
