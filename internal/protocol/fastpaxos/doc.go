// Package fastpaxos is Fast Paxos with active acceptors, CRIC's baseline
// for "replica VMs" (seed 001 §5.4.1: "a client library that implements a
// Fast Paxos proposer, and code that runs on VMs which proxy requests to
// cloud storage and mimic Fast Paxos acceptors and learners"; digest
// shared/seeds/notes/001-wu-costlo-spanstore-cric.md §3.6). `protocol:
// fastpaxos`. The code is internal/protocol/vmpaxos, ModeLogic.
//
// # Roles
//
// Acceptor a is an acceptor process on node a%m of region Regions[a/m]
// (its first ReplicasPerRegion nodes; cric5 has one a region): it keeps
// each object's acceptor state — cric's state after garbage collection
// (the last accepted version with its ballot, value and commit bit, and
// the highest promise) — with the value in its node's store, and answers
// every request with its state after applying it. Every node is a
// proposer and learner for the requests it is the gateway of.
//
// # Algorithm
//
// CPaxos's rules 1–8 (internal/protocol/cric doc.go), with each
// conditional write replaced by a request the acceptor applies itself:
//
//  1. Versions are Paxos instances; accepting version n refuses earlier
//     ones (garbage collection).
//  2. Write: from the cached states (a miss assumes a new object), finish
//     the highest version first if not known chosen, else propose at the
//     next one; last writer wins; rule 3a (a write learns the version it
//     proposed at before proposing again) is kept.
//  3. Fast round: Accept in ballot #0 at every acceptor whose known state
//     allows it; chosen at a super quorum, else classic recovery at the
//     same version (Fast Paxos's coordinated recovery: the value a super
//     quorum may have chosen, Theorem V.4).
//  4. Classic path: Prepare (the acceptor promises, persists, and answers
//     with its state; with the value only when it accepted the version
//     being prepared), then Accept: one round trip each.
//  5. Commit: the proposer sends the commit bit to the acceptors that
//     accepted, unanswered.
//  6. Read: every acceptor's state and value; with a quorum of answers,
//     return the highest version if known chosen, else write it back.
//  7. An acceptor persists before it answers (the runtime's contract).
//  8. An answer that arrives after its phase ended still refreshes the
//     proposer's cached states where it is fresher (internal/protocol/
//     vmpaxos doc.go, rule L: cric's rule 6a), so a key the proposer
//     first read, at a quorum, gets fast-round writes after it.
//
// # Guarantee
//
// Linearizable reads and writes (check model "linearizable") for any
// number of crashing proposers and acceptors (acceptors recover their
// state from their store), lost, duplicated, delayed or reordered
// messages, as long as the quorum sizes pass cric's Validate. A write
// that answers timeout may have taken effect. Liveness needs a quorum of
// acceptors up and reachable; duelling proposers are separated only by
// random backoff, so one key under heavy contention can starve a
// proposer. TestSwarm checks linearizability with acceptor crashes and
// store faults; the teeth for the shared rules are cric's (the proposer
// logic is the same).
//
// # Clocks
//
// Safety assumes nothing of clocks; timers are for liveness only.
//
// # Costs measured
//
// A phase is one round trip to the acceptors (bench cric-table5.1); a
// write moves its value to the acceptors once (cric-table5.2). The VMs'
// cost, which Fig. 5.14 charges, is not modelled here.
package fastpaxos
