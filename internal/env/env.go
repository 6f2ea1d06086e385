// Package env is the contract between a protocol and the runtime that hosts
// it. A protocol is an I/O-free state machine: it sees the world only through
// Env, and the runtime drives it only through Replica. The simulator
// (internal/sim) and the real server implement Env; protocol code runs
// unchanged in both (DESIGN.md, "The central decision").
package env

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TimerID identifies a pending timer of one node.
type TimerID uint64

// Env is everything a replica may use. Calls are valid only during a call
// into the Replica; an Env must not be retained across calls.
type Env interface {
	// Self is this node's ID.
	Self() wire.NodeID
	// Now is this node's clock for durations (leases, timeouts, rates), in
	// nanoseconds since the Unix epoch. It may be offset from true time and
	// drift; each protocol's doc.go states the bound it assumes. In the
	// real runtime it never steps: it is the wall clock read once at boot
	// plus monotonic time since, so a wall-clock step (NTP, an operator)
	// cannot stretch a lease.
	Now() int64
	// Wall is this node's wall clock, in nanoseconds since the Unix epoch,
	// for timestamps other nodes compare with theirs (HLC versions). In the
	// real runtime it follows the system clock and may step; never measure
	// a duration with it. In the simulator it is the same modelled clock as
	// Now (a skew fault steps both: a harsher model than a real node).
	Wall() int64
	// Send queues m for node to. Messages leave after the handler returns and
	// its store writes are durable (persist before send). Delivery is not
	// guaranteed; the network may delay, drop, duplicate or reorder.
	Send(to wire.NodeID, m wire.Msg)
	// Reply queues the answer to a client request, under the same rule.
	Reply(r *wire.Reply)
	// SetTimer asks for Timer(payload) after d of this node's clock.
	SetTimer(d time.Duration, payload any) TimerID
	// CancelTimer cancels a pending timer; cancelling a fired one is a no-op.
	CancelTimer(id TimerID)
	// Latency is the minimum one-way delay from this node to node to: the
	// real runtime's measurement (half the least ping round trip), or,
	// until a link is measured and in the simulator, the world's base delay
	// between the two nodes' regions. Protocols size waits from it.
	Latency(to wire.NodeID) time.Duration
	// Rand is this node's seeded random source.
	Rand() *rand.Rand
	// Store is this node's storage.
	Store() store.Store
	// Topology is the cluster layout.
	Topology() *topo.Topology
	// Log is this node's logger.
	Log() *slog.Logger
	// FailStop says this replica can no longer be trusted — its store
	// failed, or one of its invariants broke — and stops the node: the
	// messages and replies the current handler queued are discarded, its
	// store writes from here on fail and nothing more is synced, and the
	// replica handles no further input. The handler should return soon
	// after; what it queues or writes meanwhile is dropped. The first
	// cause is kept; later calls do nothing. The simulator treats the node
	// as crashed (it may restart with a fresh replica over what its store
	// kept); the real runtime stops serving and reports cause.
	FailStop(cause error)
}

// ErrInvariant marks a FailStop caused by a broken invariant: a bug in the
// protocol or in the assumptions it states, not a fault of the environment.
// The simulator fails the run; the real runtime stops the node.
var ErrInvariant = errors.New("invariant violated")

// Invariant fail-stops e's node with an error wrapping ErrInvariant when ok
// is false, and reports ok. Protocols assert what they rely on where they
// rely on it, so a bug shows at its cause rather than only in a history
// checked at the end of a run. It is meant to stay on in production; the
// format arguments are evaluated by the caller, so keep them cheap.
func Invariant(e Env, ok bool, format string, args ...any) bool {
	if !ok {
		e.FailStop(fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...))
	}
	return ok
}

// ReadReplier is an Env that can let a reply leave before the handler's
// batch is synced when the reply depends only on durable state
// (ReplyRead).
type ReadReplier interface {
	ReplyRead(r *wire.Reply)
}

// ReplyRead is Reply for a reply that carries nothing but what its handler
// read from e.Store() (records, or their absence), from a handler that has
// written nothing: no in-memory state of the protocol enters it. Where
// every key the handler read has no write waiting for a sync, the real
// runtime lets such a reply leave before the batch's sync (its content is
// already durable: persist before send holds); otherwise, and in the
// simulator, it is Reply.
func ReplyRead(e Env, r *wire.Reply) {
	if rr, ok := e.(ReadReplier); ok {
		rr.ReplyRead(r)
		return
	}
	e.Reply(r)
}

// ReadPublisher is an Env that can serve later reads of a key without the
// protocol (PublishRead, WithdrawRead).
//
// PublishRead reports whether it serves published reads at all (the
// runtime's setting, not whether this reply was kept).
type ReadPublisher interface {
	PublishRead(key string, level wire.Level, r *wire.Reply, until int64) bool
	WithdrawRead(key string)
}

// MaxPublishedValue is the largest value a runtime publishes
// (PublishRead): a read of a larger one always goes to the protocol.
const MaxPublishedValue = 64 << 10

// PublishRead offers r, the reply a read of key at level just got from
// ReplyRead or Reply, as the answer to every later read of key at level
// until the key's record is next written through e.Store() (which
// withdraws it), WithdrawRead(key) is called, or, if until is not 0, e.Now()
// reaches until (a lease's end). A protocol calls it only where that holds:
// the reply is the key's stored record alone, and any read at level would
// be answered with it from this node's store alone until one of those
// happens. Elsewhere it does nothing. It reports whether e serves
// published reads at all, so that a protocol can count the reads they will
// answer as use of what they rest on (a lease's renewal ahead).
func PublishRead(e Env, key string, level wire.Level, r *wire.Reply, until int64) bool {
	if rp, ok := e.(ReadPublisher); ok {
		return rp.PublishRead(key, level, r, until)
	}
	return false
}

// WithdrawRead withdraws what PublishRead offered for key, at every level:
// something other than the key's record, which a read's answer depended
// on, has changed (a lease protocol's mastership). It takes effect before
// anything the handler sends leaves.
func WithdrawRead(e Env, key string) {
	if rp, ok := e.(ReadPublisher); ok {
		rp.WithdrawRead(key)
	}
}

// Replica is one node's protocol state machine. The runtime calls it from a
// single goroutine. After a crash the runtime builds a new Replica and calls
// Start; everything not in the Store is gone.
type Replica interface {
	// Start runs once when the node boots or restarts.
	Start(e Env)
	// Step handles a message from another node.
	Step(e Env, from wire.NodeID, m wire.Msg)
	// Request handles a client request for which this node is the gateway.
	Request(e Env, req *wire.Request)
	// Timer handles a timer set with SetTimer.
	Timer(e Env, payload any)
}

// Factory builds the replica of node id.
type Factory func(id wire.NodeID) Replica
