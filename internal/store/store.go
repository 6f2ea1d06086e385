// Package store is the versioned key-value interface protocols persist
// through, and its engines. Protocols see only Store; the runtime that owns an
// Engine decides when to Sync (persist before send: a handler's writes are
// synced before its messages leave).
package store

import "github.com/lightcone/lightcone/internal/wire"

// Record is one stored version of a key.
type Record struct {
	Value     []byte
	Version   wire.Version
	Tombstone bool // a delete: Value is empty
}

// Store is what a protocol reads and writes. Writes become durable when the
// runtime syncs the engine behind it, which happens before any message the
// writing handler sent leaves the node.
//
// An error from either method means the store can no longer be trusted: a
// failed Put may or may not have taken effect (and may or may not survive a
// crash), and a failed Get says nothing of the key. Storage failure is
// fail-stop: a protocol stops its node (env.Env.FailStop) unless it can
// refuse the one operation that read, with nothing sent or stored that
// depends on it.
//
// A full disk is not a store failure: the runtime refuses client writes
// before they reach the protocol while the engine is short of space
// (store/disk's Writable), keeping room for the writes protocols make on
// their own, so those do not fail.
type Store interface {
	// Get returns the record stored under key, if any.
	Get(key string) (Record, bool, error)
	// Put stores rec under key, replacing what was there.
	Put(key string, rec Record) error
}

// Lister is an engine that lists what it stores, for the front ends'
// key listing (RESP SCAN, KEYS, DBSIZE). Like every engine method it is
// called from the runtime's event loop only.
type Lister interface {
	// Scan calls fn with each stored key in [from, to) (to "": no upper
	// bound), in ascending bytewise order, with its latest record, until fn
	// returns false. Writes not yet synced are included. fn must not keep
	// rec.Value.
	Scan(from, to string, fn func(key string, rec Record) bool) error
}

// Engine is a Store owned by a runtime.
type Engine interface {
	Store
	// Sync makes every Put so far durable.
	Sync() error
	// Close releases the engine.
	Close() error
}

// AsyncEngine is an Engine whose syncs can run beside its owner: the
// runtime starts a sync, goes on handling events while the disk works, and
// releases what depended on the synced writes once it completes (package
// node). Persist before send is unchanged; only the wait moves off the
// loop.
type AsyncEngine interface {
	Engine
	// SyncStart commits every Put since the last sync (Gets see them at
	// once, as before) and starts making them durable. It returns a nil
	// Pending when there is nothing to wait for beyond syncs already
	// started: no Put since the last one, or a policy that does not fsync
	// (the commit is then complete). Syncs complete in the order they were
	// started, and a Pending's writes are durable once its Wait returns
	// nil. A failed sync fails the engine for good, as Sync's.
	SyncStart() (Pending, error)
}

// ThreadHolder is an Engine whose fsyncs may hold their thread's Go
// scheduler slot (package disk, Options.FsyncHoldsThread). Before each
// Sync the loop says whether anything could run beside the fsync: where
// every reply of the batch waits for it, nothing can, and holding the
// thread saves the scheduler's hand-offs around the fsync; where replies
// left before it (early reads), their connections could run meanwhile, and
// the fsync lets the slot go. Engines without the option ignore it.
type ThreadHolder interface {
	HoldThread(hold bool)
}

// Pending is a sync in progress (AsyncEngine.SyncStart).
type Pending interface {
	// Wait blocks until the sync's writes are durable, or the sync failed.
	// It may be called from any goroutine, once.
	Wait() error
}

// AppendWire appends r in the message encoding protocols share (value,
// tombstone, version), for records carried in protocol messages.
func AppendWire(b []byte, r Record) []byte {
	b = wire.AppendBytes(b, r.Value)
	b = wire.AppendBool(b, r.Tombstone)
	return wire.AppendVersion(b, r.Version)
}

// DecodeWire reads a record written by AppendWire.
func DecodeWire(d *wire.Decoder) Record {
	return Record{Value: d.Bytes(), Tombstone: d.Bool(), Version: d.Version()}
}
