// Package ppaxos is pPaxos*, CRIC's baseline for Paxos over passive
// acceptors (seed 001 §5.4.1: "pPaxos [76] ... improves pPaxos's
// efficiency by using fast round writes and optimal garbage collection";
// §5.2.1: prior passive-acceptor variants "require two rounds of
// communication for a proposer to complete each phase of Paxos: one round
// to perform conflict-free writes at a quorum of acceptors (e.g., write a
// new object [71] or perform an atomic append [76]) and another round to
// read the state of the acceptors to check for success"). `protocol:
// ppaxos`. The code is internal/protocol/vmpaxos, ModeLog.
//
// # Roles
//
// Acceptor a is an append-only log per object on node a%m of region
// Regions[a/m], kept in the node's store. It does not look at what it
// stores: it appends a record (a proposer's Prepare, Accept — with the
// value — or Commit) and returns the whole log on a read. That is
// pPaxos's Append, which the thesis too ran on VMs interposing on storage
// ("we therefore implement Appends via replica VMs ... but ignore the cost
// of these VMs"). Proposers are the acceptors' logic: they replay a log
// through cric's Prepare and Accept rules to learn the acceptor's state.
//
// Why not objects in the storage services: storagesvc has no ordered
// append, and the two ways to build one from it are not pPaxos. A record
// created If-None-Match at the next log slot is a conditional write — on
// success the proposer knows the whole log up to its record, so the
// read-back round disappears (that is CPaxos). A record under a unique
// name has no order, and the fast round's "one value per acceptor in
// ballot #0" then cannot be decided from what a reader sees.
//
// # Algorithm
//
// CPaxos's rules 1–8 (internal/protocol/cric doc.go), each phase in two
// round trips per acceptor:
//
//  1. Append the phase's record (Prepare of ballot b for version n;
//     Accept of the value; ballot #0 for the fast round).
//  2. Once it is appended, read the log back and replay it from the empty
//     state: the record took effect if the acceptor logic accepted it at
//     its place in the log; the state right after it is what the
//     proposer uses (Paxos's promise reply).
//  3. Commit appends a commit record for version n, unanswered; appending
//     it garbage-collects the log's records of versions before n (an
//     acceptor that accepted n refuses them all, cric rule 1, so the
//     replay of the rest is the same): the thesis's "older versions are
//     garbage collected as soon as a new version is globally accepted".
//  4. Reads read the logs (one round trip) and act as cric's rule 7.
//  5. A log read back after its phase ended still refreshes the
//     proposer's cached states where it is fresher (internal/protocol/
//     vmpaxos doc.go, rule L: cric's rule 6a); an append's answer tells
//     nothing of the state.
//
// A log holds at most 4096 records; past that appends are refused.
//
// # Guarantee
//
// Linearizable (check model "linearizable"), under the same faults as
// fastpaxos; a write that answers timeout may have taken effect. Liveness
// needs a quorum of logs reachable. TestSwarm checks it.
//
// # Clocks
//
// Safety assumes nothing of clocks; timers are for liveness only
// (a phase waits at most twice storage_timeout: two round trips).
//
// # Costs measured
//
// A phase is two round trips (bench cric-table5.1). A write's value goes
// out once per acceptor in its Accept record and comes back in every log
// read until a commit collects it, with every other proposer's value
// still in the log (cric-table5.2, O(n) under n proposers).
package ppaxos
