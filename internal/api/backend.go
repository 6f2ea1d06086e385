// Package api holds what Lightcone's front ends (RESP, gRPC, HTTP admin)
// share: the Backend they submit requests to.
package api

import (
	"context"

	"github.com/lightcone/lightcone/internal/wire"
)

// Backend executes client requests. The real runtime's node implements it.
type Backend interface {
	// Submit hands req to the node. done is called exactly once with the
	// reply, from the node's event loop: it must not block (send on a
	// buffered channel, or record and return). req.Client and req.ID must
	// identify the request uniquely among the caller's outstanding ones;
	// use NewClientID for a fresh client ID per connection.
	Submit(req *wire.Request, done func(*wire.Reply))
	// NewClientID returns a client ID unique on this node.
	NewClientID() wire.ClientID
}

// BatchSubmitter is a Backend that takes several requests in one hand-off
// (a connection's pipelined commands), which costs its event loop one
// wake-up instead of one per request. done is called once per request.
type BatchSubmitter interface {
	SubmitBatch(reqs []*wire.Request, done func(*wire.Reply))
}

// CachedReader is a Backend that answers some reads at once, without its
// event loop: reads of keys whose answer the protocol published
// (env.PublishRead), while it stands: nobody has written the key since,
// the protocol has not withdrawn it, and its end (a lease's) has not come.
type CachedReader interface {
	// CachedRead returns the reply a read of key in keyspace (empty: the
	// default) at level would get, if one is published. Use it only for
	// a read that follows nothing of the caller's still in flight. The
	// reply is shared and must not be modified. Safe for concurrent use.
	CachedRead(keyspace string, key []byte, level wire.Level) (*wire.Reply, bool)
	// CachedReadsServed counts n reads at level that CachedRead answered.
	CachedReadsServed(level wire.Level, n int)
}

// Scanner lists the keys of a keyspace that this node holds (RESP SCAN,
// KEYS, DBSIZE). It reads the node's own store, not the cluster: a node
// holding only some of a keyspace's keys lists only those, and a key lists
// with its latest version on this node, which a write not yet replicated
// here has not replaced.
type Scanner interface {
	// Scan examines at most count of the keyspace's stored keys from
	// cursor on ("" the start) in the store's order, and returns the live
	// user keys among them with their values, and the cursor to continue
	// from ("" when done). A cursor is opaque; each key is examined once
	// per pass, so a pass from "" to "" returns every key that was stored
	// and live on this node throughout it, once, and no key that was
	// deleted throughout it. It fails with a *wire.Error of code
	// ErrInvalid for an unknown keyspace or one whose protocol cannot list
	// its keys.
	Scan(ctx context.Context, keyspace, cursor string, count int) (page []KeyValue, next string, err error)
}

// KeyValue is one key a Scanner listed, with its value.
type KeyValue struct {
	Key   string
	Value []byte
}
