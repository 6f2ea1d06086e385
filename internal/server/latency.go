package server

import (
	"sync"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/transport"
	"github.com/lightcone/lightcone/internal/wire"
)

// measuredLatency gives the node's replicas the one-way latencies they size
// waits from (env.Env.Latency; MeteorShower θt, §4.2.2): half the minimum round trip the
// transport has measured between this node and a peer (pings every
// PingInterval, WAN emulation included), or the world's configured base
// delay until a link has been measured or for pairs not involving this
// node. It refreshes its copy of the measurements at most once a second.
type measuredLatency struct {
	self wire.NodeID
	topo *topo.Topology

	mu      sync.Mutex
	tr      *transport.Transport
	rtts    map[wire.NodeID]transport.RTT
	fetched time.Time
}

func (m *measuredLatency) set(tr *transport.Transport) {
	m.mu.Lock()
	m.tr = tr
	m.mu.Unlock()
}

// latency is node.Config.Latency: env.Env.Latency from this node.
func (m *measuredLatency) latency(to wire.NodeID) time.Duration { return m.OneWay(m.self, to) }

// OneWay is the minimum one-way delay from a to b.
func (m *measuredLatency) OneWay(a, b wire.NodeID) time.Duration {
	base := m.topo.BaseDelay(a, b)
	other := b
	switch m.self {
	case a:
	case b:
		other = a
	default:
		return base
	}
	if other == m.self {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tr != nil && time.Since(m.fetched) > time.Second {
		m.rtts, m.fetched = m.tr.RTTs(), time.Now()
	}
	if r, ok := m.rtts[other]; ok && r.Count > 0 {
		return r.Min / 2
	}
	return base
}
