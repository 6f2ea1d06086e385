// Package scenario runs one simulation end to end — world, keyspace policy,
// YCSB workload, fault schedule — and reports what `lightcone sim` prints:
// latency percentiles per region and operation beside the network floor, the
// share of requests above a threshold, message counts, errors, and the
// consistency checker's verdict on the recorded history.
//
// Clients follow YCSB: each runs one operation at a time; in open loop
// (Rate > 0) operations arrive as a Poisson process and queue while the
// client is busy, and both the service latency (from sending) and the
// intended latency (from arrival, corrected for coordinated omission) are
// recorded. A request whose reply does not come within ClientTimeout, or
// that fails with an unknown outcome, ends the client's session: the client
// continues under a new session ID, so each session's operations are in
// program order, as the sequential-consistency checker requires.
//
// Histories use unique written values (client and write counter), and the
// load phase's values are the history's initial state.
package scenario
