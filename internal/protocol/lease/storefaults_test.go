package lease_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// TestTeethStoreErrorIgnored: replicas that read a failed store read as
// absent and carry on after a failed write — as lease once did for 10 of
// its 12 reads, Paxos ballots included — produce a history the checker
// rejects within a few seeds of faulty stores; with fail-stop (doc.go,
// "Storage failure") the same seeds pass.
func TestTeethStoreErrorIgnored(t *testing.T) {
	faulty := func(unsafe bool) simtest.Generator {
		return func(tb testing.TB, seed uint64) scenario.Config {
			c := swarm(tb, seed)
			if unsafe {
				lease.UnsafeIgnoreStoreErrors(c.Settings.(*lease.Config))
			}
			c.StoreFaults = simtest.DrawStoreFaults(seed, 1, 0.02, c.Duration)
			return c
		}
	}
	simtest.Teeth{Unsafe: faulty(true), Safe: faulty(false), Seeds: 50}.Run(t)
}
