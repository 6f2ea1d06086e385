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
// Proposers count the round trips and value bytes of every operation
// (Counters), which bench cric-table5.1 and cric-table5.2 measure.
package vmpaxos
