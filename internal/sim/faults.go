package sim

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// Crash stops node id: its timers and volatile state are gone, its store
// keeps only synced writes, and messages to it are lost until Restart.
func (s *Sim) Crash(id wire.NodeID) {
	n := s.nodes[id]
	if !n.up {
		return
	}
	n.up = false
	n.gen++
	n.replica = nil
	n.timers.reset()
	n.forgetPublished()
	s.unowe(id)
	n.crashStore()
	s.traceEvent(&event{at: s.now, node: id}, "crash")
}

// Restart boots a crashed node with a fresh replica over its surviving store.
func (s *Sim) Restart(id wire.NodeID) {
	n := s.nodes[id]
	if n.up {
		return
	}
	s.traceEvent(&event{at: s.now, node: id}, "restart")
	n.boot()
}

// Up reports whether node id is running.
func (s *Sim) Up(id wire.NodeID) bool { return s.nodes[id].up }

// Block drops every message sent from one node to another (one direction)
// until a matching Unblock or Heal. Blocks nest: a link cut twice needs two
// Unblocks, so overlapping partitions heal independently.
func (s *Sim) Block(from, to wire.NodeID) { s.blocked[int(from)*len(s.nodes)+int(to)]++ }

// Unblock undoes one Block.
func (s *Sim) Unblock(from, to wire.NodeID) {
	if l := int(from)*len(s.nodes) + int(to); s.blocked[l] > 0 {
		s.blocked[l]--
	}
}

// Partition blocks all traffic between the nodes of a and the nodes of b,
// both ways. Call it once per pair of sides to cut a cluster in several parts.
func (s *Sim) Partition(a, b []wire.NodeID) { s.partition(a, b, s.Block) }

// Unpartition undoes one Partition of the same sides.
func (s *Sim) Unpartition(a, b []wire.NodeID) { s.partition(a, b, s.Unblock) }

func (s *Sim) partition(a, b []wire.NodeID, f func(from, to wire.NodeID)) {
	for _, x := range a {
		for _, y := range b {
			f(x, y)
			f(y, x)
		}
	}
}

// Heal removes every partition and block.
func (s *Sim) Heal() { clear(s.blocked) }

// Net returns the network fault model in force.
func (s *Sim) Net() NetConfig { return s.cfg.Net }

// SetNet replaces the network fault model from now on.
func (s *Sim) SetNet(c NetConfig) {
	c.ensureDefaults()
	s.cfg.Net = c
}

// SetClock sets node id's clock so that it reads offset ahead of true time
// now, running driftPPM parts per million fast from here on.
func (s *Sim) SetClock(id wire.NodeID, offset time.Duration, driftPPM float64) {
	n := s.nodes[id]
	n.driftPPM = driftPPM
	n.offset = int64(offset) - int64(float64(s.now)*driftPPM/1e6)
}

// ClockDrift returns node id's clock rate error in parts per million.
func (s *Sim) ClockDrift(id wire.NodeID) float64 { return s.nodes[id].driftPPM }

// ClockError returns how far node id's clock reads from true time now.
func (s *Sim) ClockError(id wire.NodeID) time.Duration {
	n := s.nodes[id]
	return time.Duration(n.Now() - Epoch - s.now)
}

func (s *Sim) String() string {
	return fmt.Sprintf("sim(seed=%d t=%s steps=%d)", s.cfg.Seed, time.Duration(s.now), s.steps)
}
