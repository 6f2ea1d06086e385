// Package metrics holds the Prometheus instruments of one Lightcone node.
//
// Each node owns one *Metrics, built by New, with its own
// *prometheus.Registry: nothing is registered on the global default
// registry, so a simulation or a test can run many nodes in one process
// without their series colliding. The registry also carries the standard Go
// runtime collector (go_*) and process collector (process_*).
//
// A nil *Metrics is valid: every method is then a no-op, so code paths can
// take a *Metrics without checking whether metrics are enabled. All methods
// are safe for concurrent use and cheap enough for the request path: the
// label-curried children are resolved once per label combination and cached
// in a copy-on-write map, so a repeated Request call performs no map writes,
// takes no lock and does not allocate.
//
// # Labels
//
// Every lightcone_* series carries four constant labels that identify the
// node, taken from Labels: node, region, keyspace and protocol (the
// replication protocol the node runs, e.g. "globlease"). They are listed
// below as "identity labels". The per-call labels follow them.
//
// Request op, level and code values are cached per distinct combination. A
// node keeps at most MaxRequestSeries combinations; further new combinations
// are recorded under op="other", level="other" with their code kept, so a
// misbehaving client sending odd operation names cannot grow the registry
// without bound. Message kinds are bounded the same way by MaxMessageKinds
// (kind="other"). A message kind seen in one direction also shows, at
// zero, in the other, since the four series of a kind are resolved together.
//
// # Metrics
//
// lightcone_request_duration_seconds (histogram; identity labels, op, level,
// code): latency of one client request, from its arrival at the node to its
// reply. op is the operation ("get", "put", ...); level is the consistency
// level asked for; code is the outcome: "ok", "timeout", "unavailable" or
// "invalid" (see the Code* constants). Buckets run from 0.1 ms to 10 s and
// include 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 2000 and
// 5000 ms, so that intra-region, cross-region and lease-wait latencies fall
// in distinct buckets.
//
// lightcone_requests_total (counter; identity labels, op, level, code):
// client requests finished, counted with the same labels as the histogram.
// It equals the histogram's _count series and exists so that dashboards can
// rate() requests without touching histogram internals.
//
// lightcone_requests_inflight (gauge; identity labels): client requests
// accepted by the node and not yet answered.
//
// lightcone_messages_sent_total (counter; identity labels, kind): protocol
// messages this node sent to other nodes, by message kind.
//
// lightcone_message_bytes_sent_total (counter; identity labels, kind):
// encoded bytes of those messages.
//
// lightcone_messages_received_total (counter; identity labels, kind):
// protocol messages this node received from other nodes, by message kind.
//
// lightcone_message_bytes_received_total (counter; identity labels, kind):
// encoded bytes of those messages.
//
// lightcone_fsync_duration_seconds (histogram; identity labels): how long
// one fsync of the node's store took. Buckets run from 50 µs to 1 s.
//
// lightcone_loop_batch_events (histogram; identity labels): events the
// node's event loop handled in one group commit, i.e. how many handlers
// shared one fsync. Buckets are powers of two from 1 to 4096.
//
// lightcone_loop_batch_duration_seconds (histogram; identity labels): how
// long one such batch took, from its first event to the release of its
// messages and replies (fsync included). Buckets run from 10 µs to 1 s.
//
// lightcone_published_reads, lightcone_published_read_bytes (gauges;
// identity labels; read at each scrape): the replies the node keeps for
// reads answered without its event loop (published reads), and their keys'
// and values' bytes, against the bounds docs/limits.md gives (65,536 keys,
// 32 MiB).
//
// # Protocol statistics
//
// AddKeyspaceStats exports what a keyspace's protocol counts about itself,
// read at each scrape, as lightcone_<name> with the labels node, region and
// keyspace (the keyspace the values belong to; no protocol label). The
// server exports a lease (GlobLease) keyspace's replica this way:
//
//	lightcone_lease_renewals_total             lease renewals asked for
//	lightcone_lease_grants_total               leases granted (as master)
//	lightcone_lease_invalidations_total        lease holders updated or
//	                                           waited out by active writes
//	lightcone_lease_confirms_total             master-lease confirmations
//	lightcone_lease_elections_total            elections won
//	lightcone_lease_migrations_total           migrations won (the new
//	                                           master's node counts them)
//	lightcone_lease_rollbacks_total            migrations taken back
//	lightcone_lease_affiliates_attached_total  affiliated nodes attached
//	lightcone_lease_affiliates_detached_total  affiliated nodes detached
//	lightcone_lease_leases_held                gauge: valid leases held
//	lightcone_lease_masters_held               gauge: keys this node masters
//
// and a meteor (MeteorShower) keyspace's:
//
//	lightcone_meteor_applied_total             write copies applied
//	lightcone_meteor_refused_total             write copies refused (closure
//	                                           passed; kept as copies)
//	lightcone_meteor_compacted_total           versions compaction dropped
//	lightcone_meteor_restamps_total            writes restamped (as gateway)
//	lightcone_meteor_read_failovers_total      reads resent to the next replica
//	lightcone_meteor_pulls_total               pulls sent
//	lightcone_meteor_reads_waiting             gauge: reads waiting here
//
// and a clock-ordered quorum keyspace's with a commit wait (several nodes):
//
//	lightcone_quorum_commit_wait_seconds       gauge: the wait an answer from
//	                                           this node takes past its
//	                                           version's time now (2δ, or
//	                                           commit_wait measured's bound)
//
// The counters are the replica's and restart from zero with the process.
package metrics
