// Package grpcapi serves Lightcone's gRPC API (proto/lightcone/v1) over an
// api.Backend, alongside the RESP front end and with the same semantics.
//
// # Service
//
// NewServer returns a *grpc.Server with three services registered:
//
//	lightcone.v1.KV        Get, Put, Delete, BatchGet, Status, Migrate, Acquire, Release, Txn
//	grpc.health.v1.Health  SERVING for "" and "lightcone.v1.KV"
//	grpc.reflection.v1     (and v1alpha), so grpcurl needs no .proto
//
// Keys and values are bytes. A request names a keyspace (empty selects
// Config.Keyspace, default "default") and a consistency level: the enum
// Consistency matches wire.Level value for value (CONSISTENCY_DEFAULT is
// the keyspace's configured level). Responses carry the wire.Version read
// or written as {wall_nanos, logical, node}. Get reports found; a deleted
// key is not found, and its version is the delete's.
//
// A Get that names no session is answered from the reply the keyspace's
// protocol published for the key and level, if any (api.CachedReader:
// a key read and not written since), without the node's loop; calls are
// unordered among themselves, so none has a call of its own in flight to
// follow.
//
// Migrate moves a key's write mastership to a region (wire.OpMigrate, as
// RESP's LC.MIGRATE) and returns the new master's region; keyspaces whose
// protocol has no per-key masters refuse it with INVALID_ARGUMENT.
//
// Acquire and Release take and give back a hold on a key (wire.OpAcquire,
// wire.OpRelease, as RESP's LC.ACQUIRE and LC.RELEASE; protocol rc). Calls
// share one client ID, so a hold belongs to a session instead: a client ID
// Acquire issues (from Backend.NewClientID) when its request names none,
// and that Get, Put, Delete and Release then name. A session is never
// closed: the protocol releases the holds of one that sends nothing for its
// hold_timeout.
//
// Txn runs a transaction (wire.OpTxn, as RESP's LC.TXN): declared read,
// write (or delete) and add operations on keys of one keyspace, in order,
// with one result per operation and the version its writes installed. Its
// shape is checked before submission (wire.Txn.Check: no operations, more
// than 64, a key declared twice, a write in a read-only one, over 16 MiB
// of keys and values, an unknown kind: INVALID_ARGUMENT, nothing
// written). What it guarantees is the keyspace protocol's; one that runs
// no transactions fails it with INVALID_ARGUMENT naming those that do.
// client.go has helpers: RunTxn(ctx, kv, keyspace, Read(k), Write(k, v),
// Delete(k), Add(k, delta)).
//
// Every call is one backend request, except BatchGet, which submits one get
// per key, all at once, and answers when every reply is in: the batch is
// not a snapshot, and if any key fails the call fails with the first failed
// key's error (in request order), prefixed "keys[i]: ".
//
// All calls of a server share one ClientID from Backend.NewClientID, with
// request IDs from an atomic counter. A call waits for its reply or for
// its context to end, whichever comes first; a reply that arrives after
// the call has gone lands in a buffered channel nobody reads, so the
// backend's loop never blocks on it.
//
// # Errors
//
// Backend errors map to gRPC status codes by class, as the RESP front end
// maps them to reply prefixes:
//
//	wire.ErrTimeout      DEADLINE_EXCEEDED  "… timed out, outcome unknown …":
//	                                        a write may or may not have taken
//	                                        effect, and may still become visible
//	wire.ErrUnavailable  UNAVAILABLE        refused before taking effect; safe
//	                                        to retry
//	wire.ErrInvalid      INVALID_ARGUMENT   e.g. a level the keyspace's
//	                                        protocol does not honour
//	wire.ErrNoSpace      RESOURCE_EXHAUSTED a write refused, not applied: the
//	                                        node's disk is below its reserve;
//	                                        retry later (reads are served)
//	wire.ErrConflict     ABORTED            a conditional Put or Delete
//	                                        (expected_version) whose key is
//	                                        at another version; not applied.
//	                                        The current Version is the
//	                                        status's detail: read, retry
//	(other)              INTERNAL
//
// Checked before submission, so they never reach the backend:
//
//	key or value over its limit, too many keys,  INVALID_ARGUMENT
//	unknown Consistency value
//	keyspace refused by Config.HasKeyspace       NOT_FOUND
//	missing or wrong token                       UNAUTHENTICATED
//	Status without Config.Status                 UNIMPLEMENTED
//
// A call whose context ends before its reply fails with CANCELLED or
// DEADLINE_EXCEEDED; for Put and Delete the message says the outcome is
// unknown, because the request may already be on its way to the replicas.
// Clients should treat DEADLINE_EXCEEDED and CANCELLED on a write alike:
// read the key back before assuming it was or was not applied.
//
// # Authentication
//
// With Config.Token set, every call must carry the metadata
// "authorization: Bearer <token>" (the scheme is case-insensitive), or it
// fails with UNAUTHENTICATED before reaching the backend. The tokens are
// compared in constant time (their SHA-256 hashes, so not even the length
// leaks). The health service is exempt, so load balancers can probe it;
// reflection is not. The token travels in clear text unless the caller
// passes TLS credentials (grpc.Creds) among NewServer's options.
//
// # Limits
//
// Keys are at most Config.MaxKeyBytes (default 64 KiB) and values at most
// Config.MaxValueBytes (default 64 MiB), as in the RESP front end; a
// BatchGet reads at most Config.MaxBatchKeys keys (default 1024). Requests
// over a limit fail with INVALID_ARGUMENT naming it ("key too large (N
// bytes; max M)"). The server raises gRPC's receive limit (4 MiB by
// default) to fit the largest request these limits allow, plus 64 KiB;
// larger messages fail with gRPC's own RESOURCE_EXHAUSTED. Clients reading
// values over 4 MiB must raise their own receive limit
// (grpc.MaxCallRecvMsgSize).
//
// # Regenerating the code
//
// lightconev1 is generated from proto/lightcone/v1/lightcone.proto and
// checked in. After editing the .proto run proto/gen.sh, which names the
// protoc and plugin versions it expects. TestProtoHash fails when the
// .proto's hash differs from the one recorded at generation;
// TestGeneratedCodeFresh regenerates and compares when those exact tool
// versions are installed, and skips otherwise.
package grpcapi
