// Package lease is GlobLease (seed 003, the GlobLease paper §III; thesis
// seed 000 §4.1) as a Lightcone protocol: sequentially consistent reads
// served in the reader's own region under per-key leases, writes ordered
// at a per-key master that moves to where the writes come from and is
// replaced when it fails.
//
// # Algorithm
//
// Every key has a replication group — its replica on every region's ring
// (§III.A) — and a master in the group. A client's gateway sends reads to
// the key's replica in its own region and writes to the master it knows
// (initially the replica in the region the key hashes to; later whatever an
// echo taught it).
//
//   - Read (Alg. 1): the master answers from its store while it holds its
//     master lease; a non-master answers if it holds a valid lease on the
//     key; otherwise it asks the master for one (Renew) and answers when
//     the grant, which carries the master's current value, arrives.
//   - Write (Alg. 2): the master stamps the write and applies it. Passive
//     update (Config.Passive), when the key exists and no replica holds a
//     valid lease: done; the others get it lazily. Active update otherwise
//     (and always for a key's first write): the write goes to every replica
//     and completes once a majority of the group has it and every replica
//     holding a lease has acknowledged it — or that lease has expired.
//
// # Lease timing and the clock assumption
//
// Every clock's rate is within ρ = MaxDriftPPM of true time; offsets do not
// matter, because each node only measures durations on its own clock.
// That clock is env.Env.Now, which in the real runtime is the wall clock
// read at boot plus monotonic time since: a wall-clock step (NTP, an
// operator) moves neither a lease nor a timer (internal/node
// TestNowNeverStepsWithTheWallClock); lease code never reads env.Env.Wall
// (internal/lint TestLeasesAreMeasuredOnNow). Every duration one node must respect on behalf of another is stretched
// by (1+ρ)/(1−ρ).
//
//   - A non-master's lease starts when the grant arrives (§III.D) and lasts
//     LeaseLength (L) on its clock — but it accepts a grant only for its
//     outstanding request and only within RenewTimeout (B) of asking.
//   - The master counts a grant as held from the moment it sends it, for
//     (B+L)·(1+ρ)/(1−ρ) on its clock, until the acknowledgement arrives; then
//     its record runs L·(1+ρ)/(1−ρ) from the acknowledgement (§III.D's rule,
//     with the drift made explicit). Either way the master's view of a lease
//     outlasts the lease in real time. The pending rule closes a race the
//     paper leaves open (docs/design/lease.md §1).
//   - A restarted master has lost its records, so until (L+B)·(1+ρ)/(1−ρ)
//     after it starts it treats every replica as a holder.
//   - Active updates do not extend leases: only grants create them, so the
//     master always knows of every lease that can exist.
//
// # Masters: ballots, master leases, elections, migration
//
// The paper sketches master failure (heartbeats, a master that misses a
// majority abdicates, "two-phase Paxos" among the group) and migration
// (two-phase commit, echo correction, rollback) in §III.E without the
// rules that make them safe. Here a key's mastership is a Paxos ballot
// (N, node) decided by its group; every replica keeps, durably, the ballot
// it accepted (whose node is the master it follows) and the highest it
// promised.
//
//   - Master lease (the heartbeat). A master serves reads and grants leases
//     only while a majority has recently confirmed its ballot (Confirm): a
//     replica that confirms promises to vote for no other master for
//     MasterLease·(1+ρ)/(1−ρ) on its clock; the master's lease runs
//     MasterLease on its clock from when it asked, so it ends first. A
//     master that cannot reach a majority loses its lease and stops
//     serving — it abdicates. A restarted replica votes for nobody until a
//     confirmation it may have given has run out.
//
//   - Election. A replica that has waited ElectionTimeout for its master
//     stands (Prepare, phase 1) with a ballot above every one it knows. A
//     replica promises unless it promised a ballot as large, or is bound by
//     a confirmation. With a majority of promises the candidate takes the
//     newest record among them — every completed write is on a majority,
//     so it is there — and asks the group to accept (phase 2). Once a
//     majority accepted it is master. Writes carry their ballot, and a
//     replica refuses writes of ballots below its promise, so an old master
//     can complete no write after a majority promised a new one.
//
//   - The election fence. The old master granted leases only under its
//     master lease, which ended before a majority could promise; those
//     leases end at most (B+L)/(1−ρ) of real time after that. The new
//     master does not know them, so it counts every replica as a holder for
//     (L+B)·(1+ρ)/(1−ρ) after winning (TestTeethElectionFence shows why) —
//     except the old master itself, taken as the newest mastership any
//     promise reported (a master holds no lease of its own key). A
//     candidate writes its activity marker before its first Accept leaves,
//     so a winner that restarts fences everything instead of losing this
//     fence (TestWinnerRestartKeepsTheFence).
//
//   - Migration (manual, wire.OpMigrate, or automatic, AutoMigrate: a key
//     whose writes mostly come from one other region moves there). A
//     manual migration of a key with writes in progress drains it first:
//     new writes get a retryable error until those end, so steady writes
//     cannot starve the move (TestMigrationUnderSteadyWrites). The
//     master, sure of its mastership and with no write in progress, freezes
//     the key (reads and writes there get a retryable error), and hands its
//     record and lease records to the target (Handoff), which runs the
//     election with the old master's consent: replicas bound to the old
//     master may vote for it. The new master inherits the lease records
//     (converted to its clock, stretched) instead of the fence — if every
//     promise named the old mastership as current; otherwise some master
//     came between and the fence applies. Replicas and gateways that missed
//     the change are corrected by echoes: a non-master answers writes and
//     renewals with the mastership it knows, and the sender retries there
//     (at most three times). If the target does not take over in time the
//     old master takes the key back the same way (rollback).
//
//   - Keep-alive. Every MasterLease/4 a master confirms, in one message per
//     peer, every key it served in the last 2·MasterLease whose master
//     lease has less than half left, so busy keys never wait for a
//     confirmation (keepalive.go).
//
//   - Fresh nodes. The restart fences protect leases and confirmations an
//     earlier incarnation gave; a durable marker, written before the first
//     grant or confirmation leaves, tells a restart whether there were any.
//
// # Affiliated nodes
//
// A hot key's replica in a region (its host) attaches up to Affiliates
// other nodes of the region (§III.F): each serves the key's reads under a
// secondary lease the host grants from within its own lease (or master
// lease), timed from when the affiliate asked, so it ends first in real
// time. The host forwards every update to its affiliates and acknowledges
// it only once they have it or their leases ran out, so the master's wait
// for the host covers them (TestTeethAffiliateWait). Gateways learn the
// affiliates from the host's replies and spread reads over the host and
// its affiliates; they never return an older version of a hot key than
// they already returned (the host is never behind its affiliates), so a
// client's reads do not go back in time. Hosts count the reads they serve
// and attach the top HotKeys keys at HotRate reads/s or more each
// HotWindow, and detach keys that cool to half that (affiliates.go).
//
// # Published reads
//
// A read this node answers for its own gateway from its store — as the
// master under its master lease, or as a replica under its lease — is
// offered for that gateway's later reads of the key (env.PublishRead;
// the real runtime answers them without the protocol, package node) until
// a time on this node's clock: the start of the lease's last eighth, or
// the point where half the master lease is left. Safety rests on that end
// and on the store: the end comes before the lease or master lease the
// answer rests on, so before any write can complete without this node
// (GlobLease §III.D: the master waits for every valid lease, and its view
// of a lease outlasts it, "Lease timing" above; a new master waits out
// the old master lease, "Masters" above), and a write of the key here
// withdraws the reply (a store Put). The mastership changes withdraw it too (setMeta, stepDown,
// a migration's freeze: env.WithdrawRead), so that the published answer
// stays the one the protocol would give — a frozen key's reads are
// refused, not answered (TestMigrationFreezeWithdrawsPublishedReads).
// The end also keeps what reads feed: the reads past it pass here, a
// replica's renewing its lease ahead (a published read counts as use, so
// the first read of the last eighth renews) and a master's marking the
// key used, so the keep-alive renews its master lease. Nothing is
// published where affiliates are on: hot-key detection counts every read.
// The simulator checks these answers (sim.Config.PublishReads;
// TestSwarmPublishedReads), and a replica that published with no end is
// caught (TestTeethPublishedReadsEnd).
//
// # Versions
//
// A version is (ballot number, sequence within the mastership, master):
// ballot-major, so every write of a later master orders after every write
// of an earlier one, whatever the clocks say. A replica's record only moves
// forward. A write that reached only a minority before its master failed
// may be dropped by the next master, or may surface later at a replica
// that kept it; either is a valid order, since its client was told the
// outcome is unknown.
//
// # Guarantee
//
// Sequentially consistent per key: for each key, one order of its
// operations explains every client's view. A write completes only when no
// lease holder lacks it, so a lease-served read never returns a value
// older than a completed write; a replica's versions only grow; a
// client's writes order after everything it has read. Reads are not
// linearizable: an active write reaches holders one by one, so a read in
// one region can return the new value before a read in another returns the
// old one (TestReadsNotLinearizable). Nor is the store sequentially
// consistent across keys (IRIW; docs/design/lease.md §2).
// check.SequentialPerKey verifies the claim in the seeded simulations,
// which include master crashes, elections and migrations.
//
// Passive writes trade this for latency: a completed passive write lives
// only on its master until the lazy updates land, and is lost if the
// master fails for good first (the paper's "weaker data availability").
//
// # Conditional writes
//
// A conditional write (wire.Request.Cond: apply only if the key is at
// version Expected; the zero version: absent or deleted) is linearizable
// per key, and so atomic read-modify-write is (the RESP front end's INCR,
// SET NX, HSET, ...). The key's master decides it, in the same handler
// that stamps and applies the write (onMWrite), so no other write of the
// key comes between the check and the write: the master is the one place
// a key's writes are ordered, ballot-major (see "Versions"), and every
// write it accepts is checked against the record its own store holds,
// which is the newest of the mastership (a master applies each write it
// stamps before the next one). Why the order of conditional writes is a
// linearization:
//
//   - A successful conditional write is always an active update (never
//     passive), answered only once a majority of the group has it. A later
//     master's election takes the newest record of a majority, so it holds
//     this write or a later one that overwrote it: a completed write is
//     never lost, and no later master decides a condition against an older
//     record.
//   - A write the master accepts against a record that is not yet on a
//     majority (a write still in progress) completes only if that record
//     ends up on a majority with it (the later record carries the earlier
//     one's effect), so the earlier write, whose outcome its client may
//     not know, is ordered before it.
//   - A conflict reports the current version, an observation, so it is
//     answered only once that version is known to be on a majority
//     (committed): otherwise a new master could drop it, and the conflict
//     would have observed a write that never happened. The master waits for
//     the key's writes in progress to end; if none is in progress and the
//     record is not known to be on a majority (after a failed write, a
//     passive one, a restart or an election) it replicates the record again
//     as an active update, and answers once that completes (Retry, nothing
//     written, if it cannot in time).
//
// Plain writes are ordered at the same master, so conditional and plain
// writes linearize together — except passive ones: a passive write that
// completed on its master alone is lost if the master fails first (see
// "Guarantee"), and later conditional writes are then decided without it.
//
// Gateways, redirects and the at-most-once rules are those of every write.
// Reads are not part of the claim: they stay sequentially consistent per
// key, so a read-modify-write may read a stale value and then fail its
// condition, and its client (resp's modify) reads again.
// TestConditionalIncrementsLinearizable runs concurrent conditional
// increments on few keys under crashes, partitions, loss and duplication
// and checks the conditional writes linearizable;
// TestTeethConditionIgnored shows a master that skips the check fails it,
// and TestTeethEagerConflicts one that answers conflicts against records
// not yet on a majority.
//
// # Requests
//
// Writes and migrations are at-most-once, across restarts too
// (requests.go). Every node keeps, durably, its incarnation — how many
// times it has started — and tells the others when it starts (Hello). A
// gateway addresses each attempt of a request to one incarnation of its
// target, the newest it knows, and only that incarnation may execute it:
// it handles the first copy and drops later ones (its memory of them is
// in-memory; the network duplicates it guards against lag the original by
// less than 4·(WriteTimeout+ElectionTimeout), after which it is dropped).
// A copy addressed to any other incarnation is refused with Stale and the
// receiver's incarnation, so a late duplicate reaching a restarted node
// never executes there (testdata/restart_duplicate.txt). What a client is
// told is then exact:
//
//   - not written (ErrUnavailable) only if every attempt was refused by the
//     one incarnation it was addressed to, or was addressed to none (a
//     gateway that has not heard the target's incarnation sends 0, which
//     every node refuses, and sends again to the incarnation the refusal
//     names: testdata/hello_lost.txt);
//   - outcome unknown (ErrTimeout) if an attempt went to an incarnation
//     that has since restarted (it may have executed the request first) or
//     no answer came in time;
//   - done, with its version, once the write completed.
//
// A gateway ignores answers to an attempt it has moved past. An
// incarnation is stored before any message naming it leaves (persist
// before send), so no number is used twice. A restarted gateway's
// requests are simply gone: their clients had no answer.
//
// # Storage failure and invariants
//
// Storage failure is fail-stop (storage.go): a replica whose store fails a
// read or a write — mastership records and Paxos ballots, data, the
// activity marker alike — stops its node (env.Env.FailStop), and the
// runtime drops everything the handler queued, so no promise, grant or
// acknowledgement leaves that depends on what failed; a failed write may
// or may not have taken effect, and the restarted replica trusts only what
// its store kept (and fences as after any restart). A corrupt mastership
// record stops the node the same way. TestSwarm runs a third of its seeded
// simulations with failing stores and torn crashes;
// TestTeethStoreErrorIgnored shows a replica that reads a failed read as
// absent and ignores a failed write breaks the guarantee.
//
// Invariants asserted where they are relied on (env.Invariant; a broken
// one fails the seeded run, or stops the node in production): a replica's
// promise never goes back and it never accepts below it (setMeta); a
// master grants only under its master lease (grant); a master stamps each
// write above every version its store holds (onMWrite).
//
// Routing: every node knows the topology and the rings, so a gateway
// reaches a key's replicas in one hop from the start (the paper learns
// such links by echo); the echo is kept for what a node cannot compute —
// where a key's master moved.
package lease
