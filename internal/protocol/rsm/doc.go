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
//  2. Ready, in raft's order: Ready's entries, then its HardState, are
//     written to the Env store (storage.go: entries, last index, hard
//     state, so a torn crash keeps a consistent prefix), then its messages
//     are sent with Env.Send. The runtime syncs the store before the
//     messages leave: persist before send, raft's contract.
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
//     durable state), so a partitioned leader's clients look elsewhere.
//
// Membership is fixed: every member derives the same bootstrap snapshot
// (index 1, term 1, Config.Members as voters) from its Config.
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
// and restarts (state is recovered from the store), partitions, and
// message loss, duplication and reordering; the group makes progress while
// a majority is up and connected. Tests: TestSwarm (the register history
// is linearizable; the Apply invariant checks agreement),
// TestElectAndApplyInOrder, TestTeethPersistBeforeSend.
//
// Not guaranteed: a proposal or read accepted by Propose or Read may be
// lost (a dropped message, a deposed leader) and is then never applied or
// answered; the caller times out and the outcome is unknown. The
// incarnation a proposal came from is the only one told it was applied.
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
// Snapshots and log compaction (the log grows forever and a restarted
// member replays it from the start), membership changes, leader leases
// for local reads.
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
