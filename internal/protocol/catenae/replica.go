package catenae

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"github.com/lightcone/lightcone/internal/wire"
)

// Replica is one node. Every node is a gateway: it forwards its clients'
// transactions to its region's coordinator and answers them. The region's
// first node is also the coordinator (doc.go, "Roles"): it cuts epochs,
// exchanges epoch messages, schedules batches, runs the region's chain
// servers and holds the region's committed copy of every key.
type Replica struct {
	cfg    Config
	id     wire.NodeID
	region int
	coord  wire.NodeID   // this region's coordinator
	coords []wire.NodeID // every region's coordinator, in region order

	gw *txngw.Gateway

	// Coordinator (coord.go).
	c *coordinator
}

type submitKey struct {
	gw  wire.NodeID
	seq uint64
}

// Timer payloads.
type (
	epochTick struct{}
	executed  struct{ key compKey }
)

func newReplica(cfg Config, id wire.NodeID) *Replica {
	return &Replica{cfg: cfg, id: id, gw: txngw.NewGateway(Name)}
}

// Start implements env.Replica.
func (r *Replica) Start(e env.Env) {
	t := e.Topology()
	r.region = t.RegionOf(r.id)
	r.coord = t.ByRegion[r.region][0]
	r.coords = r.coords[:0]
	for _, ns := range t.ByRegion {
		r.coords = append(r.coords, ns[0])
	}
	r.gw.Start(e)
	if r.id == r.coord {
		r.c = newCoordinator(r)
		r.c.start(e)
	}
}

// Request implements env.Replica: the request goes to the region's
// coordinator as a transaction (txngw).
func (r *Replica) Request(e env.Env, req *wire.Request) {
	r.gw.Forward(e, req, func(m *txngw.Submit) { r.send(e, r.coord, &Submit{*m}) })
}

// send delivers m to a node, in place when it is this one.
func (r *Replica) send(e env.Env, to wire.NodeID, m wire.Msg) {
	if to == r.id {
		r.Step(e, r.id, m)
		return
	}
	e.Send(to, m)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	if m, ok := m.(*Result); ok {
		r.gw.OnResult(e, &m.Result)
		return
	}
	if r.c == nil {
		return // a message for a coordinator that was one before a change
	}
	switch m := m.(type) {
	case *Submit:
		r.c.onSubmit(e, from, m)
	case *Epoch:
		r.c.onEpoch(e, m)
	}
	r.c.finish(e)
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, p any) {
	switch p := p.(type) {
	case txngw.Timeout:
		r.gw.OnTimeout(e, p)
	case epochTick:
		if r.c != nil {
			r.c.onTick(e)
		}
	case executed:
		if r.c != nil {
			r.c.onExecuted(e, p.key)
		}
	}
	if r.c != nil {
		r.c.finish(e)
	}
}

// Counters implements protocol.Counted.
func (r *Replica) Counters(int64) []protocol.Counter {
	if r.c == nil {
		return nil
	}
	s := r.c.stats
	return []protocol.Counter{
		protocol.Count("txns_total", "transactions scheduled in batches here", s.txns),
		protocol.Count("components_total", "conflicting components (two or more transactions) decided here", s.comps),
		protocol.Count("majority_total", "conflicting components decided by a majority of equal orders", s.majority),
		protocol.Count("no_majority_total", "conflicting components decided in the canonical order for want of a majority", s.noMajority),
		protocol.Count("spec_compared_total", "transactions of conflicting components whose dependencies every region reported", s.specCompared),
		protocol.Count("spec_agree_total", "of those, transactions with the same dependencies in every region (Fig. 4.24's success)", s.specAgree),
		protocol.Count("readonly_total", "read-only transactions served from the region's committed copy", s.readOnly),
		protocol.Count("epoch_msgs_total", "epoch messages sent", s.epochMsgs),
		protocol.Gauge("pending_components", "components scheduled and not yet decided", len(r.c.comps)),
	}
}
