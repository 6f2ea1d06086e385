// Package cric is CRIC (seed 001, ch. V; digest
// shared/seeds/notes/001-wu-costlo-spanstore-cric.md §3): linearizable
// objects kept directly in the regions' storage services
// (internal/storagesvc), with no acceptor process. `protocol: cric`.
//
// # Roles
//
// The node that receives a client request (its gateway) is the proposer
// and learner for it. The acceptors are passive: acceptor a is the object
// KeyPrefix+key in replica a%m of the storage service of region
// Regions[a/m] (wire.StorageReplica). Its metadata holds the CPaxos state
// after garbage collection (state: the last accepted version V with its
// ballot, the value's write ID and data digest, the commit bit, and the
// highest promise PV/PB); its data is the value of version V, written
// once, by the Accept that accepted it (§5.2.3, Fig. 5.7). Proposers run
// the acceptor logic themselves (state.promise, state.accept) on the state
// they read, and install the result with a conditional write on the ETag
// they read it at (If-Match; If-None-Match for an absent object), so an
// acceptor changes only by a valid transition of the state it is in,
// whoever's request lands and however late (§5.2.1, Fig. 5.6b).
//
// # Algorithm (numbered rules; code cites them)
//
//  1. Versions are Paxos instances. Version n+1 is proposed only by a
//     proposer that knows version n chosen, so an acceptor that has
//     accepted or promised a later version refuses every earlier one: it
//     needs no state for them (garbage collection during Accept, §5.2.3).
//     Version 0 is the initial absent value, chosen by definition.
//  2. Knowing a version chosen (Proposer.learned): its commit bit at any
//     acceptor; or one classic ballot's value accepted by a quorum; or the
//     fast round's value accepted by a super quorum.
//  3. Write (wire.OpPut, last writer wins; wire.OpDelete, a tombstone
//     value): from the cached acceptor states (a cache miss assumes a new
//     object, §5.2.1: one round trip to create; see 3c for an existing
//     one), with m the highest version accepted: if m is known
//     chosen, propose at m+1; else finish m first (recovering its value).
//     When the value chosen at a version is not ours, go on to the next
//     version until ours is chosen or the operation times out. A write is
//     acknowledged only once its own value is chosen.
//     3a. A write that sent its value to be accepted at version j must
//     learn j's chosen value before proposing at a later version, or it
//     could be applied twice; once later versions hide j (garbage
//     collection) it answers timeout, outcome unknown (seed 1808).
//     3b. Unless version j+1 tells: an Accept at version n records the
//     write ID chosen at n-1 when its proposer knows it (state.Prev, the
//     one piece of the collected log kept; §5.2.3 allows collecting
//     "some, not all"), so the write finishes (chosen at j) or goes on
//     (another value was). The proposer of n knew n-1 chosen (rule 1),
//     so Prev is never wrong, only sometimes absent.
//     3c. On a cache miss (cold_writes: create_and_head, the default) each
//     create-only write on an assumed view goes out with a Head of the
//     same object beside it. A create that fails (the object exists)
//     takes the state the Head returned instead of unknown, and a phase
//     that failed on assumed states re-plans on those states rather than
//     reading again: an existing object costs one round more than a
//     cached one, not two (cric-fig5.11 NOTES: 3.67 → 2.83 rounds per
//     write). A Head's answer is a true state at its ETag, so writes
//     conditioned on it are sound whenever it was taken. Not counted in
//     the phase; late, it refreshes views like any late answer (6a).
//     Propose assistants' answers do the same for a Prepare planned on
//     assumed states: they read every acceptor they answer for, so a
//     failed Prepare through them never needs a read of its own.
//  4. Fast round: ballot #0, Accept directly at every acceptor whose state
//     allows it (each accepts at most one value per version in #0); chosen
//     when a super quorum accepted. Otherwise fall back to rule 5 at the
//     same version, never retrying #0 there (§5.2.1).
//  5. Slow path: with the states of a quorum known (else read every
//     acceptor first), pick a ballot above every ballot seen, promise by
//     conditional writes (PutMeta: the data is untouched), and with a
//     quorum promised pick the value: the highest classic ballot's; if the
//     highest is #0, a value some super quorum may have chosen (every
//     member of it in the promised quorum Q accepted it in #0: at most one
//     value passes, Theorem V.4; the thesis's "most frequent" rule is the
//     flat special case, and any value is safe when none passes); if Q
//     accepted nothing for n, our own. Then Accept by conditional Puts. A
//     phase that cannot reach a quorum (refused, no answer) re-reads: at
//     once if it was planned on cached or assumed states (they were
//     stale, which is no contention), else after a random backoff from
//     Env.Rand, uniform in [0, b·2^min(attempt-1,3)) with b the larger of
//     Backoff and half the failed phase's measured round trip (a fixed
//     20 ms base against ~100 ms round trips only re-entered the duel).
//     5a. (Ours, on §5.2.1's conditional-PUT Accept, whose If-Match must
//     name the acceptor's current ETag.) The Accept to an acceptor whose
//     promise is still unanswered
//     when the quorum of promises arrives waits for that answer and goes
//     out on the ETag it returns (sent at once on the old ETag it fails
//     whenever the promise lands first, leaving the acceptor a version
//     behind until the next write, and every reader near it a second
//     round trip: cric-fig5.15-16 NOTES). A failed promise leaves the
//     acceptor unknown. The same holds for a promise through a propose
//     assistant: the Accept waits for the assistant's answer and its ETag.
//     5b. (Ours, from rule 2 and §5.2.2's commit bit.) If the promises
//     show version n already chosen (a commit bit:
//     typically a write planned on assumed or stale states whose promise
//     at n still passed, as at a preloaded object's version 1), the
//     Accept phase is skipped and the op plans again from what it now
//     knows: re-proposing a chosen value costs a read of its data (an
//     assistant's answer carries none) and a round, for nothing.
//  6. Commit bit: once its value is chosen the proposer sets the commit bit
//     with a conditional PutMeta on each acceptor it saw accept, without
//     waiting (§5.2.2).
//     6a. The commit PutMeta is answered with the object's new ETag,
//     which the proposer keeps (with the committed state) for every view
//     at the ETag the PutMeta was conditioned on, so its next write needs
//     no re-read (§5.2.1: "cache acceptors' states"). A write planned
//     while its own commit to an acceptor is in flight sends that
//     acceptor's conditional write when the commit answers, with the
//     ETag it returned (sent at once on the old ETag it would fail
//     whenever the commit lands first); a failed commit leaves the
//     acceptor unknown. Likewise every answer to a finished phase is
//     kept: an acceptor's state read, or a write's state at the ETag it
//     returned, replaces a cached view that is unknown or at the ETag
//     the write was conditioned on (its predecessor: nothing else
//     succeeded from it); a live op takes it only for acceptors it does
//     not know or that did not succeed in its current phase. A read's
//     views, which stop at the first quorum that settles it, are merged
//     into the cache rather than replacing it. Each such view is a true
//     state at its ETag, so conditional writes on it stay sound, and
//     knowing a version chosen from views of different times is sound
//     (a value one ballot had accepted by a quorum stays chosen).
//  7. Read: Get the nearest acceptor's object and Head the others' (data
//     from the closest replica, metadata elsewhere, §5.2.3; with several
//     replicas per region, the data of the nearest read_data_copies,
//     by default a replica quorum: "2 of the 3" copies, §5.3); once a
//     quorum answered, if the
//     highest version m seen is known chosen (rule 2: typically its
//     commit bit), return its value at once; otherwise wait for every
//     acceptor (or StorageTimeout), which may show m chosen, and only then
//     write back, i.e. run rule 5 at version m (whose value selection
//     keeps any value that may be chosen) and return what is chosen
//     (§5.2.2: "otherwise it waits for all replicas"). Writers' reads
//     wait the same way before finishing an unchosen version. A copy's
//     data is used only if its digest (in the metadata) matches the
//     chosen version's; if the nearest copy is not one, the read Gets the
//     nearest acceptor whose metadata shows the chosen value. Before a
//     write-back, or a write re-proposing a value it read by Head, every
//     acceptor's data is read (a write-back may re-propose any of them).
//  8. Storage answers are matched to requests by ID; duplicates and
//     answers to finished phases are ignored. Precondition failed, an
//     error, or no answer within StorageTimeout leaves that acceptor's
//     state unknown (a duplicated write can fail after its twin
//     succeeded): it is re-read, never assumed.
//
// # Guarantee
//
// Every read and write is linearizable (check model "linearizable"), for
// any number of crashing proposers, lost, duplicated, delayed or reordered
// storage requests and answers, and storage outages, provided each
// storage service is strongly consistent per object with ETag-conditional
// writes (storagesvc's contract) and the quorum sizes pass Validate. A
// read returning version m is safe because no later version can have been
// chosen before the read began: it would have been accepted by a quorum,
// which intersects the read's quorum (Theorem V.2), and versions at an
// acceptor only grow. A write that answers timeout may still take effect
// (outcome unknown). Liveness needs a quorum of acceptors reachable;
// duelling proposers are separated only by random backoff.
// TestSwarm checks linearizability; TestTeethFastRoundBelowSuperQuorum and
// TestTeethReadIgnoresUncommittedVersion show the checker catches the
// loss of rules 4 and 7.
//
// # Propose assistants (§5.2.4, pvm.go)
//
// With propose_assistants on, rule 5's promises go through the assistant
// of each acceptor's region (its first node): it Heads the object, runs
// state.promise, installs it by a conditional PutMeta and, when the
// object moved but its state still allows the promise (a false propose
// failure), reads and tries again, up to 4 times; it answers with the
// state and ETag the Accept's conditional Put needs. Unknown acceptors
// are sent to it too (it reads them). Accepts, commit bits and the fast
// round bypass it; it never carries data, holds no state across
// requests, and every write it makes is the same conditional transition
// a proposer would make, so safety is unchanged (TestSwarm runs it on
// even seeds). Counters: prepare_failures_total,
// false_prepare_failures_total (no acceptor refused by its state),
// pvm_retries_total (false failures the assistants absorbed).
//
// # Quorums (§5.3)
//
// A quorum is RegionQuorum of the Regions each answering with
// ReplicaQuorum of its ReplicasPerRegion replicas; a super quorum the same
// with the super sizes. Validate refuses sizes where two quorums can miss
// each other (2q ≤ n at either level) or two super quorums and a quorum
// can share no acceptor (2s + q ≤ 2n at either level); the default super
// size is the least passing one. TestQuorumConditionsBruteForce shows, by
// enumeration up to 4 regions × 3 replicas, that these level-wise
// conditions are exactly the hierarchical ones. The thesis's
// ⌈3/4·N + 1⌉ super quorum exceeds N = 3, where its own example contacts
// all three; the least safe size is used instead.
//
// # Choosing the fast round
//
// The wire request has no fast-round field, so its consistency level
// says: ALL tries the fast round, QUORUM takes the classic path, DEFAULT
// follows the keyspace's fast_round setting; other levels are invalid.
//
// # Clocks
//
// Safety assumes nothing of clocks. Timers (StorageTimeout, OpTimeout,
// backoff) use the node's clock only for liveness.
//
// # Not (yet) here
//
// A version-targeted conditional write (writes are last-writer-wins). The
// baselines are the fastpaxos and ppaxos protocols (internal/protocol/vmpaxos)
// and the cost accountant is internal/cost.
package cric
