package twopl

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// OCC, Catenae's second baseline (seed 000 §4.3.4: "Optimistic
// concurrency control also cooperates with Paxos commit ... Temporary
// execution results with versions of accessed partitions are voted and
// validated among coordinators (first phase of Paxos commit). A
// transaction commits when a majority of DC commit (second phase of
// Paxos commit). Our OCC implementation allows aborted transactions to
// retry one time before returning aborts to clients."), is this package's
// commit path with its locking phase replaced (protocol occ, doc.go,
// "OCC"):
//
//  1. Read. The manager asks every region for the keys' records, taking
//     no lock (Prepare.Read), and takes each key's newest version among a
//     majority's answers.
//  2. Validate (phase 1). It asks every region for the locks without
//     waiting (Prepare.NoWait) and the versions it read (Expect): a region
//     grants only if no lock conflicts now and no key's version is above
//     the one read; otherwise it refuses at once. A majority of grants
//     validates the transaction: any transaction that committed a newer
//     version applied it at a majority while holding its locks, and that
//     majority meets this one.
//  3. Execute and decide (phase 2) as 2PL does, on the read phase's
//     records; a majority's refusal aborts (and retries `retries` times).

// OCCConfig is occ's settings: twopl's, with lock_timeout bounding an
// attempt (no request waits for a lock).
type OCCConfig struct {
	Config `yaml:",inline"`
}

// startValidation moves t from its read phase to validation, expecting
// the newest versions the read phase found.
func (r *Replica) startValidation(e env.Env, t *txn) {
	t.reads = t.votes
	cur, found := r.newest(e, t, t.reads)
	t.expect = make([]wire.Version, len(t.keys))
	for i := range t.keys {
		if found[i] {
			t.expect[i] = cur[i].Version
		}
	}
	t.votes, t.refused = map[wire.NodeID]*Vote{}, map[wire.NodeID]bool{}
	r.prepare(e, t)
}
