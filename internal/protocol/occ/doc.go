// Package occ registers Catenae's second baseline, Paxos commit over
// optimistic concurrency control (seed 000 §4.3.4, "2PL and OCC
// implementation": "Transactions are distributed and executed in all DCs
// with records on the versions of data partitions that have been read and
// written. ... Temporary execution results with versions of accessed
// partitions are voted and validated among coordinators (first phase of
// Paxos commit). A transaction commits when a majority of DC commit
// (second phase of Paxos commit). Our OCC implementation allows aborted
// transactions to retry one time before returning aborts to clients.").
//
// It shares its roles, messages, commit path, guarantee and clock
// assumption (none) with internal/protocol/twopl, whose doc.go and
// occ.go give the algorithm: the manager reads a majority's records
// without locks, validates with no-wait locks at a majority that also
// check no key moved past the version read (a conflict is an immediate
// refusal, no wound-wait), executes on what it read and runs Paxos
// commit's second phase as 2PL does; an abort is retried once
// (`retries`, default 1) before ErrUnavailable. Strictly serializable;
// tested by twopl's TestSwarm/occ, TestSwarmSingleKey/occ,
// TestBankTransfers, TestTeethOneRegion/occ and TestLatencyFloor/occ (a
// read-only transaction two round trips to the nearest majority, a
// read-write one three). Coordinator crashes are not survived (twopl
// doc.go, "Crashes").
package occ
