// Package txngw is the gateway side the transactional protocols share
// (twopl, occ, catenae): every node takes its clients' gets, puts, deletes
// and transactions, checks them, forwards them as one transaction to its
// region's coordinator, and answers each client with the coordinator's
// result. Each protocol embeds Submit and Result in its own message types
// (their kinds are the protocol's).
package txngw

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Submit carries a client's transaction from the node that received it
// to its region's coordinator.
type Submit struct {
	Seq    uint64        // the gateway's request number
	Client wire.ClientID // the client's session
	Txn    wire.Txn
}

// Result is a coordinator's answer to a Submit.
type Result struct {
	Seq     uint64
	Code    wire.ErrorCode // 0: committed
	Msg     string
	Version wire.Version
	Results []wire.TxnResult
}

// AppendPayload implements wire.Encodable.
func (m *Submit) AppendPayload(b []byte) []byte {
	return wire.AppendTxn(wire.AppendUvarint(wire.AppendUvarint(b, m.Seq), uint64(m.Client)), m.Txn)
}

// DecodePayload implements wire.Encodable.
func (m *Submit) DecodePayload(d *wire.Decoder) {
	m.Seq, m.Client = d.Uvarint(), wire.ClientID(d.Uvarint())
	m.Txn = wire.DecodeTxn(d)
}

// AppendPayload implements wire.Encodable.
func (m *Result) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Seq)
	b = wire.AppendUvarint(b, uint64(m.Code))
	b = wire.AppendString(b, m.Msg)
	b = wire.AppendVersion(b, m.Version)
	return wire.AppendTxnResults(b, m.Results)
}

// DecodePayload implements wire.Encodable.
func (m *Result) DecodePayload(d *wire.Decoder) {
	m.Seq, m.Code, m.Msg, m.Version = d.Uvarint(), wire.ErrorCode(d.Uvarint()), d.String(), d.Version()
	m.Results = wire.DecodeTxnResults(d)
}

// AsTxn is req as a transaction: a get is a read-only transaction of one
// read, a put or delete one write; conditional writes and other
// operations are refused.
func AsTxn(req *wire.Request) (*wire.Txn, error) {
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

// Wait is how long a gateway waits for its coordinator before answering
// ErrTimeout: long, since a transaction may wait for a majority through
// partitions (the client's own timeout comes first); it bounds the
// requests a gateway holds when results are lost.
const Wait = time.Minute

// Gateway holds the requests a node forwarded.
type Gateway struct {
	proto   string // the protocol's name, for error messages
	seq     uint64
	waiting map[uint64]*wire.Request
}

// Timeout is the timer payload of a forwarded request's Wait.
type Timeout struct{ Seq uint64 }

// NewGateway returns an empty gateway for protocol proto.
func NewGateway(proto string) *Gateway {
	return &Gateway{proto: proto, waiting: map[uint64]*wire.Request{}}
}

// Start numbers requests from a random point, so a restarted gateway's
// are new to its coordinator's duplicate filter (a wall clock could step
// back across the restart).
func (g *Gateway) Start(e env.Env) { g.seq = e.Rand().Uint64() >> 1 }

// Forward checks req and hands it, as a Submit, to send; a request that
// is not a valid transaction is answered ErrInvalid at once.
func (g *Gateway) Forward(e env.Env, req *wire.Request, send func(*Submit)) {
	t, err := AsTxn(req)
	if err != nil {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: g.proto + ": " + err.Error()}})
		return
	}
	g.seq++
	g.waiting[g.seq] = req
	e.SetTimer(Wait, Timeout{g.seq})
	send(&Submit{Seq: g.seq, Client: req.Client, Txn: *t})
}

// OnResult answers the client of a forwarded request.
func (g *Gateway) OnResult(e env.Env, m *Result) {
	req, ok := g.waiting[m.Seq]
	if !ok {
		return // answered already (timeout or a duplicate)
	}
	delete(g.waiting, m.Seq)
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

// OnTimeout answers ErrTimeout to a request still waiting after Wait.
func (g *Gateway) OnTimeout(e env.Env, p Timeout) {
	if req, ok := g.waiting[p.Seq]; ok {
		delete(g.waiting, p.Seq)
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrTimeout,
			Msg: g.proto + ": no answer from the region's coordinator; the transaction may or may not have committed"}})
	}
}

// Coordinators is every region's first node, in region order: the
// transactional protocols' coordinators, each holding every key.
func Coordinators(t *topo.Topology, proto string) ([]wire.NodeID, error) {
	var coords []wire.NodeID
	for _, ns := range t.ByRegion {
		if len(ns) == 0 {
			return nil, fmt.Errorf("%s: every region needs a node (its coordinator)", proto)
		}
		coords = append(coords, ns[0])
	}
	return coords, nil
}
