// Package dirrc is directory-based release consistency ("RC", seed 002:
// thesis §4.3; digest notes/002-003 Part A, A.2, A.4, A.5), registered as
// protocol rc.
//
// # Algorithm
//
// Roles: every node is a gateway; a region's first node is its frontend
// (the thesis's Frontend, with the node's store as the region's Storage);
// directory_replicas nodes of directory_regions run the directory as one
// rsm group (Raft), placed by internal/protocol/dirgroup. With
// directory_shards, each shard's rows (by key prefix) have a group of
// their own in the shard's region, the others the default group
// (dirgroup, "Sharding"; seed 002 §5.4): the rules below are per row and
// a row has one group, so they hold per group; a frontend sends a row's
// fe_acquire and fe_release to its group and heartbeats each group apart
// (rules 7, R5). TestSwarmSharded.
//
//  1. Clients call acquire(key) and release(key) (wire.OpAcquire,
//     OpRelease; RESP LC.ACQUIRE / LC.RELEASE) around their reads and
//     writes. A gateway forwards every request to its frontend (Fwd);
//     the frontend drops a duplicate of a Fwd it took (in memory: a copy
//     arriving after its restart is not recognised).
//  2. The frontend keeps per row the set of its clients holding it (the
//     thesis's per-row counter is its size). The first acquire sends
//     fe_acquire; the last release sends fe_release (§4.3.1). Clients of
//     one frontend share a hold. Reads and writes are served from the
//     frontend's store only for a client that holds the row; otherwise
//     they are refused (ErrInvalid, naming the rule); so is a release
//     without an acquire.
//  3. The directory keeps a FIFO queue of frontends per row: fe_acquire
//     enqueues, fe_release dequeues the head (§4.3.1). Each fe_acquire
//     carries a fresh nonce; one from a frontend already queued under
//     another nonce gives up its old place (it lapsed or restarted): if it
//     was the head, that is its release, and it goes to the back. Nonces
//     count up within a frontend's incarnation (random high bits): an
//     older one of the same incarnation (reordered, or forwarded late by
//     a directory follower) is ignored.
//  4. A new head is granted the row at a new epoch, with the sync chain:
//     the former holders to sync from, newest first (the thesis names the
//     last releaser).
//  5. Lazy sync at acquire: the head asks the chain's frontends in order
//     for a copy current as of their epoch (SyncReq); a frontend knows its
//     copy's epoch (persisted when it became current). The first current
//     copy is stored and the epoch persisted before any client is
//     answered. An entry that is the frontend itself is checked locally:
//     no message (the thesis's "unless it was itself the previous
//     releaser"). The chain is one entry when the previous head reported
//     its copy current (heartbeat or fe_release); a head that left without
//     reporting it (crashed, lapsed) is put in front of the older entries,
//     because it may or may not have synced and written.
//  6. A frontend serves a held row only within its lease: T·(1−ρ)/(1+ρ)
//     on its clock from sending the fe_acquire the grant echoes (Grant.Sent:
//     one the directory received before it last set the head's deadline
//     to T; none echoed: the attempt's first), extended by each heartbeat
//     the directory answers, measured from its sending. A grant whose
//     lease is over on arrival is not taken: the frontend's next resend
//     of the same fe_acquire asks the leader to renew and echo it.
//  7. Heartbeats: a frontend heartbeats its holds every
//     heartbeat_interval; the directory renews a head's deadline to T
//     (hold_lease) on its clock from receipt and forces the release of a
//     head it has not heard from for T (the thesis's proposed heartbeat
//     and timeout, §4.3.3, built here). The heartbeat's answer also tells
//     a frontend that others wait, so it stops admitting new local clients
//     until its holders release (the starvation the thesis's design
//     allows, digest A.4 [I]).
//  8. Clients heartbeat by sending requests: a client holding a row that
//     sends none for hold_timeout is released by its frontend, so a
//     crashed client or one that never releases cannot wedge a row; its
//     later accesses and its release are refused with an error.
//
// The directory is replicated (seed 002 A.3, "State machine replication
// can be used"; internal/protocol/rsm):
//
//	R1. fe_acquire, fe_release, a heartbeat's report that the head's copy
//	    is current, and a forced release (naming the epoch it ends) are
//	    commands of the group, applied in log order on every replica: the
//	    queues, epochs, confirmations and chains of rules 3–5 are the same
//	    on every replica. A follower's proposal goes to the leader.
//	R2. The leader sends each grant as it applies it: the command is in a
//	    majority's durable logs, so persist before send holds.
//	R3. Heartbeat deadlines (rule 7) are the leader's, in memory: only the
//	    leader answers heartbeats and renews; its timer proposes a forced
//	    release for an expired head, and from then on it renews that head
//	    no more. A grant echoes (rule 6) the Sent of the fe_acquire command
//	    it applies (in the log: every leader echoes the same), or, resent
//	    to a head that asks again, that fe_acquire's — only by a leader
//	    that is ready (R4) and not forcing the head out, which renews the
//	    head's deadline to T as it does for a heartbeat; else none.
//	R4. A new leader first proposes a barrier command and answers no
//	    heartbeat until it has applied it (so every forced release an
//	    earlier leader proposed is applied first); it gives every head
//	    hold_lease plus (2E+1) ticks, stretched by ρ, before it may force
//	    it out (a deposed leader may answer heartbeats until rsm steps it
//	    down, rsm rule 5); and it sends every head's grant again.
//	R5. A frontend sends to the replica it last heard a grant or heartbeat
//	    answer from, and moves to the next after resend_interval +
//	    heartbeat_interval without a word while it has rows outstanding.
//
// A forced release (rule 7) keeps what the evicted holder wrote: the next
// head syncs from it (rule 5) — it waits for the evicted frontend to
// answer (after a partition heals or it restarts; its store holds every
// write it acknowledged). A client released for it (rule 8) likewise keeps
// its acknowledged writes: they stay in the frontend's copy.
//
// # Guarantee
//
// Release consistency as check.ReleaseConsistent states it: every read a
// client makes while it holds a key sees every write of the key whose
// writer's release returned OK before the read's acquire was called (it
// returns that write or a write not overwritten by it in real time). Under
// crashes of frontends, the directory, gateways and clients, partitions,
// loss, duplication and reordering (TestSwarm). Not guaranteed: anything
// for writes whose release did not return OK (forced releases keep them in
// practice, but the checker does not require it); reads outside a hold
// (refused); progress: a row waits while its directory or the frontend it
// must sync from is down or cut off (acquire_timeout refuses the waiting
// clients), or while a majority of the directory's replicas is.
// TestSwarmSnapshots: TestSwarm's runs with the directory's log compacted
// every 2–6 entries. TestTeethNoSyncAtAcquire: without the sync at
// acquire the checker rejects the history. TestFailover: the directory's
// leader killed mid-run, another replica grants within a stated bound and
// the history passes. On real processes (internal/server
// TestRCDirectoryFailoverOnRealServers: six processes in three regions
// 30ms apart, the leader found by the directory_leader gauge and killed
// with -9) an acquire, write and release from another region succeeds
// 0.55–1.34s after the kill (bound 3.76s: the simulator's plus one split
// vote and 1.5s of slack) and the history is release consistent.
//
// # Clock assumption
//
// Only rates: every clock's rate is within ρ (max_drift_ppm) of true
// time. No bound on offsets (check "auto" is used whatever they are). Rule
// 6's lease then ends in real time before the directory's deadline of rule
// 7 (and R4's grace covers a deposed leader's last answers, which needs
// rsm's step-down within 2E+1 ticks of losing its majority), so a
// forcibly released frontend has stopped serving before the next head is
// granted; a frontend asked to sync by a newer grant asserts it
// (env.Invariant).
//
// # Crashes
//
// The directory's rows live in its group's log and snapshots (rsm: a
// snapshot of the rows every directory_snapshot_entries entries; a
// restarted replica restores the latest and replays the log after it,
// giving every head a full hold_lease from then, as a replay would): it
// is available while a majority of its replicas is up and connected
// (with directory_replicas = 1, a crashed directory is unavailable until
// it restarts, and leads at once). The default is 1: under storage faults
// a group of 3 changes leader too often. Each log entry is a few store
// writes on every replica, so with 1% of writes failing the leader
// fail-stops about once a second, and each change costs an election and
// rule R4's grace. In simtest's faulty run (TestEveryProtocolIsDeterministic,
// globlease4, 12 closed-loop clients, every fault, 1% store errors) seed
// 7 completes 36 operations with 3 replicas and 94 with 1; seeds 1–30,
// 1045 and 2092 in all. Snapshots ended the restart's replay of the whole
// log but not the churn: without compaction seeds 1–30 complete 1122 with
// 3 replicas (a compaction's deletions are store writes that may fail
// too). A new leader gives every head a full hold_lease and more (rule
// R4). Frontends keep holds, waiting clients and leases in memory only: a
// restart drops them, the directory's heartbeat timeout or the frontend's
// next fe_acquire ends the old hold; its store keeps the rows and their
// epochs.
package dirrc
