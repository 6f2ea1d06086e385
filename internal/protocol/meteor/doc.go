// Package meteor is MeteorShower (seed 000, §4.2 from line 2266; digest
// seeds/notes/000-*.md §2): majority-quorum replication whose reads skip
// the request leg of the WAN round trip. Replicas push status messages
// every dispatch interval; the replica nearest a read's gateway answers it
// from its own store and the statuses it already has.
//
// The thesis' proof (Lemma 3, line 2625) needs every read to see a
// consistent cut of the store as of T_read − θt, and status messages alone
// do not give one: a read's statuses show each replica at a different moment,
// so two readers can see two writes to different keys in opposite orders
// (IRIW; the first version of this package had that gap, and the global
// checker found it in about 1 in 700 fault runs). This package makes the cut
// exact by adding three things to the thesis' algorithm: multi-version
// chains, closures carried by the status messages, and commit resolution.
// Reads still need no request leg: everything they use is pushed.
//
// # Algorithm
//
// Placement is the quorum protocol's: ReplicasPerRegion replicas of each
// key in every region (internal/ring). n is the number of replicas of a
// key, w the keyspace's write acknowledgements (ONE 1, QUORUM ⌊n/2⌋+1,
// ALL n); reads use n − w + 1 replicas, so r + w > n.
//
//   - Write (Fig. 4.15b, 4.14b). The gateway stamps the write with its HLC
//     set ahead of its own closure by the key's lead (the w-th smallest
//     one-way latency to the replicas it sees up, plus ε and WriteLead;
//     LeadAll: the largest), and after the client's order floor, and sends {Key, Update, Ts, Vn} to
//     every replica. A replica applies it — adds it to the key's chain of
//     versions, durably, and registers it for its next status — if its
//     closure has not passed the timestamp, and answers Ack; otherwise it
//     keeps the record as an unapplied copy and answers Rej. The write
//     succeeds on w Acks. If n − w + 1 replicas refused it, it can never
//     commit, and the gateway stamps it again (from a timer) with twice the
//     lead. Copies that have not been answered are resent.
//   - Closure. Every DispatchInterval (10 ms) each node sends every peer a
//     status {Payload, MsgTs, Seq, Redundant} (Fig. 4.13a, §4.2.3), even
//     when empty: the versions it applied since its last status, a sequence
//     number, the previous Redundant payloads, and MsgTs — its closure, the
//     time up to which it promises to hold no version it has not reported.
//     It keeps the promise by refusing writes stamped at or before its
//     closure, which is at least its clock and is stored ahead of time so a
//     restart keeps it. A status promises its clock plus ClosureLead
//     (default 13 ms, below ε + WriteLead: "Closures ahead of the clock",
//     below). A receiver applies payloads in Seq order (the
//     status map, Fig. 4.13b); redundancy fills gaps, and a gap it cannot
//     fill, a restarted sender (new epoch) or a restarted receiver makes the
//     receiver relearn a key's state at that peer by pulling it.
//   - Commit. A version is committed when w replicas have applied it. It is
//     known committed once w replicas' statuses report it, and known never
//     to commit once n − w + 1 replicas have closed past its timestamp
//     without it. Applied versions are durable and closures are kept, so
//     neither verdict ever changes.
//   - Reads (Fig. 4.15a, 4.14a). The gateway sends the read, with view
//     time T = max(T_read − θt, the client's order floor), to the nearest
//     replica. That replica needs n − w + 1 replicas whose closure has
//     passed T (its own counts once its own closure has, and it may raise
//     its own closure to T if T is at most ClosureLead ahead of its clock,
//     as its statuses would); then every
//     committed version stamped at or before T was applied by one of them
//     before it closed (r + w > n; the thesis' Lemma 1 argument), so it is
//     among the versions they report. It returns the newest of those that
//     is committed, skipping versions known never to commit, and waits in
//     the read subscription map while the newest candidate is undecided;
//     it is re-checked on every status, pull answer and local write. If the
//     replica does not hold the value (only an unapplied copy, or not even
//     that), it serves the copy or pulls the value from a replica that has
//     it.
//   - θt (Keyspace.Theta): M1 uses 0; M2 the write level's order statistic
//     of the gateway's one-way latencies to the replicas (ONE minimum,
//     QUORUM median, ALL maximum), less ε (§4.2.5). θt decides only how
//     long reads wait and how stale they may be, never what they may
//     return. Latencies are minimum one-way delays: the world's base delays
//     in the simulator; on the real server, half the minimum round trip the
//     transport's pings have measured, or the world's delays until a link
//     is measured.
//   - Program order. The gateway keeps each client's floor: the largest
//     view time or write timestamp of its completed operations. Reads view
//     at or after it and writes are stamped after it. A gateway stores a
//     bound above its stamps before a write stamped beyond it leaves, and
//     its closure's bound (at least its clock) before a read leaves; after
//     a restart every client's floor starts above both, and the HLC above
//     the first.
//   - Compaction. Each sweep raises the replica's watermark to its closure
//     less Horizon (closure, not clock: it never goes back, and a restart
//     resumes above it). A replica keeps the versions above the watermark
//     and the newest committed one below, so it drops only versions older
//     than the key's committed base, or known never to commit. Reads
//     viewing at or below the watermark are refused (retryable), so no read
//     or compaction ever evaluates a version below a base, and absence from
//     a local chain or a status-built view stays exact; a pulled list is
//     exact above the sender's watermark and for versions newer than the
//     key's compaction floor there (the newest base it compacted below,
//     stored with the chain; both carried in the answer). A write copy stamped at or below the watermark gets no
//     answer (it may have been applied and compacted), and the watermark is
//     every client's order floor. A restart resumes it from the stored
//     closure bound.
//
// # Closures ahead of the clock (ours; ClosureLead)
//
// The thesis stamps a status with its send time (§4.2.3, line 2774: "A
// timestamp (MsgTs) is included when the status message is sent out"), and
// a read at t waits for n − w + 1 statuses stamped t − θt or later (Fig.
// 4.14a). With θt at its M2 bound, the one-way latency less ε, a status
// sent at t − θt would reach the serving replica about ε after the read
// began; but statuses leave only at each dispatch, so the thesis' own account
// of M2 (§4.2.5, line 2952) is "no later than t plus a status message
// dispatch interval": about half an interval (5 ms) above the ε floor on
// average, a whole one at worst, on every world.
//
// This package departs from the thesis here. A status promises its clock
// plus ClosureLead: the read rule needs of MsgTs only that the sender will
// never apply a version stamped at or before it beyond those it reported
// (the closure promise, from which r + w > n gives Lemma 1's intersection),
// and the sender keeps that promise by refusing such writes whatever its
// clock reads — the same rule as with MsgTs at the clock, whose safety
// already used no clock bound (Guarantee, below). So ClosureLead moves
// latency between reads and writes and never decides what a read returns:
// a read whose view time the statuses already received cover is answered
// at once; the price is that a write copy reaching a replica less than
// ClosureLead ahead of its stamp is refused there (kept as a copy), and
// restamped with twice the lead if n − w + 1 replicas refuse it
// (TestTeethClosureLead: a replica that refuses only what its clock has
// passed breaks the promise, and the checker rejects the runs). Writes are
// stamped ε + WriteLead ahead of their w nearest replicas' arrival, so
// ClosureLead must stay below that (Config.Validate). ClosureLead 0 is the
// thesis' rule and replays the thesis' behaviour; the thesis experiments
// (internal/bench/catalog_meteor.go) pin it, with WriteLead 10 ms. ReadFloor
// subtracts ClosureLead: a read may need no status in flight at all.
//
// # What an M2 read waits for
//
// The serving replica answers at once when n − w + 1 replicas' closures,
// as their last statuses tell, have passed the view time T, and the newest
// candidate at or before T is decided (committed or not). Measured (seed 1,
// meteor3, 60 s at 1,000 requests/s, per read: which condition it waited
// on last), a read waits for one of two things:
//
//   - T = T_read − θt. The nearest peer's newest status covers T when
//     ClosureLead ≥ ε + the interval's phase + the link's jitter, so the
//     default ClosureLead, ε + DispatchInterval + 1 ms (DefaultClosureLead),
//     answers nearly all such reads at once: p50 / p90 / p99 0.55 / 0.68 /
//     1.5 ms at the gateway, against 0.65 / 4.2 / 6.4 ms at the earlier
//     8 ms (workload b).
//   - T = the client's floor, the stamp of its own write that just
//     completed ("Program order", above; 92% of reads in workload a, 11%
//     in b). That stamp is ε + WriteLead past the write's arrival at its w-th
//     nearest replica, and a closure may be promised only ClosureLead
//     ahead, so the serving replica's peer in that replica's region (a
//     different node, for most keys) covers T only with its first status
//     from T − ClosureLead on: ε + WriteLead − ClosureLead (4 ms by default;
//     less is the write margin DefaultClosureLead keeps for jitter and
//     skew) less the jitter, plus the interval's phase, after the write's
//     answer. Median 2.8 ms, p99 15 ms (workload a). Raising ClosureLead
//     closer to ε + WriteLead trades these milliseconds for refused write
//     copies and restamped writes one to one in the jitter's tail, and only
//     a shorter interval shortens the phase (dispatch_interval=5ms: p99 7.5
//     ms in workload b, twice the statuses; 2.5ms: 5.8 ms, four times the
//     statuses, and closures stepping that often refuse five times as many
//     write copies as restamps in workload a).
//
// Candidates undecided (a version applied but not yet known committed or
// not) delayed fewer than 0.3% of reads.
//
// Asking a peer for a fresh status when a read cannot be proven was the
// other way considered: the request leg costs a one-way trip to the peer,
// more than the interval's phase on any WAN (50 ms against at most 10 ms on
// meteor3), and shorter intervals or a status on every write multiply the
// status messages, the overhead the thesis measures (meteor-status-interval).
//
// # Guarantee
//
// Sequential consistency across keys (Attiya–Welch; Theorem 1, line 2651),
// checked by check.Sequential on every seeded fault run. The witness is the
// thesis' construction with exact positions: order the committed writes by
// version, and put each read at its view time T, after every write stamped
// at or before T. Then:
//
//   - Legality: a read returns exactly the newest committed version of its
//     key at or before T (Reads, above), and every version a read returns
//     is committed; writes that never commit are in no read and left out.
//   - Program order (Lemmas 1–3): a client's view times never decrease and
//     are at least its earlier writes' timestamps (floor), and its writes
//     are stamped after its earlier view times and writes (floor, HLC). So
//     its operations are in program order in the witness — across keys,
//     which is Lemma 3.
//
// Safety uses no clock bound at all: closures, stamps and view times are
// compared as numbers, whatever the clocks read. Skew beyond ε costs only
// refused write copies and restamped writes (TestTeethClosure shows both,
// and that applying a write after the closure passed its timestamp is what
// the checker then catches). Reads are not linearizable: a read may miss a
// write that completed before it began (M2's staleness, θt).
//
// # Clock assumption
//
// None for safety, not even monotonic clocks: every promise is kept by
// values that only grow (closure, watermark, stamp bound) and are stored
// before they leave. For liveness and latency: any two nodes' clocks differ
// by at most ε = MaxClockSkew (§4.2.2, |t1 − t2| ≤ ε; default 2 ms); larger
// skew makes writes be refused and restamped, and reads wait longer or are
// refused as too old after a clock steps back. The seeded fault runs step
// clocks by up to ±3 s (TestSwarm, TestClockSteps).
//
// # Failures
//
// A replica answers only after its write is durable (persist before send),
// and a status leaves only after the closure's stored bound covers it. A
// crashed gateway's requests time out at their clients (outcome unknown). A
// read goes to the nearest replica, as in the thesis; if no answer comes,
// the gateway resends it to the next-nearest replica, and so on: every
// replica answers a view time with the same version, so any may serve it.
// Writes need w replicas up; with the default lead, a
// write in flight when one of its w nearest replicas fails may time out
// (outcome unknown) until the gateway's status map shows the replica down.
//
// # Storage failure and invariants
//
// Storage failure is fail-stop. A failed write (a chain, the floor, the
// stamp or closure bound, the boot marker) stops the node (put;
// env.Env.FailStop): it may or may not have taken effect, and nothing the
// handler queued leaves. A failed read refuses only the operation that
// made it — a write copy gets no answer, a read or pull waits or goes
// unanswered, a compaction is skipped — except at Start, where the stored
// bounds are promises a restart must keep: a failed read there stops the
// node rather than be taken for their absence. TestSwarm runs a third of
// its seeded simulations with failing stores and torn crashes.
//
// Invariants asserted where they are relied on (env.Invariant; a broken
// one fails the seeded run, or stops the node in production): a status's
// closure never goes back and never exceeds the stored bound (dispatch); a
// peer's closure never goes back within an incarnation (onStatus); a read
// is answered with a version stamped at or before its view (onReadResp).
package meteor
