// Package storagesvc is the storage-service layer the cloud-storage seeds
// build on (seed 001: CRIC, SPANStore, CosTLO; and Agar): each region has
// one storage service — an object store offering get, conditional put,
// metadata written apart from the data, list and delete, with its own
// latency distribution (DESIGN.md, "Storage services").
//
// # How a protocol reaches a service
//
// Protocol code is I/O-free, so it never calls a service: it sends a
// Request to the region's address, Addr(region) (wire.StorageService: a
// reserved NodeID range, 1<<30 + region, that is no node), with
// env.Env.Send, and the answer arrives as a Response message from that
// address, carrying the Request's ID. The network between a node and a
// service may lose, duplicate, delay and reorder either message, like any
// other: a lost answer to a conditional Put leaves its outcome unknown to
// the protocol, which must find out by reading (CRIC's recovery does). A
// protocol that talks to services lists MessageTypes among its message
// types. Requests and Responses cross the keyspace mux inside its envelope
// (wire.Wrapper); the runtimes unwrap and rewrap them.
//
// Both runtimes route those messages (docs/storage-services.md):
//   - The simulator (internal/sim) runs one Mem per region. A request takes
//     the world's one-way delay from the sender's region to the service's,
//     waits the service's latency (drawn from the world's storage_services
//     model: log-normal, median and p99, reads and writes apart), is
//     applied, and its answer takes the delay back; loss and duplication
//     apply to both legs, partitions do not (Sim.SetServiceDown models an
//     outage).
//   - The server (internal/svchost) sends each request, off the event
//     loop, to the region's configured backend: "hosted" (a Mem on the
//     region's first node, reached over the peer transport, the latency
//     model applied before it answers) or "s3" (any S3-compatible
//     endpoint, through internal/s3svc). The answer comes back to the
//     node's loop as a message.
//
// Service is the same operations as a Go interface, with a context, for
// the runtimes and for tools; Exec maps a Request onto it.
//
// # Semantics (every implementation; internal/svctest checks them)
//
//   - Strong consistency per object: each operation on one key takes
//     effect atomically at one instant between its call and its answer,
//     so reads see the latest completed write (read-after-write, also for
//     overwrites and deletes) and conditional writes serialize. Nothing is
//     promised across keys, and List is not a snapshot: a key written
//     during a List may or may not appear, but every key stable throughout
//     it does, with its ETag.
//   - ETag: identifies one state of one object (ETag's comment). Every
//     successful Put and PutMeta gives the object a new ETag, even when
//     they write the same bytes again; a Delete ends it. So Cond.IfMatch
//     succeeds only if nothing at all was written to the object since the
//     ETag was read: a metadata-only change is detected by a CAS on the
//     metadata.
//   - Get returns data, metadata and ETag; Head metadata, ETag and the
//     data's size; both ErrNotFound if absent.
//   - Put writes data and metadata; PutMeta metadata only, the data
//     untouched. Cond: IfMatch (exists with that ETag) or IfNoneMatch
//     (does not exist: create-only); a failed condition is
//     ErrPreconditionFailed and writes nothing. PutMeta never creates:
//     absent is ErrNotFound unconditionally, ErrPreconditionFailed under
//     IfMatch.
//   - List(prefix, startAfter, limit): keys with the prefix, strictly after
//     startAfter, ascending by bytes, at most limit (1..MaxListLimit; 0
//     means the maximum), with Truncated set when more follow.
//   - Delete removes the object; IfMatch makes it conditional. An
//     unconditional Delete of an absent key succeeds (S3's behaviour: it
//     cannot tell).
//   - Errors: ErrNotFound, ErrPreconditionFailed, ErrInvalid (a limit —
//     MaxKeyBytes, MaxMetaBytes, MaxDataBytes — or a bad condition;
//     nothing done) and ErrUnavailable: a timeout, a dropped connection or
//     a server error, after which a write's outcome is unknown.
//
// # Guarantees per backend
//
//   - Mem (reference; simulator, and hosted services of a server without a
//     data directory): exactly the above, by construction: one map,
//     operations applied one at a time. Durability: none beyond the process
//     (it loses its objects when its node restarts, and starts a new ETag
//     epoch so stale ETags never match). A server with a data directory
//     hosts a durable Pebble store instead (internal/svchost Disk).
//   - S3 (internal/s3svc): the above on any S3 service with strong
//     read-after-write consistency and conditional PutObject (AWS S3 since
//     2020 and 2024, MinIO). S3's own ETag is the MD5 of the body and does
//     not change when metadata is replaced by CopyObject, which would let a
//     stale CAS on metadata succeed; so the adapter stores the metadata and
//     a random write nonce at the head of the object's body, making every
//     write change S3's ETag, which the adapter uses as this layer's ETag.
//     PutMeta is therefore a Get and an If-Match Put of the same data: two
//     requests and a data transfer, where the reference service does one.
//     S3 has no conditional DeleteObject, so a conditional Delete writes a
//     tombstone (a body holding only a nonce) with If-Match; reads and List
//     treat a tombstone as absent, a create-only Put replaces one by CAS,
//     and an unconditional Delete removes it. s3svc's doc states the
//     layout.
package storagesvc
