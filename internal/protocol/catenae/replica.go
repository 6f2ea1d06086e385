package catenae

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
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

	// Gateway.
	seq     uint64
	waiting map[uint64]*wire.Request // forwarded, by Submit.Seq

	// Coordinator (coord.go).
	c *coordinator
}

type submitKey struct {
	gw  wire.NodeID
	seq uint64
}

// Timer payloads.
type (
	gatewayTimeout struct{ seq uint64 }
	epochTick      struct{}
	executed       struct{ key compKey }
)

func newReplica(cfg Config, id wire.NodeID) *Replica {
	return &Replica{cfg: cfg, id: id, waiting: map[uint64]*wire.Request{}}
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
	// Request numbers from the clock, so a restarted gateway's are new to
	// its coordinator's duplicate filter.
	r.seq = uint64(max(e.Wall(), 0))
	if r.id == r.coord {
		r.c = newCoordinator(r)
		r.c.start(e)
	}
}

// Request implements env.Replica: a single-key get runs as a read-only
// transaction of one read, a put or delete as a transaction of one write;
// a transaction is checked and forwarded to the region's coordinator.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	t, err := asTxn(req)
	if err != nil {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: "catenae: " + err.Error()}})
		return
	}
	r.seq++
	r.waiting[r.seq] = req
	e.SetTimer(time.Minute, gatewayTimeout{r.seq})
	r.send(e, r.coord, &Submit{Seq: r.seq, Client: req.Client, Txn: *t})
}

// asTxn is req as a transaction.
func asTxn(req *wire.Request) (*wire.Txn, error) {
	var t *wire.Txn
	switch req.Op {
	case wire.OpTxn:
		t = req.Txn
	case wire.OpGet:
		t = &wire.Txn{ReadOnly: true, Ops: []wire.TxnOp{{Kind: wire.TxnRead, Key: req.Key}}}
	case wire.OpPut, wire.OpDelete:
		t = &wire.Txn{Ops: []wire.TxnOp{{Kind: wire.TxnWrite, Key: req.Key, Value: req.Value, Delete: req.Op == wire.OpDelete}}}
	default:
		return nil, fmt.Errorf("operation %v not supported: gets, puts, deletes and transactions only", req.Op)
	}
	if req.Cond {
		return nil, fmt.Errorf("conditional writes not supported; use a transaction")
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	return t, nil
}

// onResult answers the client of a forwarded request.
func (r *Replica) onResult(e env.Env, m *Result) {
	req, ok := r.waiting[m.Seq]
	if !ok {
		return // answered already (timeout or a duplicate)
	}
	delete(r.waiting, m.Seq)
	rep := &wire.Reply{ID: req.ID, Client: req.Client, Version: m.Version}
	switch {
	case m.Code != 0:
		rep.Err = &wire.Error{Code: m.Code, Msg: m.Msg}
	case req.Op == wire.OpTxn:
		rep.Txn = m.Results
	case req.Op == wire.OpGet && len(m.Results) == 1:
		res := m.Results[0]
		rep.Found, rep.Value, rep.Version = res.Found, res.Value, res.Version
	}
	e.Reply(rep)
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
		r.onResult(e, m)
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
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, p any) {
	switch p := p.(type) {
	case gatewayTimeout:
		if req, ok := r.waiting[p.seq]; ok {
			delete(r.waiting, p.seq)
			e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "catenae: no answer from the region's coordinator; the transaction may or may not have committed"}})
		}
	case epochTick:
		if r.c != nil {
			r.c.onTick(e)
		}
	case executed:
		if r.c != nil {
			r.c.onExecuted(e, p.key)
		}
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
