// Package twopl is Catenae's first baseline: Paxos commit over two-phase
// locking, with every region holding every key (seed 000 §4.3.4, "2PL and
// OCC implementation": "a coordinator in each DC to manage the lock table
// and synchronize data replicas when transactions commit. During
// transaction execution, the coordinator acquires locks and issues
// temporary writes ... (first phase of Paxos commit). The coordinator is
// able to lock a data partition when the majority of DCs are able to lock
// the data partition. ... A transaction is committed when a majority of DC
// commit (second phase of Paxos commit). Wound-wait mechanism is used to
// avoid deadlocks.").
//
// # Roles
//
// Each region's first node is its coordinator: the lock table and replica
// of every key of the region (its store), and the manager of the
// transactions the region's clients submit. Every node is a gateway: it
// forwards its clients' transactions (Submit) to its region's coordinator
// and answers them with the coordinator's Result. A single-key get runs as
// a read-only transaction of one read, a put or delete as a transaction of
// one write; conditional writes and other operations are refused
// (ErrInvalid).
//
// # Algorithm
//
//  1. Begin. The manager stamps a transaction with its age, its clock and
//     node (txnID.TS, Node; strictly increasing per manager), kept across
//     retries; each attempt has its own number. It sends Prepare (the
//     transaction's keys, exclusive for a written key, shared for a read
//     one) to every region's coordinator, itself included, and resends it
//     every `resend` to regions that have not answered.
//  2. Lock (phase 1). A coordinator grants a request whole or queues it
//     whole, oldest first. A queued request that conflicts with a granted
//     one wounds it if it is younger (Wound to its manager), and waits for
//     it if older (wound-wait, Rosenkrantz et al.). A request queued for
//     `lock_timeout` is refused (Vote, not granted). A grant (Vote) carries
//     the keys' records as they stand; the locks stay until the decision.
//  3. Execute. With grants from a majority of regions, the manager takes
//     each key's newest version among the grants as its current value: a
//     committed write was applied by a majority before the locks it held
//     there were released, and two majorities meet. It computes the reads,
//     adds and writes, and stamps the writes with one version from its HLC,
//     above every version read (wire.Version; reported in Reply.Version,
//     and the reads' versions in Reply.Txn).
//  4. Decide (phase 2). A read-write transaction's decision carries its
//     writes (the temporary writes of the thesis are these records, held by
//     the manager until the decision). Each coordinator applies them (a
//     record only over an older version: duplicates and reordered
//     decisions are harmless), releases the attempt's locks and answers
//     Done after the writes are durable (persist before send). The client
//     is answered once a majority has applied; the manager resends the
//     decision until every region has.
//  5. Read-only. A read-only transaction is answered on its majority of
//     grants and its locks are released by an abort decision: shared locks
//     on a majority, which is why a read-only transaction costs a round
//     trip where Catenae reads locally.
//  6. Abort. A wound before the decision, a majority's refusal or no
//     majority of grants within `lock_timeout` aborts the attempt: an
//     abort decision releases its locks everywhere. The transaction is
//     retried `retries` times (with its age, so it is never wounded by
//     younger ones forever), then answered ErrUnavailable: it took no
//     effect. An add of a non-integer is ErrInvalid, nothing written.
//     Wounds after a manager decided are ignored: the wounder waits for
//     the decision. A coordinator holding a grant undecided for
//     4×`lock_timeout` sends a Wound as an inquiry; a manager that no
//     longer knows the attempt (every region applied its decision, so the
//     grant came from a stale, re-delivered Prepare) answers with an abort.
//
// # OCC
//
// Protocol occ, the thesis's second baseline, is this package with rule 2
// replaced (occ.go): the manager reads a majority's records without
// locks, then validates with no-wait locks at a majority that also check
// no key moved past the version read; a conflict is an immediate
// refusal, and an aborted transaction is retried once (`retries`). Same
// guarantee, same tests; its floor is one round trip more.
//
// # Guarantee
//
// Strict serializability of transactions; so single-key gets and puts are
// linearizable (Model). Two conflicting transactions cannot both hold a
// majority's locks, so their lock periods are ordered, and the later reads
// what the earlier wrote (rule 3); versions follow that order (rule 3's
// HLC), and a client is answered only once its writes are on a majority
// (rule 4), so the order also respects real time. Clocks order wound-wait
// priorities only: no clock bound is assumed (ClockBound 0). Tested by
// TestSwarm (strict-serializable, transactional workload on a few keys,
// loss, duplication, reordering, partitions, crashes of non-coordinators),
// TestSwarmSingleKey (linearizable), TestBankTransfers (balances sum to
// zero in every audit and at the end, every region agrees) and
// TestTeethOneRegion (locking and committing on one region: rejected).
//
// # Crashes
//
// The lock table and the manager's transactions are in memory. A
// coordinator that crashes forgets the locks it granted, so another
// transaction could lock the same keys with it and a region that has not
// yet applied an earlier commit: coordinator crashes (and store failures,
// which fail-stop a coordinator) are not survived safely and the swarm
// excludes them (300 seeds with one coordinator crashed for 300ms found
// no violation, but the argument does not hold). Crashes of other nodes lose only the requests they were
// forwarding (the client times out: outcome unknown). A coordinator
// outage or a partition leaves a majority of regions able to commit only
// transactions whose managers are in it.
//
// # Limits
//
// A coordinator remembers the last 32768 Submits (duplicate filter) and
// ended attempts (late Prepares are refused); a Prepare delayed beyond
// that is granted and then released by rule 6's inquiry. Every region's
// coordinator holds every key; the region's other nodes hold none (the
// thesis's chain servers are not modelled). Still to do: coordinator
// failover (persisted lock table, a secondary).
//
// # Latency
//
// From a region's client: a read-only transaction one round trip to the
// nearest region completing a majority, a read-write one two (Floor);
// TestLatencyFloor measures each region's median within 1ms of it.
package twopl
