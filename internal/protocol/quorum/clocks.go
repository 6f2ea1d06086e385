package quorum

import (
	"math"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
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
// probes have given, aged by 2ρ/(1−ρ) of the time since on its own clock,
// for as long as that peer's incarnation keeps probing.
//
// A peer's clock may step while it is down (a reboot's clock comes from the
// hardware clock, or chrony steps it at boot), which voids the bounds its
// earlier incarnation gave. Two rules drop them: a peer not heard from for
// silence (three probe intervals, shorter than any reboot) is unknown, and
// its next probe starts afresh; and each probe carries its sender's
// incarnation (the wall time its replica started), so a probe of a newer
// incarnation replaces the bound however loose, and a late probe of an
// older one is ignored.

// peerClock is the tightest bound so far on how far this node's clock is
// ahead of one peer's current incarnation.
type peerClock struct {
	aheadNs int64 // bound on own clock − peer's clock when the probe arrived
	atNs    int64 // this node's Now when that probe arrived
	heardNs int64 // this node's Now when the peer's latest probe arrived
	epoch   int64 // the peer's incarnation (Clock.Epoch) the bound is of
	ok      bool  // a probe has arrived since this replica started
}

// bound is p's bound at now, aged by 2ρ of the time since: now − at is
// measured on this node's clock, which runs at least 1−ρ of true time, so
// the true time since is at most (now − at)/(1−ρ).
func (p peerClock) bound(now int64, rho float64) int64 {
	return p.aheadNs + aging(now-p.atNs, rho)
}

// aging is how much two clocks within rho of true time's rate may move
// apart while d passes on one of them.
func aging(d int64, rho float64) int64 {
	return int64(math.Ceil(float64(max(d, 0)) * 2 * rho / (1 - rho)))
}

// live reports whether p is a bound to use at now: a probe has arrived,
// the latest within silence.
func (p peerClock) live(now, silence int64) bool {
	return p.ok && now-p.heardNs <= silence
}

// silence is how long a peer may go unheard before its bound is dropped:
// three probe intervals.
func (r *Replica) silence() int64 { return 3 * int64(r.ks.cfg.ClockProbeInterval) }

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

// probe sends this node's clock to every other node, and arms the next
// round. The probe leaves after the handler's store writes are durable, a
// little after the clock was read; the bound holds for any send time
// after the reading.
//
// A probe's bound is the clocks' offset plus its transit, and the offset
// can be as low as −δ, so over a link whose one-way delay is 3δ or more
// every bound is 2δ or more, and so is the wait of a node with such a
// peer. A node with a peer that far (any multi-region world at the
// default δ, by env.Env.Latency) sends no probes: they could lower no
// wait but that of a node whose every peer is near and which is near it
// too (the middle of a line a–b–c with a and c far apart), which then
// keeps its full 2δ. Its peers never hear from it and keep 2δ, as the
// probes would have left all but that middle node.
func (r *Replica) probe(e env.Env) {
	e.SetTimer(r.ks.cfg.ClockProbeInterval, &r.probeTick)
	far := time.Duration(3 * r.ks.commitWaitNs / 2) // 3δ
	for _, n := range r.ks.topo.Nodes {
		if n.ID != r.id && e.Latency(n.ID) >= far {
			return
		}
	}
	wall := e.Wall()
	for _, n := range r.ks.topo.Nodes {
		if n.ID != r.id {
			e.Send(n.ID, &Clock{Wall: wall, Epoch: r.epoch})
		}
	}
}

// onClock takes a probe from a peer: its bound replaces the one kept when
// it is at least as tight as the kept one aged to now, or when the kept one
// is of an earlier incarnation or went silent; a probe of an earlier
// incarnation than the kept one is ignored.
func (r *Replica) onClock(e env.Env, from wire.NodeID, m *Clock) {
	if r.peers == nil || from == r.id || int(from) < 0 || int(from) >= len(r.peers) {
		return
	}
	now, p := e.Now(), &r.peers[from]
	if p.ok && m.Epoch < p.epoch && !r.ks.cfg.keepStale {
		return
	}
	ahead := e.Wall() - m.Wall
	fresh := !p.live(now, r.silence()) || m.Epoch > p.epoch
	if r.ks.cfg.keepStale {
		fresh = !p.ok
	}
	if fresh || ahead <= p.bound(now, r.rho) {
		p.aheadNs, p.atNs = ahead, now
	}
	p.heardNs, p.epoch, p.ok = now, m.Epoch, true
}

// commitWait is how far past a version's wall time this node's clock must
// read before an answer carrying that version leaves: 2δ (doc.go, "Commit
// wait"), or under commit_wait measured the most this node's clock may be
// ahead of any peer's now, when every peer's bound is live and that is
// less. Never negative: the clock must always pass the version's own wall
// time.
func (r *Replica) commitWait(e env.Env) int64 { return r.commitWaitAt(e.Now()) }

// commitWaitAt is commitWait with the node's clock (env.Env.Now) at now.
func (r *Replica) commitWaitAt(now int64) int64 {
	w := r.ks.commitWaitNs
	if r.peers == nil {
		return w
	}
	ahead, silence := int64(math.MinInt64), r.silence()
	if r.ks.cfg.keepStale {
		silence = math.MaxInt64
	}
	for i, p := range r.peers {
		if wire.NodeID(i) == r.id {
			continue
		}
		if !p.live(now, silence) {
			return w
		}
		ahead = max(ahead, p.bound(now, r.rho))
	}
	return min(max(ahead-int64(r.ks.cfg.shaveWait), 0), w)
}

// Counters implements protocol.Counted: under clock order with a commit
// wait, the wait an answer from this node takes now, so an operator can
// see what commit_wait measured has measured.
func (r *Replica) Counters(now int64) []protocol.Counter {
	if r.ks.commitWaitNs == 0 {
		return nil
	}
	return []protocol.Counter{{Name: "commit_wait_seconds", Gauge: true, Value: float64(r.commitWaitAt(now)) / 1e9,
		Help: "How long past its version's wall time a clock-ordered answer from this node waits now: 2δ, or under commit_wait measured the measured bound."}}
}
