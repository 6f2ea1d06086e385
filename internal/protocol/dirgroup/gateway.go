package dirgroup

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/wire"
)

// Fwd carries a client request from a gateway to the member of its
// region's frontend group it takes for the leader. ID names this attempt:
// a gateway never sends one ID twice (a retry after a redirect takes the
// next ID), and a frontend member handles an ID once (Seen).
type Fwd struct {
	ID    uint64
	Op    wire.Op
	Key   string
	Value []byte
}

// FwdReply answers a Fwd. Redirect says the member is not the leader and
// did not and will not apply the request: the gateway may send it again,
// to Hint (the leader the member knows of, or rsm.NoLeader).
type FwdReply struct {
	ID       uint64
	Found    bool
	Value    []byte
	Version  wire.Version
	Code     wire.ErrorCode // 0: success
	Msg      string
	Redirect bool
	Hint     wire.NodeID
}

// Kind implements wire.Msg.
func (*Fwd) Kind() string { return "fe.fwd" }

// Kind implements wire.Msg.
func (*FwdReply) Kind() string { return "fe.fwd_reply" }

// MessageTypes lists the gateway's messages for the network codec; a
// protocol using Gateway appends them to its own.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "fe.fwd", New: func() wire.Encodable { return new(Fwd) }},
		{Kind: "fe.fwd_reply", New: func() wire.Encodable { return new(FwdReply) }},
	}
}

// AppendPayload implements wire.Encodable.
func (m *Fwd) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.ID)
	b = wire.AppendUvarint(b, uint64(m.Op))
	b = wire.AppendString(b, m.Key)
	return wire.AppendBytes(b, m.Value)
}

// DecodePayload implements wire.Encodable.
func (m *Fwd) DecodePayload(d *wire.Decoder) {
	m.ID = d.Uvarint()
	m.Op = wire.Op(d.Uvarint())
	m.Key, m.Value = d.String(), d.Bytes()
}

// AppendPayload implements wire.Encodable.
func (m *FwdReply) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.ID)
	b = wire.AppendBool(b, m.Found)
	b = wire.AppendBytes(b, m.Value)
	b = wire.AppendVersion(b, m.Version)
	b = wire.AppendUvarint(b, uint64(m.Code))
	b = wire.AppendString(b, m.Msg)
	b = wire.AppendBool(b, m.Redirect)
	return wire.AppendVarint(b, int64(m.Hint))
}

// DecodePayload implements wire.Encodable.
func (m *FwdReply) DecodePayload(d *wire.Decoder) {
	m.ID, m.Found, m.Value, m.Version = d.Uvarint(), d.Bool(), d.Bytes(), d.Version()
	m.Code = wire.ErrorCode(d.Uvarint())
	m.Msg = d.String()
	m.Redirect, m.Hint = d.Bool(), wire.NodeID(d.Varint())
}

// Gateway is a node's gateway role: it hands each client request to its
// region's frontend leader and relays the answer. A request goes to the
// leader the node's own member of the group knows of (every node is a
// member), or, redirected, to the leader the redirecting member named; a
// redirected request was not applied, so sending it again is safe. A
// request sent and not answered within Timeout is answered "timeout"
// (outcome unknown) and never sent again: it may have been applied.
type Gateway struct {
	Self wire.NodeID
	// Proto prefixes error messages ("sc").
	Proto string
	// Timeout bounds a request's wait for its answer.
	Timeout time.Duration
	// Retry is how long a request waits before trying again when no
	// leader is known.
	Retry time.Duration
	// Leader is the leader the node's member of the region group knows
	// of, or rsm.NoLeader.
	Leader func() wire.NodeID
	// Local hands a Fwd to this node's own frontend member (the target
	// is this node); it answers through OnReply.
	Local func(e env.Env, m *Fwd)

	next    uint64
	pending map[uint64]*gwPending
}

// gwAttempts is how many IDs a request may use: ID base..base+gwAttempts-1.
const gwAttempts = 64

type gwPending struct {
	req     *wire.Request
	attempt uint64
	sent    bool // the current attempt is out (its answer may still come)
	to      wire.NodeID
	hint    wire.NodeID
	timer   env.TimerID
	retry   env.TimerID
}

// GwTimer is the gateway's timer payload: a request's deadline, or (Retry)
// its next attempt.
type GwTimer struct {
	Base  uint64
	Retry bool
}

// Start draws a random first ID, so answers meant for a previous
// incarnation match nothing.
func (g *Gateway) Start(e env.Env) {
	g.next = e.Rand().Uint64() >> 8 &^ (gwAttempts - 1)
	g.pending = make(map[uint64]*gwPending)
}

