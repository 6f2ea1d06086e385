// Package dirsc is the directory-based strongly consistent store of seed
// 002 (the thesis's "SC", §4.2; digest 002-003 Part A.2–A.5), protocol
// `sc`: write-invalidate, MSI-like coherence of rows between one frontend
// per region, under a central directory through which no data passes.
//
// # Roles
//
// Every node is a gateway: it hands its clients' requests to its region's
// frontend (dirgroup.Gateway, messages fe.fwd/fe.fwd_reply). A region's
// frontend (the thesis's Frontend over its per-DC Storage at QUORUM,
// §4.2.7, A.2) is a replicated state machine over the region's nodes: an
// rsm group per region ("sc.fe/<region>", every node of the region a
// member) whose state is each row's Modified/Shared/Invalid state, data
// and epoch fence, and whose leader serves the region's clients and talks
// to the directory (rules F8–F12). The directory knows a region's
// frontend by the region's first node (its canonical ID). The directory
// (A.2) holds per row its state, owner, copy
// set, a grant epoch and which frontends hold the current data (§4.2.6).
// It is replicated: the state machine of an rsm group (Raft,
// internal/protocol/rsm) of directory_replicas nodes placed round robin
// over directory_regions (non-frontend nodes first), so it survives the
// loss of a minority (seed 002 A.3: "State machine replication can be
// used"). With directory_shards, each shard's rows (by key prefix) have a
// group of their own in the shard's region, the others the default group
// (dirgroup, "Sharding"; seed 002 §5.4): every rule below is per row, and
// a row has one group, so they hold per group; a frontend sends a row's
// requests to its group (F7). TestSwarmSharded. Every change of a row is a command applied in log order on every
// replica, committed (durable on a majority) before anything it implies is
// sent; the group's leader alone drives what needs a clock and sends to
// frontends (D7). directory_replicas: 1 is the thesis's single directory.
//
// # Frontend rules (Alg. 4.1)
//
//	F1 A row's client operations queue in arrival order (the row lock of
//	   Alg. 4.1 line 2, without blocking anything else); the head is
//	   served when the state allows, then the next.
//	F2 In M, reads and writes are served locally; in S, reads are served
//	   locally while the Shared lease holds on this clock (ShareLease from
//	   when the granted request was sent). Otherwise the frontend sends
//	   request(Row, S) for a read or request(Row, M) for a write.
//	F3 A busy answer (the row is Processing) is retried after an
//	   exponential backoff with jitter drawn from Env.Rand (§4.2.10); a
//	   request or sync without an answer is resent.
//	F4 Grants and invalidations carry the directory's epoch. The frontend
//	   keeps (durably) the highest epoch it has taken (its fence) and
//	   ignores a grant at or below it: a grant overtaken by the
//	   invalidation that revokes it is never taken.
//	F5 A grant names the data epoch of the row's current value and the
//	   frontends that hold it. A frontend whose copy has that epoch takes
//	   the grant at once; otherwise it syncs the whole row from the
//	   sources in turn and accepts only a copy of that epoch (Alg. 4.1
//	   lines 11–13, "choose r somehow"). A write miss needs no data: the
//	   put replaces the whole row (A.3 gap). Taking M restamps the copy
//	   with the grant's epoch; writes are versioned (epoch, seq, node).
//	F6 An invalidation to I drops the row; to S downgrades an owner, whose
//	   copy stays durable as the row's data (write-back) and is read under
//	   a lease from the invalidation's arrival; the ack, sent once the new
//	   state is durable, reports the copy's data epoch. A resent downgrade
//	   does not extend the lease.
//	F7 A frontend sends its requests to the directory replica it last
//	   heard from (grants, busy answers and invalidations come from the
//	   leader) and to the next replica after a request went unanswered
//	   for ResendInterval, unless it heard from a leader since; a
//	   follower forwards a request to its leader (rsm proposal
//	   forwarding).
//
// A region's frontend is replicated (the issue's "frontend state lives on
// the region's nodes"):
//
//	F8  Every durable change of a row is a command of the region's group,
//	    applied in log order on every member, and committed before
//	    anything that depends on it leaves: a write in M (cmdWrite), a
//	    write miss taking M (cmdGrantWrite), a grant taken with synced or
//	    kept data (cmdInstall), an invalidation (cmdInval). A client is
//	    answered, and an invalidation acknowledged, only once its command
//	    is applied; the member that proposed it answers. Each command's
//	    application re-checks its condition on the applied state (M for a
//	    write, a grant above the fence, a kept copy still of the grant's
//	    data epoch), so a command proposed on a stale view takes no effect.
//	F9  The leader alone serves clients: a gateway sends each request to
//	    the leader its own member knows of; another member redirects it,
//	    unapplied, with a hint (the gateway retries, each attempt under a
//	    fresh ID, handled once per member). A leader that steps down drops
//	    its requests, syncs and reads, answers a write whose command is in
//	    flight "timeout" (outcome unknown) and redirects its queue. A
//	    gateway whose request is out to a member no longer the leader
//	    answers it "timeout" at once, so its client moves on.
//	F10 A local read (M, or S under a lease) is served only after a
//	    ReadIndex read point (rsm.Read) that this member has applied: a
//	    deposed leader cannot complete one, so it never serves a read the
//	    new leader's committed state contradicts. One read point serves the
//	    reads queued when it was asked. It costs one round trip within the
//	    region, like the thesis's per-DC QUORUM read.
//	F11 A Shared lease is this member's own: it starts on the clock of the
//	    member that sent the request (or received the downgrade) and is
//	    set only on that member when its command applies; any change of
//	    the row's state clears it. A new leader inherits no lease: it
//	    requests S again before serving S reads.
//	F12 A Sync is answered by any member of the source region after a
//	    ReadIndex read point, so a lagging member or a deposed leader never
//	    hands out a copy of the right epoch missing committed writes.
//
// # Directory rules (Alg. 4.2, gaps closed)
//
//	D1 request(S) on an Invalid row (the thesis has no branch: "S while
//	   Invalid") grants S of the absent row with no sync; M of an
//	   Invalid row is granted at once (rows are created this way).
//	D2 While a row is Processing, requests from other frontends are
//	   answered busy (Alg. 4.2 line 6); a resend of the request being
//	   processed only updates its nonce. Each grant takes a new epoch,
//	   except an owner's request for M, re-granted at its epoch (its grant
//	   was lost, or the request is a stale copy it will ignore).
//	D3 Processing is replicated: a request is the command cmdRequest,
//	   whose application begins Processing (or answers busy, or
//	   re-grants, or grants at once: D1, D2) as a function of the applied
//	   state alone; the leader collects the acks and proposes cmdFinish
//	   with them, whose application ends Processing with the new state
//	   under the next epoch. A cmdFinish for a Processing already ended
//	   (proposed twice, or by a deposed leader) is ignored. Epochs are
//	   replicated state, so grants' epochs stay monotonic across leaders.
//	D4 Sharers hold S under a lease: the leader waits for a silent
//	   sharer at most L·(1+ρ)/(1−ρ) on its clock from when it applied the
//	   sharer's grant (every replica times the lease from its own
//	   application, which follows the request and a downgraded owner's
//	   ack; after a restart, from the replay or the snapshot's restore),
//	   so a dead or partitioned sharer delays a write by at most a
//	   stretched lease.
//	   The owner in M holds the only current copy and has no lease: a
//	   write or read miss waits for it (A.3, "Faults").
//	D5 The owner's ack says whether it took M: if its data epoch is the
//	   owner's grant epoch its copy becomes the current data, else the
//	   previous data (and its holders) stay current.
//	D6 The requester is left out of its own invalidation set when it asks
//	   for M (its copy is current); when the recorded owner itself asks
//	   for S, it is downgraded like any owner: frontends handle
//	   invalidations while their own request waits, so this cannot
//	   deadlock (the thesis's blocking row lock would).
//	D7 Only the leader acts: it sends busy answers, invalidations and
//	   grants as it applies commands. A replica that becomes leader
//	   resumes every Processing row: it sends the invalidations again
//	   (a frontend acks a repeated one without change; one older than its
//	   fence is harmless) and collects the acks afresh. A deposed leader's
//	   grants are of committed states; a stale one is fenced (F4).
//	D8 The directory addresses a region, not a node: its state names a
//	   region's frontend by the region's first node; a grant or busy answer
//	   goes to the member that sent the request (a resend from another
//	   member of the region takes over the request); an invalidation goes
//	   to the member of the region it last heard from, and to the region's
//	   next member when unanswered. A follower proposes the invalidation
//	   (rsm forwards it to its leader) and acknowledges it once applied.
//
// # Guarantee
//
// Every key is linearizable (checked with Porcupine, internal/check): a
// write is served only by the frontend holding M, granted after every
// other copy was invalidated or its lease ended (D4), so at every moment
// either one frontend may serve the row or several serve the same value.
// A read in S returns the value synced of the current data epoch (F5),
// which no write can change while its lease holds. A grant is sent only for a
// committed command, so every grant (from any leader) is of one
// replicated sequence of row states. TestSwarm checks this under crashes
// of gateways, frontends and directory replicas (leaders included; 1 or 3
// replicas), of region frontend members (leaders included; one, two or
// three members a region), partitions, loss, duplication, reordering and
// faulty stores (2000 seeds pass), and TestSwarmSnapshots with the groups'
// logs compacted every 2–6 entries; TestTeethNoInvalidationWait shows the
// checker rejects a directory that does not wait for acks.
//
// Frontend failover (TestFrontendFailover: region a's frontend leader,
// of three members, is killed mid-run and restarts 2s later): the history
// stays linearizable and another member of region a answers a client
// within op_timeout + 2·resend_interval + 2·2·E·frontend_tick + 4 round
// trips (a closed-loop client may wait out its gateway's timeout; one
// split vote allowed); over 20 seeds (16 keys) the mean is 0.15s, the
// worst 0.40s, with a bound of 2.2s. With 4 contended keys a region may
// wait longer for a row after failover: busy answers back it off while
// other regions keep taking the row (no fairness, A.3). Losing a frontend member for good
// (TestFrontendLoss: the leader never restarts) loses no acknowledged
// write: every key's last acknowledged write before the loss is read or
// overwritten after it, and the history is linearizable.
//
// Directory failover (TestFailover: the leader of three replicas is killed
// mid-run): the history stays linearizable, and another replica grants
// within 2·E·tick (the longest election timeout) + 3·E·tick (one split
// vote) + 2·resend_interval + a stretched lease + 4 round trips: over 200
// seeds the mean is 0.66s and the worst 1.78s, under the 2.0s bound at
// E·tick = 200ms. The tail is split votes: the two surviving replicas
// campaign within a one-way delay of each other about half the time in
// that world (rsm doc.go, "Determinism"). It was worse (9 of 200 seeds
// over the no-split bound, up to 2.3s, six splits in a row) until rsm
// stopped resetting election timers when an election is lost. On real
// processes (internal/server TestDirectoryFailoverOnRealServers: nine
// processes in three regions 30ms apart, replicas on the second nodes, the leader found by the directory_leader gauge and killed with
// -9) a write miss succeeds again within 4·E·tick (a split vote) +
// 2·resend_interval + a stretched lease + 4 round trips + 1.5s of slack
// for scheduling the processes on a shared machine (3.94s there;
// measured 0.59–2.53s over 8 runs before the election fix) and the
// history stays linearizable.
//
// Not guaranteed: availability of a row whose owner region has lost a
// majority of its nodes or is cut off (no lease bounds M; a region of one
// or two nodes tolerates no loss), nor of any row while a majority of the
// directory replicas is down or cut off, nor between a leader's loss and
// the next election. A node whose disk is wiped must not rejoin under its
// old identity (it would forget its votes; rsm has no membership
// change): it stays lost. The groups' logs are compacted by rsm snapshots
// every directory_snapshot_entries and frontend_snapshot_entries entries
// (the replicated fields of the rows: a restored directory replica times
// every sharer's lease from the restore, as a replay would, D4; a
// restored frontend member holds no lease, F11); every frontend member
// keeps every row in memory. Queued
// operations that time out are refused as unavailable and never applied.
// A duplicated Fwd reaching a frontend member restarted since the
// original is not recognised (the dedup window is in memory); the
// simulator delivers duplicates within a network delay, shorter than any
// restart.
//
// # Clock assumption
//
// Every clock's rate is within ρ = MaxDriftPPM of true time; offsets do
// not matter, since each node measures only durations on its own clock
// (env.Env.Now, which never steps). A sharer's lease starts on its clock
// before the directory's grant (or, for a downgraded owner, before its
// ack) and lasts L on its clock, at most L/(1−ρ) true time; the leader
// waits L·(1+ρ)/(1−ρ) on its clock, at least L/(1−ρ) true time, from a
// later instant (its application of the grant), so the lease is over
// first. The lease is timed on the member that sent the request (F11), so
// no two clocks are compared. The groups assume no clock for safety (rsm).
package dirsc
