package cric

import (
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/storagesvc"
)

// What the baselines of issue 14 (internal/protocol/vmpaxos: Fast Paxos
// with acceptor VMs, pPaxos*) share with CPaxos, so that the three differ
// only in how a proposer reaches its acceptors: the settings and their
// validation (Config), the hierarchical quorums (Shape), the ballots, and
// the acceptor's state with its Prepare and Accept logic (State).

// State is one acceptor's CPaxos state for one object (state.go).
type State = state

// Promise is the Prepare logic (state.promise).
func (s State) Promise(n uint64, b Ballot) (next State, ok, superseded bool) { return s.promise(n, b) }

// Accept is the Accept logic (state.accept).
func (s State) Accept(n uint64, b Ballot, w, d string, del bool) (next State, ok, superseded bool) {
	return s.accept(n, b, w, d, del)
}

// Meta encodes s as object metadata (state.meta).
func (s State) Meta() storagesvc.Meta { return s.meta() }

// ParseState decodes what Meta wrote.
func ParseState(m storagesvc.Meta) (State, error) { return parseState(m) }

// Digest is a value's data digest (state.go).
func Digest(data []byte) string { return digest(data) }

// Shape is a keyspace's hierarchical quorum sizes (quorum.go).
type Shape = shape

// Shape returns c's quorum shape (c with defaults filled in).
func (c Config) Shape() Shape { return shapeOf(c) }

// Acceptors is the number of acceptors: regions × replicas per region.
func (h Shape) Acceptors() int { return h.accept }

// Quorum reports whether the acceptors in(a) hold a quorum.
func (h Shape) Quorum(in func(a int) bool) bool { return h.quorum(in) }

// Super reports whether the acceptors in(a) hold a super quorum.
func (h Shape) Super(in func(a int) bool) bool { return h.super(in) }

// OpCosts sums finished operations' round trips to the acceptors and the
// value bytes they moved (bench cric-table5.1 and cric-table5.2 read the
// counters, under the same names for CPaxos and its baselines).
type OpCosts struct {
	writes, writeRounds, writeDataBytes, writeValueBytes uint64
	reads, readRounds, readDataBytes                     uint64
}

// Add counts one operation that succeeded: a read or a write, its round
// trips, the value bytes it sent or got, and (a write) its value's size.
func (c *OpCosts) Add(read bool, rounds, dataBytes, valueBytes int) {
	if read {
		c.reads++
		c.readRounds += uint64(rounds)
		c.readDataBytes += uint64(dataBytes)
		return
	}
	c.writes++
	c.writeRounds += uint64(rounds)
	c.writeDataBytes += uint64(dataBytes)
	c.writeValueBytes += uint64(valueBytes)
}

// Counters exports c.
func (c OpCosts) Counters() []protocol.Counter {
	return []protocol.Counter{
		protocol.Count("writes_total", "writes acknowledged", c.writes),
		protocol.Count("write_rounds_total", "round trips to acceptors on acknowledged writes' paths", c.writeRounds),
		protocol.Count("write_data_bytes_total", "value bytes acknowledged writes sent to or got from acceptors", c.writeDataBytes),
		protocol.Count("write_value_bytes_total", "bytes of the values acknowledged writes wrote", c.writeValueBytes),
		protocol.Count("reads_total", "reads answered", c.reads),
		protocol.Count("read_rounds_total", "round trips to acceptors on answered reads' paths", c.readRounds),
		protocol.Count("read_data_bytes_total", "value bytes answered reads got from acceptors", c.readDataBytes),
	}
}
