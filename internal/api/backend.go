// Package api holds what Lightcone's front ends (RESP, gRPC, HTTP admin)
// share: the Backend they submit requests to.
package api

import "github.com/lightcone/lightcone/internal/wire"

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
