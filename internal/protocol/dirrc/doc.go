// Package dirrc is directory-based release consistency ("RC", seed 002:
// thesis §4.3; digest notes/002-003 Part A, A.2, A.4, A.5), registered as
// protocol rc.
//
// # Algorithm
//
// Roles: every node is a gateway (dirgroup.Gateway, messages
// fe.fwd/fe.fwd_reply) and a member of its region's frontend: an rsm group
// over the region's nodes ("rc.fe/<region>": the thesis's Frontend over
// its per-DC Storage, rules F1–F6) whose leader acts as the region's
// frontend. directory_replicas nodes of directory_regions run the
// directory as one rsm group (Raft), placed by internal/protocol/dirgroup.
// The directory knows a region's frontend by the region's first node (its
// canonical ID; rule D8).
// With directory_shards, each shard's rows (by key prefix) have a
// directory group of their own in the shard's region, the others the
// default group (dirgroup, "Sharding"; seed 002 §5.4): the rules below
// are per row and a row has one group, so they hold per group; a frontend
// leader sends a row's fe_acquire and fe_release to its group and
// heartbeats each group apart (rules 7, R5). TestSwarmSharded.
//
//  1. Clients call acquire(key) and release(key) (wire.OpAcquire,
//     OpRelease; RESP LC.ACQUIRE / LC.RELEASE) around their reads and
//     writes. A gateway hands every request to its region's frontend
//     leader.
//  2. The frontend keeps per row the set of its clients holding it (the
//     thesis's per-row counter is its size). The first acquire sends
//     fe_acquire; the last release sends fe_release (§4.3.1). Clients of
//     one frontend share a hold. Reads and writes are served from the
//     region's copy only for a client that holds the row; otherwise
//     they are refused (ErrInvalid, naming the rule); so is a release
//     without an acquire.
//  3. The directory keeps a FIFO queue of frontends per row: fe_acquire
//     enqueues, fe_release dequeues the head (§4.3.1). Each fe_acquire
//     carries a fresh nonce; one from a frontend already queued under
//     another nonce gives up its old place (it lapsed, restarted or has a
//     new leader): if it was the head, that is its release, and it goes
//     to the back. Nonces count up across a region's frontend leaders
//     (the leader's Raft term in the high 32 bits, rule F3): an older one
//     (reordered, forwarded late by a directory follower, or a deposed
//     leader's) is ignored.
//  4. A new head is granted the row at a new epoch, with the sync chain:
//     the former holders to sync from, newest first (the thesis names the
//     last releaser).
//  5. Lazy sync at acquire: the head asks the chain's frontends in order
//     for a copy current as of their epoch (SyncReq, to any member of the
//     entry's region); a region knows its copy's epoch (replicated with
//     the copy, rule F1). The first current copy is committed in the
//     region's group as current as of the grant's epoch before any
//     client is answered. An entry that is the region itself is checked
//     by a command of its group: no message (the thesis's "unless it was
//     itself the previous releaser"; rule F5). The chain is one entry when the previous head reported
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
// A region's frontend is replicated (the issue's "frontend state lives on
// the region's nodes": the thesis's per-DC Storage at QUORUM):
//
//	F1. The region's copy of each row and the epoch it is current as of
//	    are the state machine of the region's group, changed only by
//	    commands applied in log order on every member: a write under a
//	    hold (cmdWrite, naming the hold's epoch; it takes effect only if
//	    the copy is current as of that epoch when applied) and an install
//	    (cmdInstall: the copy becomes current as of a grant's epoch, with
//	    synced data or, for a chain entry naming the region, with its own
//	    copy if that is current as of the entry's epoch when applied; a
//	    lower epoch than the copy's takes no effect). A client is answered
//	    a write, and waiting clients are admitted, only once the command is
//	    applied; the member that proposed it answers.
//	F2. The leader alone serves clients: a gateway sends each request to
//	    the leader its own member knows of; another member redirects it,
//	    unapplied, with a hint (dirgroup.Gateway). A holder's reads,
//	    writes and release wait in the row's queue and are served one at a
//	    time, in arrival order, each only while the hold is servable (rule
//	    6): a release is answered after the holder's earlier writes are
//	    applied and while the lease runs, so the next holder's sync, which
//	    follows the directory's end of the hold, sees them. A release after
//	    the lease ran out is refused (the hold lapsed): no promise is made
//	    for its writes.
//	F3. Holds, holders, waiting acquires, leases and the heartbeats'
//	    bookkeeping are the leader's, in memory: not replicated. A leader
//	    that steps down drops them (waiting acquires and queued operations
//	    are redirected, unapplied; a write whose command is in flight is
//	    answered "timeout", outcome unknown), so its clients' holds end:
//	    the new leader refuses their accesses and releases (ErrInvalid).
//	    A new leader starts every row idle and inherits no lease: it asks
//	    the directory again (its fe_acquire, of a later term, supersedes
//	    the region's old place, rule 3). A leader hands back an unknown
//	    grant (fe_release) only if its nonce is of its own term or an
//	    earlier one, whose leader can commit nothing more; a follower
//	    ignores grants.
//	F4. A read is served only after a ReadIndex read point (rsm.Read)
//	    this member has applied, and only while the hold is servable: a
//	    deposed leader that does not know it yet (its lease may still
//	    run) cannot complete one, and commits nothing, so it never serves
//	    a read or acknowledges a write the new leader's state contradicts.
//	    It costs one round trip within the region, like the thesis's
//	    per-DC QUORUM read (none with one node a region).
//	F5. The leader's lease (rule 6) is timed on its own clock, from its
//	    own fe_acquire and heartbeats; the directory's deadline counts from
//	    its receipt of them. So no two clocks are compared, and a lease is
//	    never carried from one leader to the next.
//	F6. A SyncReq is answered by any member of the source region after a
//	    ReadIndex read point, so a lagging member or a deposed leader never
//	    hands out a copy, current as of the asked epoch, that misses a
//	    committed write.
//
// And the directory addresses regions:
//
//	D8. The directory's queues and chains name a region by its canonical
//	    ID; a grant goes to the member of the region it last heard from
//	    (an fe_acquire, fe_release or heartbeat, also through a command),
//	    or to the member whose resend it answers; a heartbeat's answer goes
//	    to its sender. A grant that reaches a member that is not the leader
//	    is dropped: the leader's resend of its fe_acquire is answered.
//
// A forced release (rule 7) keeps what the evicted holder wrote: the next
// head syncs from it (rule 5) — it waits for a member of the evicted
// region to answer (after a partition heals, or while a majority of the
// region's nodes is up: its group's log holds every write it
// acknowledged). A client released for it (rule 8) likewise keeps its
// acknowledged writes: they stay in the region's copy.
//
// # Guarantee
//
// Release consistency as check.ReleaseConsistent states it: every read a
// client makes while it holds a key sees every write of the key whose
// writer's release returned OK before the read's acquire was called (it
// returns that write or a write not overwritten by it in real time). Under
// crashes of frontend members (leaders included; one, two or three a
// region), directory replicas, gateways and clients, partitions, loss,
// duplication, reordering and faulty stores (TestSwarm: 3000 seeds
// pass). Why a frontend leader's change keeps it: a write released OK was
// committed in its region's group while the hold's lease ran (F2); the
// directory ends that hold only after the lease (rule 7), on the leader's
// own fe_release, or on a later leader's fe_acquire, and a later leader's
// election means the earlier one can commit nothing more; the next
// holder's sync takes a read point after that end (F6), so it sees the
// write. A deposed leader that does not know it can neither complete a
// read point nor commit (F4). Not guaranteed: anything
// for writes whose release did not return OK (forced releases keep them in
// practice, but the checker does not require it); reads outside a hold
// (refused); holds across a change of the region's frontend leader (they
// end, F3); progress: a row waits while a majority of its directory's
// replicas, or of the region it must sync from, is down or cut off
// (acquire_timeout refuses the waiting clients; a region of one or two
// nodes tolerates no loss).
// TestSwarmSnapshots: TestSwarm's runs with the directory's and the
// frontend groups' logs compacted every 2–6 entries.
// TestTeethNoSyncAtAcquire: without the sync at
// acquire the checker rejects the history. TestFailover: the directory's
// leader killed mid-run, another replica grants within a stated bound and
// the history passes (three nodes a region, so the killed replica's
// region keeps a frontend majority; over 200 seeds the mean is 0.67s, the
// worst 1.75s, bound 2.22s). On real processes (internal/server
// TestRCDirectoryFailoverOnRealServers: nine processes in three regions
// 30ms apart, the leader found by the directory_leader gauge and killed
// with -9) an acquire, write and release from another region succeeds
// within the bound (the simulator's plus one split vote, an election of
// the killed node's region group and 1.5s of slack: 4.56s; measured
// 0.71 and 0.73s in two runs) and the history is release consistent.
//
// Frontend failover (TestFrontendFailover: region a's frontend leader, of
// three members, is killed mid-run and restarts 2s later): the history
// passes and another member of region a answers a client within
// 2·2·E·frontend_tick (one split vote) + resend_interval +
// heartbeat_interval + 10 round trips (the regions queued ahead release
// first): over 20 seeds the mean is 0.38s, the worst 0.83s, bound 2.05s.
// Losing a frontend member for good (TestFrontendLoss: the leader never
// restarts) loses no write released OK: each key's last such write
// before the loss is read or overwritten after it, and the history
// passes.
//
// # Clock assumption
//
// Only rates: every clock's rate is within ρ (max_drift_ppm) of true
// time. No bound on offsets (check "auto" is used whatever they are). Rule
// 6's lease then ends in real time before the directory's deadline of rule
// 7 (and R4's grace covers a deposed leader's last answers, which needs
// rsm's step-down within 2E+1 ticks of losing its majority), so a
// forcibly released frontend has stopped serving before the next head is
// granted. The lease is timed on the region leader that sent the
// fe_acquire and heartbeats (F5); no leader assumes its predecessor's.
// (A frontend asked to sync by a newer grant while its lease runs no
// longer asserts a broken clock: a deposed leader that does not know it
// yet is asked so legitimately, and drops the hold.) The frontend groups
// assume no clock for safety (rsm).
//
// # Crashes
//
// The directory's rows live in its group's log and snapshots (rsm: a
// snapshot of the rows every directory_snapshot_entries entries; a
// restarted replica restores the latest and replays the log after it,
// giving every head a full hold_lease from then, as a replay would): it
// is available while a majority of its replicas is up and connected
// (with directory_replicas = 1, the thesis's single directory, a crashed
// directory is unavailable until it restarts, and leads at once). The
// default is 3, as sc's. Its cost under heavy storage faults: each log
// entry is a few store writes on every replica, so with 1% of writes
// failing a leader fail-stops about once a second, and each change costs
// an election and rule R4's grace. In simtest's faulty run
// (TestEveryProtocolIsDeterministic: globlease4, 12 closed-loop clients,
// every fault, 1% store errors, replicated frontends) seed 7 completes 26
// operations with 3 replicas (32 fail-stops) and 59 with 1. Snapshots
// ended the restart's replay of the whole log but not the churn. A new
// leader gives every head a full hold_lease and more (rule
// R4). A region's copies and their epochs live in its frontend group's
// log and snapshots (every frontend_snapshot_entries entries; every member
// keeps every row in memory): the region's frontend is available while a
// majority of its nodes is up and connected. Its leader keeps holds,
// waiting clients and leases in memory only (F3): a restart or a change
// of leader drops them; the directory's heartbeat timeout, or the new
// leader's next fe_acquire, ends the old hold. A duplicated fe.fwd
// reaching a member restarted since the original is not recognised (the
// dedup window is in memory); the simulator delivers duplicates within a
// network delay, shorter than any restart.
package dirrc
