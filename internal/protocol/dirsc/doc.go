// Package dirsc is the directory-based strongly consistent store of seed
// 002 (the thesis's "SC", §4.2; digest 002-003 Part A.2–A.5), protocol
// `sc`: write-invalidate, MSI-like coherence of rows between one frontend
// per region, under a central directory through which no data passes.
//
// # Roles
//
// Every node is a gateway: it forwards its clients' requests to its
// region's frontend (the region's first node) and relays the answer
// (Fwd/FwdReply; the frontend ignores a duplicated Fwd). The frontend
// holds each row Modified, Shared or Invalid with its data in its store
// (§4.2.7). The directory (A.2) holds per row its state, owner, copy
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
//	   for ResendInterval; a follower forwards a request to its leader
//	   (rsm proposal forwarding).
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
//	   ack; after a restart, from the replay), so a dead or partitioned
//	   sharer delays a write by at most a stretched lease.
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
// replicas), partitions, loss, duplication, reordering and faulty stores
// (2000 seeds pass); TestTeethNoInvalidationWait shows the checker rejects
// a directory that does not wait for acks.
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
// processes (internal/server TestDirectoryFailoverOnRealServers: six
// processes in three regions 30ms apart, replicas on the non-frontend
// nodes, the leader found by the directory_leader gauge and killed with
// -9) a write miss succeeds again within 4·E·tick (a split vote) +
// 2·resend_interval + a stretched lease + 4 round trips + 1.5s of slack
// for scheduling six processes on a shared machine (3.94s there;
// measured 0.59–2.53s over 8 runs before the election fix) and the
// history stays linearizable.
//
// Not guaranteed: availability of a row whose owner is down or cut off
// (no lease bounds M; intra-region replication of frontend state is out
// of scope), nor of any row while a majority of the directory replicas
// is down or cut off, nor between a leader's loss and the next election.
// The group's log is never compacted (rsm has no snapshots): a restarted
// replica replays it all. Queued
// operations that time out are refused as unavailable and never applied.
// A duplicated Fwd reaching a frontend restarted since the original is
// not recognised (the dedup window is in memory); the simulator delivers
// duplicates within a network delay, shorter than any restart.
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
// first. The directory group assumes no clock for safety (rsm).
package dirsc
