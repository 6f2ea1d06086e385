package sim

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// node is one simulated server: its replica, storage, clock and timers. It
// is the env.Env its replica sees.
type node struct {
	sim      *Sim
	id       wire.NodeID
	replica  env.Replica
	engine   *store.Mem
	rng      *rand.Rand
	up       bool
	gen      uint32 // incarnation: bumped on crash, stale timers are ignored
	offset   int64  // clock offset from true time, ns
	driftPPM float64
	timers   pendingTimers
	nextTID  env.TimerID
	// busyUntil is when the node finishes the work queued so far
	// (Config.ServiceTime).
	busyUntil int64
	log       *slog.Logger
	sf        nodeStoreFaults // storefaults.go
	pub       nodePub         // published.go

	// Output of the running handler, released after the store syncs.
	outMsgs []outMsg
	outReps []*wire.Reply
}

type outMsg struct {
	to  wire.NodeID
	msg wire.Msg
}

var _ env.Env = (*node)(nil)

func (n *node) boot() {
	n.up = true
	n.replica = n.sim.cfg.Factory(n.id)
	n.run(func(r env.Replica) { r.Start(n) })
}

// run calls the replica, then persists before sending: the engine syncs and
// only then do the handler's messages and replies leave.
func (n *node) run(f func(env.Replica)) {
	f(n.replica)
	if n.sf.failure != nil {
		n.failStop()
		return
	}
	if len(n.outMsgs) == 0 && len(n.outReps) == 0 && len(n.pub.queued) == 0 {
		return
	}
	at := n.sim.now
	if err := n.engine.Sync(); err != nil {
		panic(err) // the in-memory engine cannot fail
	}
	for i, o := range n.outMsgs {
		n.sim.send(at, n.id, o.to, o.msg)
		n.outMsgs[i] = outMsg{}
	}
	for i, r := range n.outReps {
		n.sim.reply(at, n.id, r)
		n.outReps[i] = nil
	}
	n.outMsgs, n.outReps = n.outMsgs[:0], n.outReps[:0]
	if len(n.pub.queued) > 0 {
		n.publishQueued()
	}
}

func (n *node) Self() wire.NodeID { return n.id }

// Latency is the world's base delay between the two nodes' regions.
func (n *node) Latency(to wire.NodeID) time.Duration {
	return n.sim.topo.BaseDelay(n.id, to)
}

// Wall is Now: the simulator models one clock per node (env.Env.Wall).
func (n *node) Wall() int64 { return n.Now() }

func (n *node) Now() int64 {
	t := n.sim.now
	return Epoch + t + n.offset + int64(float64(t)*n.driftPPM/1e6)
}

func (n *node) Send(to wire.NodeID, m wire.Msg) { n.outMsgs = append(n.outMsgs, outMsg{to, m}) }

func (n *node) Reply(r *wire.Reply) { n.outReps = append(n.outReps, r) }

func (n *node) SetTimer(d time.Duration, payload any) env.TimerID {
	n.nextTID++
	id := n.nextTID
	// d is measured on this node's clock, which runs at 1+drift of true time.
	// Round up, so the node's clock has advanced by at least d when it fires.
	trueD := int64(math.Ceil(float64(d) / (1 + n.driftPPM/1e6)))
	slot := n.sim.scheduleAfter(event{kind: evTimer, node: n.id, gen: n.gen, timer: id}, max(trueD, 0))
	n.timers.add(id, payload, slot)
	return id
}

// CancelTimer implements env.Env. A pending timer's event is still queued
// in its slot (a fired one is not in timers, nor one of an incarnation
// before a crash): it is dropped there, so that it comes up as a step that
// does nothing, as a cancelled timer always has, without being read.
func (n *node) CancelTimer(id env.TimerID) {
	if t, ok := n.timers.take(id); ok {
		n.sim.q.drop(t.slot)
	}
}

func (n *node) Rand() *rand.Rand { return n.rng }

func (n *node) Store() store.Store { return nodeStore{n} }

func (n *node) Topology() *topo.Topology { return n.sim.topo }

func (n *node) Log() *slog.Logger { return n.log }

// Replica returns node id's current replica (a restarted node's new one),
// for reading its counters at the end of a run.
func (s *Sim) Replica(id wire.NodeID) env.Replica { return s.nodes[id].replica }
