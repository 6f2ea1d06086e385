// Package rsm is a replicated state machine group: a library a protocol
// replica embeds to run a consensus group among a chosen set of nodes,
// through Env only, unchanged in the simulator and the real server.
//
// # Algorithm
//
// Raft (Ongaro & Ousterhout 2014), as implemented by etcd's raft library
// (go.etcd.io/raft/v3, RawNode: no goroutines, the caller does all I/O).
// The group drives it from the member's event loop:
//
//  1. Input. Messages of the group (Msg, the raft message's protobuf
//     encoding) go to RawNode.Step; the group's Env timer, every
//     Config.TickInterval, goes to RawNode.Tick; Propose and Read go to
//     RawNode.Propose and RawNode.ReadIndex.
//  2. Ready, in raft's order: Ready's snapshot (from the leader), its
//     entries, then its HardState, are written to the Env store
//     (storage.go: each change in an order whose every prefix loads as a
//     consistent state, for torn crashes), then its messages are sent with
//     Env.Send. The runtime syncs the store before the messages leave:
//     persist before send, raft's contract.
//  3. Committed entries are applied in index order (StateMachine.Apply);
//     the proposing member is told (StateMachine.Applied). ReadIndex
//     answers wait until the member has applied their index
//     (StateMachine.Readable).
//  4. Followers forward proposals and reads to the leader (raft's
//     forwarding); with no leader known, Propose and Read return a
//     *NotLeaderError.
//  5. Pre-vote is on: a member cut off from a majority does not raise the
//     term when it returns. A leader that has not heard from a majority
//     for ElectionTicks steps down (rebuilding its raft node from its
//     durable state), so a partitioned leader's clients look elsewhere. A
//     group of one campaigns as it starts: it is its own majority.
//  6. Snapshots (Raft §7). Every Config.SnapshotEntries applied entries a
//     member stores a snapshot of its state machine at its applied index
//     (StateMachine.Snapshot, with the index, term and conf state), and
//     only then deletes the entries it covers from the store and compacts
//     raft's in-memory log. A restarting member restores its snapshot
//     (StateMachine.Restore) and applies the log after it: Apply is never
//     called for an index a restored snapshot covers.
//  7. A leader whose log no longer holds what a follower lacks sends its
//     snapshot (MsgSnap). The follower stores it, ends its log there and
//     deletes the old log before it answers (persist before send), and
//     restores it. Sending is all the leader knows of it: it reports the
//     snapshot finished at once (RawNode.ReportSnapshot), so raft probes
//     the follower after the snapshot's index, and a follower that lost
//     the message rejects the probe and is sent the snapshot again.
//
// Membership is fixed: every member derives the same bootstrap snapshot
// (index 1, term 1, Config.Members as voters) from its Config, and every
// snapshot carries that conf state.
//
// # Determinism
//
// etcd raft draws its randomized election timeout from crypto/rand, which
// cannot be seeded. The group sets raft's election tick beyond any run
// (neverTicks), so raft never campaigns by itself, and runs its own
// election timer, as the Raft paper's: a follower or candidate campaigns
// (RawNode.Campaign) after a timeout drawn with Env.Rand, reset when it
// campaigns, hears from its leader, or grants a vote. Not when it loses an
// election: every candidate of a split vote loses at about the same
// moment, and resetting then made the survivors campaign together again
// and again (the directory's TestFailover tail, up to six split votes in
// a row). The timeout is drawn from [E, E + E·(1+k)) ticks, E =
// ElectionTicks, k the member's campaigns since it last knew a leader (at
// most 3): each split widens the range, so another is less likely. Two
// members split when they campaign within about a one-way delay d of each
// other, so with E·tick only a few times d (a WAN group with a short
// timeout) the first election after a leader's loss splits often (about
// half the time in TestFailover's world: d ≤ 50ms, E·tick = 200ms).
// raft's own CheckQuorum needs that timer too; rule 5 replaces it. The rest
// of raft is deterministic (it visits peers in sorted order). Raft's
// logger is replaced by a quiet one (no global logger output); a raft
// panic fail-stops the node as a broken invariant.
//
// # Guarantee
//
// A linearizable log among a majority of the members: every member applies
// the same commands in the same order (each member's applied sequence is a
// prefix of one sequence), a command applied anywhere was accepted by a
// majority's durable logs, and a Readable read sees every command applied
// (anywhere) before Read was called. It holds under any number of crashes
// and restarts (state is recovered from the store, torn crashes
// included), partitions, and message loss, duplication and reordering;
// the group makes progress while a majority is up and connected. Tests:
// TestSwarm (a snapshot every 3–8 entries; the register history is
// linearizable; the Apply invariant checks agreement, and Restore checks
// every snapshot restored is what the one command sequence makes of the
// state; the runs must take snapshots, restore them at restarts and
// install them on followers), TestElectAndApplyInOrder,
// TestRestartAfterCompaction, TestStorageTornCrashes (each stored change
// cut after each of its writes loads as before or after it),
// TestGroupOfOneLeadsAtStart, TestTeethPersistBeforeSend and
// TestTeethSnapshotBeforeCompaction (deleting compacted entries before
// storing the snapshot loses entries to a torn crash: rejected).
//
// Not guaranteed: a proposal or read accepted by Propose or Read may be
// lost (a dropped message, a deposed leader) and is then never applied or
// answered; the caller times out and the outcome is unknown. The
// incarnation a proposal came from is the only one told it was applied,
// and only if it applies the entry itself (not if it learns of it by a
// snapshot).
//
// Store space: the store has no delete, so a compacted entry leaves a
// tombstone key (its value is gone). A crash in the middle of deleting
// the garbage above the log (a suffix raft truncated) while installing a
// snapshot may leave a few of those entries stored: until the log grows
// over them, or for good if a later install skips past them.
//
// # Clock assumption
//
// None for safety. Ticks (the member's clock) only pace heartbeats and
// elections: liveness needs clocks that advance at roughly the same rate
// and an election timeout well above the round trip between members.
// Reads use ReadIndex in its safe mode (a heartbeat round to a majority),
// not leader leases, so no clock bound is assumed.
//
// # Not yet
//
// Membership changes; leader leases for local reads; a tail of entries
// kept after a snapshot (a follower missing even one compacted entry is
// sent the whole snapshot); snapshots sent in chunks (one message carries
// the whole state: the real transport refuses a frame over 128 MiB).
//
// # Seed
//
// The directory of the directory-based coherence protocols (seed 002) is a
// single process; §A.3 notes that "State machine replication can be used"
// to make it fault-tolerant, and does not implement it. This package is
// that replication: the directory's state becomes a StateMachine of a
// group.
//
// # Embedding
//
// A replica builds its group with New (one per group it is a member of),
// calls Start from its Start, and passes its messages and timers to the
// group's Step and Timer first (each reports whether the input was the
// group's). Its protocol registers MessageTypes() among its own message
// types (protocol.Definition.MessageTypes).
package rsm
