// Package quorum is Lightcone's baseline protocol: Cassandra-style quorum
// replication with per-request consistency levels, last-writer-wins on
// hybrid logical clock timestamps, and blocking read repair. Every seed
// system is measured against it (seed 002 §3.2 describes Cassandra's read
// and write paths; the GlobLease paper, seed 003 §V, and MeteorShower, seed
// 000 §4.2, use it as their baseline).
//
// # Algorithm
//
// Placement: each key has ReplicasPerRegion replicas in every region, the
// first nodes met clockwise from the key's hash on the region's ring
// (internal/ring), as Cassandra's NetworkTopologyStrategy.
//
// The node a client talks to (its gateway, in the client's region)
// coordinates the request:
//
//   - Write (put, delete): with query order (below), the coordinator first
//     asks the nearest replicas that satisfy the keyspace's read level for
//     their version of the key and lets its HLC observe them. It stamps
//     the write with its HLC, version = (timestamp, coordinator ID), and
//     sends it to every replica.
//     A replica stores it if it is newer than what it has (last writer wins),
//     makes it durable, and acknowledges. The write succeeds once the acks
//     satisfy the write level, after the commit wait below (clock order
//     only). If they do not
//     arrive within WriteTimeout the client gets ErrTimeout: the outcome is
//     unknown, and the write may still become visible.
//   - Read: the coordinator asks the nearest replicas that together satisfy
//     the read level (if they have not all answered after SpeculativeRetry it
//     also asks the others). Once answers satisfy the level, the highest
//     version wins; every answering replica that returned an older version
//     (or none) is sent the winner and must acknowledge it before the read
//     returns (blocking read repair). Then the commit wait (clock order
//     only); then the reply.
//
// Levels (n = all replicas of the key, n_r = replicas in region r, local =
// the coordinator's region): ONE, TWO, THREE: that many replicas anywhere;
// QUORUM: ⌊n/2⌋+1 anywhere; ALL: n; LOCAL_ONE: 1 in local; LOCAL_QUORUM:
// ⌊n_local/2⌋+1 in local; EACH_QUORUM: ⌊n_r/2⌋+1 in every region. A level
// a layout cannot satisfy (THREE with two replicas, LOCAL_* where the
// coordinator's region has no replica) is rejected with ErrInvalid.
//
// # Write order
//
// Last writer wins is linearizable only if a write's version is above the
// version of every operation that completed before the write began. The
// keyspace gets that one of two ways (Config.WriteOrder), the same way for
// every write of every key:
//
//   - clock: the version comes from the coordinator's HLC and answers wait
//     out the commit wait (below). It rests on the clock bound.
//   - query: the write's first round asks the nearest replicas that
//     satisfy the keyspace's read level R for their version of the key;
//     the HLC observes each answer, so the version stamped next is above
//     all of them (the first phase of the multi-writer ABD register:
//     Attiya, Bar-Noy, Dolev 1995; Lynch and Shvartsman 1997). No answer
//     waits for the clock. Proof sketch, for levels whose R-sets meet
//     every W-set and every R-set (the linearizable ones below): an
//     operation that completed left its version durable on a whole set of
//     replicas — a write on the W-set that acknowledged it, a read on the
//     R-set that answered, through blocking repair — and a replica never
//     goes back to an older version. A later write's query meets that
//     set, so it is stamped above; a later read meets it, so it returns
//     that version or a newer one. Ordering operations by version (a read
//     right after the write it returns) is then a linearization. The
//     sender's clock does not enter (TestTeethQueryOrderNeedsQuery: one
//     clock 300 ms behind, linearizable; skip the query, rejected).
//
// The two must not be mixed in one keyspace: a query write, or a query
// read, answers without waiting, soon after the stamp of the version it
// returns, so a clock write beginning right after it may, within the
// clock bound, be stamped below it. Every node must therefore run the
// same order: write_order is a keyspace setting, resolved from the shared
// cluster configuration, and changing it, or under auto the world's
// delays that decide it, takes a full-cluster restart, never a rolling
// one. write_order auto picks per keyspace, from the
// world's mean delays every node knows: query when, from every region
// with replicas, (1) every replica set that satisfies W also satisfies R
// (covers: a W-set that omits as many of a region's replicas as it can
// still holds R's minimum there, and W's count is at least R's), so the
// query needs no replica the write does not and writes stay as available
// as with clock order — ALL/ONE and QUORUM/ONE keep the clock, since one
// replica down would time out every write — and (2) R's round trip plus
// W's is at most max(W's round trip, 2δ); clock otherwise
// (Keyspace.QueryOrdered). With ONE or LOCAL_ONE reads and a W that
// covers them the query is the coordinator's own replica (round trip 0),
// so auto picks it on a WAN too: writes cost what they did, and reads
// never wait. A single-node cluster does neither: one HLC orders every
// version, with no wait.
//
// Per-request levels under query order. The query uses the keyspace's
// read level R, so a request at another level must keep its version
// where later queries look, or it breaks the order for every client (a
// ONE write whose copies to the others are lost completes on one replica
// that a later write's query can miss; that write is stamped below it,
// and later reads return the older value: TestQueryOrderPerRequestLevel).
// A query-ordered keyspace refuses with ErrInvalid a write whose level's
// sets can be disjoint from an R-set (from any two coordinator regions),
// when R and W give regular or linearizable; and a read whose level's
// sets can be disjoint from an R-set, when they give linearizable (its
// blocking repair leaves the version on its set, which later queries must
// meet). The keyspace's own levels always pass; with clock order every
// level is accepted, as before.
//
// What each level costs, with RTT(L) the round trip from the coordinator
// to the farthest member of the nearest replica set satisfying level L
// (Floor; 0 for LOCAL_ONE or ONE served by the coordinator's own replica,
// which also takes no operation state: Replica.fastPath):
//
//   - Write, clock: max(RTT(W), wait), the wait 2δ (commit_wait bound) or
//     the measured bound (commit_wait measured, below: about the farthest
//     node's one-way delay plus how far its clock is behind). The wait
//     runs from the stamp, so it is hidden whenever the replicas are
//     farther than it (every cross-region level with 2δ: meteor3's QUORUM
//     write is its 100 ms round trip) and costs up to 2δ for local ones
//     (LOCAL_ONE, LOCAL_QUORUM, or a cluster on one LAN: local3's 2 ms
//     QUORUM round trip waits 4 ms with the bound, 2 ms measured).
//   - Write, query: RTT(R) + RTT(W), no wait: one more round trip than the
//     replication needs, which beats the wait only when RTT(R) + RTT(W) is
//     under 2δ (a cluster whose round trips are well under δ, such as one
//     on loopback). Fast-path writes (ONE, LOCAL_ONE) query too. Its
//     availability is that of R and W together: it needs a live R-set,
//     then a live W-set, and WriteTimeout covers both rounds (auto picks
//     query only where every W-set is an R-set).
//   - Read: RTT(R), plus one more round trip to the stale replicas that
//     answered when they must be repaired (RTT(R) again at most), plus,
//     with clock order only, what is left of 2δ since the returned
//     version's stamp: only reads of versions written in the last 2δ wait.
//   - Neither order with the 2δ wait brings a write whose round trip is
//     under 2δ to one round trip. Without clocks, a multi-writer atomic
//     register cannot have every operation finish in one round trip (Dutta, Guerraoui,
//     Levy, Chakraborty, "How fast can a distributed atomic read be?",
//     PODC 2004); folding the query into the write round (replicas report
//     the version they held) is safe when no replica held a newer one,
//     but a write that finds one can neither keep its version (the newer
//     one may have completed first) nor restamp (a read may already have
//     returned it at the old version). With clocks, the 2δ from stamp to
//     answer is what makes every later stamp larger. A smaller δ
//     (max_clock_offset), where the clocks warrant it, or a wait
//     measured rather than assumed (commit_wait measured), brings such a
//     write to its floor.
//
// # Clock assumption
//
// Every node's physical clock is within δ = MaxClockOffset of true time
// (so two clocks differ by at most 2δ). The clock is env.Env.Wall, the
// system's wall clock in the real runtime (an HLC stamp is compared across
// nodes, so it must track true time, NTP corrections included). HLC timestamps never run behind the
// local physical clock, and their wall part never exceeds true time + δ.
//
// Commit wait: a coordinator answers a write, or a read returning a value
// with version v, only once its own physical clock reads past
// v.wall + 2δ. Then true time is past v.wall + δ, so any operation that
// starts after the answer is stamped, by any coordinator whose clock is
// within δ, with wall > v.wall: last-writer-wins order agrees with real
// time for non-concurrent writes. The wait costs nothing when the
// replication round trip is longer than 2δ (every cross-region level), and
// up to 2δ for purely local ones. NoCommitWait turns it off, as in
// Cassandra; the guarantees below then hold only with perfectly
// synchronised clocks. A single-node cluster never waits: one clock (its
// HLC) orders all versions.
//
// # Measured commit wait
//
// What the commit wait must ensure is narrower than "true time has passed
// v.wall + δ": that every operation starting after the answer, at any
// coordinator j, is stamped above v.wall. j stamps at least its own
// clock, so it is enough that the answering node i's clock reads past
// v.wall + (clock_i − clock_j) for every j, now. With commit_wait measured
// every node sends its clock to every other every ClockProbeInterval
// (message quorum.clock). A probe j sent with its clock at c_j and i
// received with its clock at c_i bounds clock_i − clock_j by c_i − c_j,
// then and (with rates within ρ) at any later time plus 2ρ/(1−ρ) of the
// time since it arrived (clocks.go; Cristian, "Probabilistic clock
// synchronization", 1989). The wait is the largest such bound over all
// other nodes, never below 0, and never above 2δ. It is 2δ until a probe
// from every node has arrived (a replica starting), while any node has
// been silent for three probe intervals (down, or cut off), and when a
// bound has aged past 2δ. A probe carries its sender's incarnation, the
// wall time its replica started: a newer incarnation's probe replaces
// the bound kept of the node, and a late probe of an older one is
// ignored.
//
// The bound is about one one-way delay plus the clocks' actual offset: on
// local3, 1 ms with clocks in step, so a QUORUM write finishes at its 2 ms
// round trip instead of 4 ms (TestMeasuredWriteAtFloor; reads of fresh
// versions wait the same, shorter, time). It is over every node, so where
// any node is 3δ or more away one way (every multi-region world at the
// default δ, even for LOCAL_ levels) it is 2δ and the setting changes
// nothing; such a node (by env.Env.Latency) sends no probes, so there the
// setting costs nothing either (TestMeasuredProbesOnlyNearLinks: meteor3,
// none). Elsewhere the probes are n(n−1) messages per interval, for each
// keyspace that sets it.
// It changes write_order auto's estimate of the clock's cost (expectedWait),
// so under auto, changing commit_wait takes a full-cluster restart, as
// changing the order does.
//
// Clock assumption, in addition to δ's (which still holds the answers
// that wait 2δ): every node's wall clock runs at a rate within
// ρ = MaxDriftPPM of true time and is never stepped, either way, while
// the node is up. A clock stepped back by s after a probe makes the
// node's stamps up to s lower than its probes promised, and a write
// stamped below one that completed before it is lost, as with a clock
// beyond δ under the bound; a clock stepped forward makes the node's own
// bounds of its peers too small. A step while the node is down (a reboot)
// is allowed: its peers drop what they knew of its clock on its new
// incarnation's first probe, or after its silence
// (TestTeethMeasuredCommitWaitBootStep shows the reboot's step losing
// writes when they keep it). In production: time slewed while up
// (chrony with makestep only at boot, and maxslewrate plus the clock's
// own frequency error within ρ; ntpd's slew is 500 ppm, the default ρ).
// The simulator's clocks are offset and drift within these bounds;
// TestSwarmMeasuredCommitWait runs the seeded fault swarm with clocks up
// to 5 ms off (δ = 10 ms), and TestTeethMeasuredCommitWait shows a wait
// 2 ms shorter than the measured bound losing linearizability. Nothing
// enforces the assumption: the nemesis's clock steps (within δ) and the
// simulator's skew faults on a running node break it, and a history they
// fail is the assumption's failure, not the protocol's. The simulator's
// claim (check: auto) says so: a run with a skew fault, or clocks drifting
// past max_drift_ppm, claims only valid reads under commit_wait measured
// (protocol.SteadyClocks; TestMeasuredClaimNeedsSteadyClocks), where the
// 2δ wait keeps its claim for skews within δ.
//
// A restarted coordinator starts its HLC at its clock + 2δ, so it never
// reissues a version its previous incarnation used (see Replica.Start).
// This is the one use query order makes of the clock bound: a coordinator
// restarted with a clock far behind could, after a query that missed an
// unfinished write of its previous incarnation, stamp that write's version
// again for another value.
//
// # Writes without a read
//
// Last writer wins makes a replica read a key's record before storing a
// write of it, to keep the record if it is newer. Over many keys that read
// is most of a write's cost: below the store's row cache it is a search of
// the engine's tables (docs/performance.md, "Writes to many keys"). A
// replica skips it when the write is stamped above its ceiling, a
// timestamp at or above every version its store holds: such a write is
// newer than the record, whatever the record is.
//
//   - Start sets the ceiling to the clock + 4δ (+1 ns). Every version
//     stored before was stamped by an HLC whose wall part came from a
//     physical clock, at most true time + δ, or from a restart's jump to
//     its clock + 2δ (Replica.Start), at most true time + 3δ; and true
//     time is at most this clock + δ. (A ceiling of the clock + 2δ, the
//     first version of this rule, missed versions stamped by another
//     node just restarted with its clock ahead: a review found it.) The
//     simulator's preloaded records are stamped an hour before its
//     epoch.
//   - Every store write (a write applied, a repair, a transaction's
//     writes) raises the ceiling to its version (Replica.put), so a
//     write stamped below a version stored since — a late write from
//     another coordinator, or one overtaken by a newer one here — still
//     reads the record and is dropped if older.
//
// The writes this node coordinates are stamped by its HLC, which has
// observed every version stored here, so past the first 4δ after a
// start they are all above the ceiling and none of them reads. This uses
// the clock bound δ for what a restart finds in the store, as the restart
// rule above does for the versions it issues. TestTeethCeiling keeps the
// ceiling at its start (every later write blind): a late older write then
// replaces a newer one and the linearizability checker rejects the runs.
//
// # Guarantees
//
// The guarantee of a read level R and a write level W follows from which
// replica sets must intersect, for coordinators in any regions
// (GuaranteeOf computes it for a layout; the test suite checks the closed
// form against brute force):
//
//   - Linearizable (each key is an atomic register) when every R-set
//     intersects every W-set and every R-set intersects every other R-set.
//     Reads see every write that completed before them (R∩W), and a read's
//     blocking repair leaves its value on an R-set that every later read
//     intersects (R∩R), so reads never go back in time (the ABD argument:
//     Attiya, Bar-Noy, Dolev 1995). With one replica per region of four:
//     QUORUM/QUORUM, THREE/TWO, ALL/ONE, and EACH_QUORUM (which is ALL here)
//     with any write level.
//   - Regular (multi-writer regular register per key) when every R-set
//     intersects every W-set but two R-sets may not intersect: a read
//     returns the value of the latest write that completed before it began,
//     or of a write concurrent with it; two reads concurrent with a write
//     may see it in either order (new-old inversion). ONE/ALL — GlobLease's
//     Cassandra configuration for read-dominant workloads — is here.
//   - Eventual otherwise (ONE/ONE, LOCAL_QUORUM/LOCAL_QUORUM across regions,
//     ...): a read returns some value written before it returned, or the
//     initial value; replicas converge through read repair.
//
// Sequential consistency across keys is not claimed beyond what
// linearizability implies. With clock order every guarantee assumes the
// clock bound; the tests show QUORUM/QUORUM losing linearizability when
// one clock is 300 ms behind with δ = 2 ms (TestTeethSkewBeyondBound),
// and keeping it with query order (TestTeethQueryOrderNeedsQuery).
// TestSwarmQueryOrder runs the seeded fault swarm with query order for
// every level pair, with clocks up to 300 ms off, where skipping the
// query fails (TestTeethSwarmQueryOrderNeedsQuery).
//
// # Conditional writes
//
// A conditional write (wire.Request.Cond: apply only if the key is at
// version Expected; the zero version: absent or deleted) needs one place
// that orders the key's writes. Quorum has one only on a single-node
// cluster (Keyspace.OrdersWrites) — the default keyspace of a single-node
// `lightcone server`. There one replica stores every key and one HLC
// stamps every write, conditional or not, in the order the node handles
// them; the coordinator is the replica, and checks the condition and
// applies the write in one handler (Replica.mutate), stamped above the
// expected version (the HLC observed it), so above the record it
// replaces. Every read and write goes through that store in that order,
// so it is a linearization, and conditional writes are atomic
// read-modify-write. TestConditionalIncrementsOneReplica checks
// concurrent conditional increments and plain writes linearizable under
// crashes; TestTeethOneReplicaConditionIgnored shows a replica that skips
// the check fails it.
//
// With several nodes no correct path exists in this protocol, not even
// with one replica per key: coordinators stamp writes with their own
// clocks and replicas keep the highest version (last writer wins), so a
// plain write concurrent with a conditional one can carry the lower
// version, reach the replica after it, and be ordered before a
// conditional write whose check never saw it (the one-replica-of-three
// variant of the test found exactly that), and with several replicas two
// coordinators can each see a condition hold. Ordering a key's writes
// takes consensus per key (Cassandra's Paxos-based lightweight
// transactions) or a per-key master (the lease protocol). Such keyspaces
// refuse conditional writes with ErrInvalid (protocol.CondRefusal names
// the keyspaces that can; TestConditionalWritesRefused), unless the
// keyspace opts in to last-writer-wins read-modify-write (`rmw:
// last_writer_wins`), in which the RESP front end's INCR and the rest are
// a get then a put.
//
// # Transactions
//
// On a single-node cluster (the same layout as conditional writes) the
// replica runs transactions (wire.OpTxn: declared reads, writes and adds;
// Replica.txn): it checks the transaction's shape (wire.Txn.Check), reads
// every declared key, decides, stamps every write with one HLC version,
// stores them and replies, all in one handler. The node runs one handler
// at a time and persists its writes before the reply leaves, so every
// transaction takes effect at one point of the node's order: strictly
// serializable. An add to a key whose value is not a decimal int64, or
// that would overflow, fails the whole transaction with ErrInvalid, nothing
// written. TestTxnOneNode checks results and versions, and the refusals;
// the scenario TestTxnWorkloadSingleNode runs the transactional workload.
// Across crashes: the server's Pebble engine gathers every write since
// its last sync in one batch and commits it whole at the sync (group
// commit), so a crash keeps all of a transaction's writes or none. The
// simulator's torn crashes (store_faults: torn_crash) model a log torn
// inside a batch and can keep a prefix of an unacknowledged
// transaction's writes; that is not guaranteed against.
// With several nodes transactions are refused with ErrInvalid
// (TxnRefusal; protocol.TxnRefusal names the keyspaces that run them).
//
// Failures: a replica answers only after its write is durable (persist
// before send), so an acknowledged write survives crashes of all but the
// replicas that acknowledged it. A fast-path read (Replica.fastPath)
// replies with the stored record and nothing else, through
// env.ReplyRead: the real runtime lets it leave before its batch's sync
// when the key has no write waiting for one, since the record is then
// durable already (package node, "Early reads").
//
// Published reads: a fast-path read also offers its reply for the later
// reads of the key at its level (env.PublishRead); the real runtime
// answers those without the protocol, on the connection's goroutine,
// until the key's record is next written on this node (a store Put
// withdraws it before the writing handler returns, so before anything
// the write makes visible leaves), and only for a client with nothing of
// its own in flight. That is the answer the fast path itself would give:
// it depends on nothing but the stored record, and the one thing that
// makes the fast path decline, a version younger than the commit wait,
// is excluded by publishing only versions older than 2δ (the wait's cap)
// or absences. Where the fast path applies at all (a one-replica
// keyspace, or ONE with a replica here) no other node writes this
// replica's record except through a message to this node, which is a
// store Put here. With sim.Config.PublishReads (scenario publish_reads)
// the simulator answers reads from them the same way, so the seeded fault
// runs check those answers (TestSwarmPublishedReads).
//
// A crashed coordinator's in-flight requests
// time out at their clients (outcome unknown). Messages are not
// retransmitted: a lost write, ack or repair costs the operation a timeout
// (the client retries), which keeps the baseline's message counts those of
// Cassandra's fast path.
//
// Storage failure: a failed store read refuses the one operation that made
// it (no ack, no answer from this replica; a fast-path write that could not
// read its key gets ErrUnavailable, nothing written or sent); a failed
// write stops the node (env.Env.FailStop), since it may or may not have
// taken effect, and nothing the handler queued leaves. TestSwarm runs a
// third of its seeded simulations with failing stores and torn crashes. The commit
// wait is asserted where an answer leaves (env.Invariant in reply): a
// broken one fails the seeded run, or stops the node in production.
package quorum
