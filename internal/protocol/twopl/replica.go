package twopl

import (
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Replica is one node. Every node is a gateway (it forwards its clients'
// transactions to its region's coordinator and answers them); the
// region's first node is also the coordinator: the manager of the
// transactions its region submits (manager.go) and the region's lock
// table and replica of every key (locks.go).
type Replica struct {
	cfg    Config
	id     wire.NodeID
	coord  wire.NodeID   // this region's coordinator
	coords []wire.NodeID // every region's coordinator, in region order
	clock  hlc.Clock

	// Gateway.
	gw *txngw.Gateway

	// Manager (coordinators only).
	lastTS int64
	txns   map[txnID]*txn
	seen   map[submitKey]bool // Submits taken (network duplicates run once)
	seenQ  []submitKey

	// Lock table (coordinators only).
	locks   map[string][]holder
	held    map[txnID]*lockReq // granted or queued
	queue   []*lockReq         // queued, oldest first
	ended   map[txnID]bool     // attempts decided or refused here
	endedQ  []txnID
	applied uint64
}

type submitKey struct {
	gw  wire.NodeID
	seq uint64
}

// Timer payloads.
type (
	tick         struct{ id txnID } // a manager's resend and lock timeout
	queueTimeout struct{ id txnID } // a queued lock request's lock timeout
	grantInquiry struct{ id txnID } // a grant undecided for long
)

// maxRemembered bounds the Submits and ended attempts a coordinator
// remembers (doc.go, "Limits").
const maxRemembered = 1 << 15

func newReplica(cfg Config, id wire.NodeID) *Replica {
	return &Replica{cfg: cfg, id: id, gw: txngw.NewGateway(Name), txns: map[txnID]*txn{},
		seen: map[submitKey]bool{}, locks: map[string][]holder{}, held: map[txnID]*lockReq{}, ended: map[txnID]bool{}}
}

// Start implements env.Replica.
func (r *Replica) Start(e env.Env) {
	t := e.Topology()
	r.coord = t.ByRegion[t.RegionOf(r.id)][0]
	r.coords = r.coords[:0]
	for _, ns := range t.ByRegion {
		r.coords = append(r.coords, ns[0])
	}
	r.gw.Start(e)
}

func (r *Replica) isCoord() bool { return r.id == r.coord }

// majority is how many regions lock or commit a transaction.
func (r *Replica) majority() int {
	if r.cfg.unsafeOneRegion {
		return 1
	}
	return len(r.coords)/2 + 1
}

// Request implements env.Replica: a single-key get, put or delete runs
// as a one-operation transaction; a transaction is checked and forwarded
// to the region's coordinator (txngw).
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
	switch m := m.(type) {
	case *Result:
		r.gw.OnResult(e, &m.Result)
		return
	}
	if !r.isCoord() {
		return // a message for a coordinator that was one before a change
	}
	switch m := m.(type) {
	case *Submit:
		r.onSubmit(e, from, m)
	case *Vote:
		r.onVote(e, from, m)
	case *Wound:
		r.onWound(e, from, m)
	case *Done:
		r.onDone(e, from, m)
	case *Prepare:
		r.onPrepare(e, from, m)
	case *Decide:
		r.onDecide(e, from, m)
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, p any) {
	switch p := p.(type) {
	case txngw.Timeout:
		r.gw.OnTimeout(e, p)
	case tick:
		r.onTick(e, p.id)
	case queueTimeout:
		r.onQueueTimeout(e, p.id)
	case grantInquiry:
		r.onGrantInquiry(e, p.id)
	}
}

// remember adds k to a bounded set, forgetting the oldest beyond
// maxRemembered.
func remember[K comparable](set map[K]bool, q *[]K, k K) {
	if set[k] {
		return
	}
	set[k] = true
	*q = append(*q, k)
	if len(*q) > maxRemembered {
		delete(set, (*q)[0])
		*q = slices.Delete(*q, 0, 1)
	}
}
