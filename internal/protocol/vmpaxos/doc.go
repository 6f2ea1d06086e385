// Package vmpaxos is what issue 14's two baselines for CRIC share
// (fastpaxos and ppaxos, seed 001 §5.4.1): acceptor processes on one node
// per region (the thesis's replica VMs) keeping each object's acceptor
// state in the node's store, and a proposer at every gateway that runs
// CPaxos's algorithm (internal/protocol/cric doc.go, rules 1–8) against
// them. The settings, quorums, ballots and the acceptor's Prepare and
// Accept logic are cric's (cric/shared.go); only the way a proposer
// reaches an acceptor differs (Mode):
//
//   - ModeLogic (fastpaxos): a Request asks the acceptor process to
//     promise or accept; it applies cric's logic to its stored state,
//     persists, and answers with the new state. One round trip a phase.
//   - ModeLog (ppaxos): the acceptor process only appends each Request to
//     the object's log and, on a read, returns the log; the proposer
//     replays the log through the same logic to learn whether its record
//     took effect. Two round trips a phase.
//
// # Late answers (rule L, cric's rule 6a without ETags)
//
// A phase ends at its first quorum (a super quorum for the fast round),
// and a proposer plans the next operation on a key from the acceptor
// states it cached. The fast round goes only to acceptors whose known
// state allows it, and the classic path only to known ones, so an
// acceptor left unknown stays unknown: a read of a key the proposer had
// no cache for knows 3 of 5 acceptors, too few for a super quorum, and
// every later write of that key took the classic path (cric-table5.1,
// seed 1: all 133 of Fast Paxos's and 83 of pPaxos*'s writes that
// skipped the fast round, counter fast_skipped_unknown_total).
//
// Rule L: every answer to a phase that has ended (its op finished, went
// on to another phase, or is backing off) is still read, and its
// acceptor's state (in ModeLog, a read-back of the log; an append's own
// answer tells nothing) replaces the view the cache holds, and the view
// of each live op on the key for an acceptor that did not take the op's
// current phase's request, where it is fresher: the view was unknown, or
// the answer is a later state. Acceptor states are ordered: a promise
// raises (PV, PB), an accept raises it or, promised already, (V, B), a
// commit sets the bit, and nothing lowers them (later). A finishing op
// keeps the cache's view where it is fresher than its own (a read stops
// at the first quorum). Safety is unchanged: each such view is a true
// state of its acceptor; knowing a version chosen from views of
// different times is sound (committed, or accepted in one ballot by a
// quorum, or in the fast round by a super quorum, stays chosen); the
// promises a classic Accept picks its value from are never replaced (a
// read's write-back may re-propose any value accepted at its version,
// fresh or not, as before); and which acceptors a phase asks is only a
// hint, since the acceptor (ModeLogic) or the replay of its log
// (ModeLog) applies the acceptor logic itself.
// late_views_total counts the answers kept.
//
// Proposers count the round trips and value bytes of every operation
// (Counters), which bench cric-table5.1 and cric-table5.2 measure, and
// why a write that may try the fast round took the classic path
// (fast_skipped_*_total).
package vmpaxos
