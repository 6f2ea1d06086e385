package sim

import (
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// Published reads (Config.PublishReads). The real server answers a read
// without its protocol when the protocol published the reply for it
// (env.PublishRead) and nothing has withdrawn it since (internal/node): a
// write of the key through the node's store, env.WithdrawRead, the
// publication's end on the node's clock, or a crash. With PublishReads
// the simulator does the same, so the seeded fault runs check those
// answers too: a client's read at its gateway is answered from the
// gateway's published reply, at once, when the client has no earlier
// request that is not yet answered or lost (as a RESP connection with
// nothing in flight; a crash loses the requests its node was handling, as
// a crashed server's connections close) and the request names no keyspace
// (the simulator runs a protocol's replicas without a keyspace Mux, so a
// key is its store key). The server keeps a reply once what it carries is
// durable: at once if its handler read no key awaiting a sync, else after
// the batch's sync. Here every handler's writes are synced as it ends,
// before its output leaves, so a reply is published then. Values past
// env.MaxPublishedValue are not published, as on the server; the server's
// bound on all published replies together (forgetting them all past it)
// is not modelled.

// pubRead is a published reply.
type pubRead struct {
	level wire.Level
	until int64 // the node's Now from which it is not given; 0: none
	rep   wire.Reply
}

type queuedPub struct {
	key string
	p   pubRead
}

// nodePub is a node's published replies; reads is nil without
// PublishReads.
type nodePub struct {
	reads  map[string]pubRead
	queued []queuedPub // published by the running handler
	served uint64      // reads answered from reads
}

// PublishRead implements env.ReadPublisher.
func (n *node) PublishRead(key string, level wire.Level, r *wire.Reply, until int64) bool {
	if n.pub.reads == nil {
		return false
	}
	if r.Err == nil && len(r.Value) <= env.MaxPublishedValue {
		p := pubRead{level: level, until: until, rep: *r}
		p.rep.ID, p.rep.Client = 0, 0
		n.pub.queued = append(n.pub.queued, queuedPub{key, p})
	}
	return true
}

// WithdrawRead implements env.ReadPublisher.
func (n *node) WithdrawRead(key string) {
	if n.pub.reads == nil {
		return
	}
	n.pub.queued = slices.DeleteFunc(n.pub.queued, func(q queuedPub) bool { return q.key == key })
	delete(n.pub.reads, key)
}

// publishQueued publishes what the handler published, its output having
// left after the store's sync.
func (n *node) publishQueued() {
	for i, q := range n.pub.queued {
		n.pub.reads[q.key] = q.p
		n.pub.queued[i] = queuedPub{}
	}
	n.pub.queued = n.pub.queued[:0]
}

// forgetPublished forgets every published reply: the node crashed.
func (n *node) forgetPublished() {
	if n.pub.reads == nil {
		return
	}
	clear(n.pub.reads)
	clear(n.pub.queued)
	n.pub.queued = n.pub.queued[:0]
}

// cachedRead answers req at gateway n from its published reply, if the
// rules above allow it.
func (s *Sim) cachedRead(n *node, req *wire.Request) bool {
	if n.pub.reads == nil || req.Op != wire.OpGet || req.Keyspace != "" || s.owed[req.Client] > 1 {
		return false
	}
	p, ok := n.pub.reads[req.Key]
	if !ok || p.level != req.Level || (p.until != 0 && n.Now() >= p.until) {
		return false
	}
	rep := p.rep
	rep.ID, rep.Client = req.ID, req.Client
	n.pub.served++
	s.reply(s.now, n.id, &rep)
	return true
}

// owe counts a request of client c from its submission until its reply
// leaves its gateway, or it is lost (its gateway down when it arrives, or
// crashed with it unanswered); cachedRead's own request counts itself. A
// crash loses what the node was handling (unowe), as a crashed server's
// connections close with their requests.
func (s *Sim) owe(c wire.ClientID) {
	if s.cfg.PublishReads {
		s.owed[c]++
	}
}

// handledAt is a client's requests its gateway node is handling.
type handledAt struct {
	c    wire.ClientID
	node wire.NodeID
}

// handling counts c's request that arrived at node (up).
func (s *Sim) handling(c wire.ClientID, node wire.NodeID) {
	if s.cfg.PublishReads {
		s.handled[handledAt{c, node}]++
	}
}

// paid counts c's reply leaving node.
func (s *Sim) paid(c wire.ClientID, node wire.NodeID) {
	if !s.cfg.PublishReads {
		return
	}
	s.lost(c)
	k := handledAt{c, node}
	if n := s.handled[k]; n > 1 {
		s.handled[k] = n - 1
	} else {
		delete(s.handled, k)
	}
}

// lost forgets one of c's requests.
func (s *Sim) lost(c wire.ClientID) {
	if n := s.owed[c]; n > 1 {
		s.owed[c] = n - 1
	} else {
		delete(s.owed, c)
	}
}

// unowe forgets the requests node was handling: it crashed.
func (s *Sim) unowe(node wire.NodeID) {
	for k, n := range s.handled { // lint:order-independent: sums and deletes only
		if k.node != node {
			continue
		}
		for range n {
			s.lost(k.c)
		}
		delete(s.handled, k)
	}
}

// PublishedReadsServed is how many client reads were answered from
// published replies (Config.PublishReads).
func (s *Sim) PublishedReadsServed() uint64 {
	var t uint64
	for _, n := range s.nodes {
		t += n.pub.served
	}
	return t
}
