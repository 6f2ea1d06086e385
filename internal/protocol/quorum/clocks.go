package quorum

import (
	"math"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// Measured commit wait (Config.CommitWait "measured"; doc.go, "Measured
// commit wait"). Every node sends its wall clock to every other node every
// ClockProbeInterval. A probe from node j, sent when j's clock read c_j and
// received when this node's (i's) read c_i, bounds how far i's clock is
// ahead of j's: at any later time t,
//
//	clock_i(t) − clock_j(t) ≤ (c_i − c_j) + 2ρ·(t − arrival)
//
// since j's clock has advanced at least (1−ρ) of true time since it sent,
// and i's at most (1+ρ) since the probe arrived (Cristian's remote clock
// reading, 1989). A node keeps, for each peer, the smallest bound its
// probes have given, aged by 2ρ per second of its own clock.

// peerClock is the tightest bound so far on how far this node's clock is
// ahead of one peer's.
type peerClock struct {
	ahead int64 // bound on own clock − peer's clock, ns, when the probe arrived
	at    int64 // this node's Now when it arrived
	ok    bool  // a probe has arrived since this replica started
}

// bound is p's bound at now, aged by 2ρ of the time since: now − at is
// measured on this node's clock, which runs at least 1−ρ of true time, so
// the true time since is at most (now − at)/(1−ρ).
func (p peerClock) bound(now int64, rho float64) int64 {
	return p.ahead + int64(math.Ceil(float64(max(now-p.at, 0))*2*rho/(1-rho)))
}

// probeTimer is the payload of the probe timer.
type probeTimer struct{}

// measures reports whether this keyspace's commit wait is measured: clock
// order with commit wait on, on several nodes, under commit_wait measured.
func (k *Keyspace) measures() bool {
	return k.commitWaitNs > 0 && k.cfg.CommitWait == CommitWaitMeasured
}

// startProbes sends the first probes as the replica starts: until a probe
// from every peer has arrived, commitWait is the full 2δ.
func (r *Replica) startProbes(e env.Env) {
	if !r.ks.measures() {
		return
	}
	r.peers = make([]peerClock, len(r.ks.topo.Nodes))
	r.probe(e)
}

// probe sends this node's clock to every other node and arms the next
// round. The probe leaves after the handler's store writes are durable, a
// little after the clock was read; the bound holds for any send time
// after the reading.
func (r *Replica) probe(e env.Env) {
	wall := e.Wall()
	for _, n := range r.ks.topo.Nodes {
		if n.ID != r.id {
			e.Send(n.ID, &Clock{Wall: wall})
		}
	}
	e.SetTimer(r.ks.cfg.ClockProbeInterval, &r.probeTick)
}

// onClock takes a probe from a peer: its bound replaces the one kept when
// it is at least as tight as the kept one aged to now.
func (r *Replica) onClock(e env.Env, from wire.NodeID, m *Clock) {
	if r.peers == nil || from == r.id || int(from) < 0 || int(from) >= len(r.peers) {
		return
	}
	now, p := e.Now(), &r.peers[from]
	ahead := e.Wall() - m.Wall
	if !p.ok || ahead <= p.bound(now, r.rho) {
		*p = peerClock{ahead: ahead, at: now, ok: true}
	}
}

// commitWait is how far past a version's wall time this node's clock must
// read before an answer carrying that version leaves: 2δ (doc.go, "Commit
// wait"), or under commit_wait measured the most this node's clock may be
// ahead of any peer's now, when a probe from every peer has arrived and
// that is less. Never negative: the clock must always pass the version's
// own wall time.
func (r *Replica) commitWait(e env.Env) int64 {
	w := r.ks.commitWaitNs
	if r.peers == nil {
		return w
	}
	now, ahead := e.Now(), int64(math.MinInt64)
	for i, p := range r.peers {
		if wire.NodeID(i) == r.id {
			continue
		}
		if !p.ok {
			return w
		}
		ahead = max(ahead, p.bound(now, r.rho))
	}
	return min(max(ahead-int64(r.ks.cfg.shaveWait), 0), w)
}
