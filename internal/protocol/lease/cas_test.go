package lease_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
)

// increments draws a seed's lease keyspace for simtest.Increments on the
// three-region world: short leases and master leases, active or passive
// updates, and automatic migration in half the seeds; unsafe, if set,
// switches a rule off.
func increments(t testing.TB, seed uint64, unsafe func(*lease.Config)) simtest.Increments {
	r := rand.New(rand.NewPCG(seed, 0x1ea5e))
	cfg := lease.Config{
		LeaseLength: time.Duration(50+r.IntN(400)) * time.Millisecond, MaxDriftPPM: 20_000,
		RenewTimeout: 300 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
		Passive:     r.IntN(2) == 0,
		MasterLease: time.Duration(200+r.IntN(600)) * time.Millisecond, ElectionTimeout: time.Duration(400+r.IntN(600)) * time.Millisecond,
		AutoMigrate: r.IntN(2) == 0, MigrateWindow: time.Duration(200+r.IntN(400)) * time.Millisecond,
		MigrateThreshold: 0.51, MigrateMinWrites: 1,
	}
	if unsafe != nil {
		unsafe(&cfg)
	}
	tp := topo.NewTopology(world(t))
	ks, err := lease.NewKeyspace(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return simtest.Increments{Topology: tp, Factory: ks.Factory(), Codec: sim.MustCodec(lease.MessageTypes()), Faults: true}
}

// TestConditionalIncrementsLinearizable: concurrent conditional
// increments (and deletes) on one to three keys, from a client at every
// node, through crashes, a region cut off, loss, duplication and
// reordering, elections and (in half the seeds) migrations: the
// conditional writes, successes and conflicts alike, must be linearizable
// (doc.go, "Conditional writes").
func TestConditionalIncrementsLinearizable(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments { return increments(t, seed, nil) }).Check(t, 20, 5, 20, 5)
}

// TestTeethConditionIgnored: a master that applies conditional writes
// without checking them lets two increments from the same value both
// succeed; the linearizability checker must reject such a run.
func TestTeethConditionIgnored(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments { return increments(t, seed, lease.UnsafeIgnoreCond) }).Teeth(t, 20)
}

// TestTeethEagerConflicts: a master that answers a conflict against a
// record not yet on a majority (doc.go, "Conditional writes") reports a
// write that a later master may drop — after which a write expecting the
// version before it succeeds. The checker must reject such a run; it takes
// a master failing between the two, so few seeds do (seed 276 is the
// first).
func TestTeethEagerConflicts(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments {
		return increments(t, seed, lease.UnsafeEagerConflicts)
	}).Teeth(t, 1000)
}