// Forward takes a client request.
func (g *Gateway) Forward(e env.Env, req *wire.Request) {
	g.next += gwAttempts
	base := g.next
	p := &gwPending{req: req, hint: rsm.NoLeader}
	p.timer = e.SetTimer(g.Timeout, GwTimer{Base: base})
	g.pending[base] = p
	g.send(e, base, p)
}

func (g *Gateway) send(e env.Env, base uint64, p *gwPending) {
	to := p.hint
	if to == rsm.NoLeader {
		to = g.Leader()
	}
	if to == rsm.NoLeader {
		p.sent = false
		p.retry = e.SetTimer(g.Retry, GwTimer{Base: base, Retry: true})
		return
	}
	p.sent, p.hint, p.to = true, rsm.NoLeader, to
	m := &Fwd{ID: base + p.attempt, Op: p.req.Op, Key: p.req.Key, Value: p.req.Value}
	if to == g.Self {
		g.Local(e, m)
		return
	}
	e.Send(to, m)
}

// Settle runs after every input of the node: a request out to a member
// that is no longer the leader its group knows of (another was elected)
// is answered "timeout" at once, rather than at its deadline, so its
// client moves on to the new leader. Its outcome is unknown: the deposed
// leader may have committed it.
func (g *Gateway) Settle(e env.Env) {
	lead := g.Leader()
	if lead == rsm.NoLeader || len(g.pending) == 0 {
		return
	}
	var gone []uint64
	for base, p := range g.pending { // lint:order-independent: collected, then sorted
		if p.sent && p.to != lead {
			gone = append(gone, base)
		}
	}
	slices.Sort(gone)
	for _, base := range gone {
		p := g.pending[base]
		delete(g.pending, base)
		e.CancelTimer(p.timer)
		e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrTimeout,
			Msg: g.Proto + ": the region's frontend leader changed before answering (outcome unknown)"}})
	}
}

// OnReply takes a frontend member's answer.
func (g *Gateway) OnReply(e env.Env, m *FwdReply) {
	base := m.ID &^ (gwAttempts - 1)
	p, ok := g.pending[base]
	if !ok || !p.sent || m.ID-base != p.attempt {
		return // a duplicate, for an earlier attempt, or for a previous incarnation
	}
	if m.Redirect && p.attempt+1 < gwAttempts {
		// Not applied: try the leader named, or wait for one.
		p.attempt++
		p.hint = m.Hint
		if m.Hint == rsm.NoLeader {
			p.sent = false
			p.retry = e.SetTimer(g.Retry, GwTimer{Base: base, Retry: true})
			return
		}
		g.send(e, base, p)
		return
	}
	delete(g.pending, base)
	e.CancelTimer(p.timer)
	e.CancelTimer(p.retry)
	rep := &wire.Reply{ID: p.req.ID, Client: p.req.Client, Found: m.Found, Value: m.Value, Version: m.Version}
	switch {
	case m.Redirect:
		rep = &wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrUnavailable,
			Msg: fmt.Sprintf("%s: no frontend leader in the region after %d tries (not applied)", g.Proto, gwAttempts)}}
	case m.Code != 0:
		rep = &wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: m.Code, Msg: m.Msg}}
	}
	e.Reply(rep)
}

// OnTimer handles the gateway's timer.
func (g *Gateway) OnTimer(e env.Env, t GwTimer) {
	p, ok := g.pending[t.Base]
	if !ok {
		return
	}
	if t.Retry {
		if !p.sent {
			g.send(e, t.Base, p)
		}
		return
	}
	delete(g.pending, t.Base)
	e.CancelTimer(p.retry)
	if !p.sent {
		// Every attempt so far was redirected: none was applied.
		e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrUnavailable,
			Msg: g.Proto + ": no frontend leader in the region in time (not applied)"}})
		return
	}
	e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrTimeout,
		Msg: g.Proto + ": no answer from the region's frontend"}})
}

// Seen remembers the Fwd IDs a frontend member has handled (from, ID →
// when), so a duplicated Fwd is handled once. It forgets what no
// duplicate can still follow: a copy arrives within a network delay of
// the original, far less than Horizon.
type Seen struct {
	Horizon time.Duration
	by      SeenBy[seenKey]
}

type seenKey struct {
	from wire.NodeID
	id   uint64
}

// Add records (from, id) and reports whether it is new.
func (s *Seen) Add(e env.Env, from wire.NodeID, id uint64) bool {
	return s.by.First(seenKey{from, id}, e.Now(), int64(s.Horizon))
}
