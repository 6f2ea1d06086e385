package sim

import "github.com/lightcone/lightcone/internal/wire"

// Published reads (Config.PublishReads). The real server answers a read
// without its protocol when the protocol published the reply for it
// (env.PublishRead) and nothing has withdrawn it since (internal/node): a
// write of the key through the node's store, env.WithdrawRead, the
// publication's end on the node's clock, or a crash. With PublishReads
// the simulator does the same, so the seeded fault runs check those
// answers too: a client's read at its gateway is answered from the
// gateway's published reply, at once, when the client has no earlier
// request that the gateway has not answered yet (as a RESP connection
// with nothing in flight) and the request names no keyspace (the
// simulator runs a protocol's replicas without a keyspace Mux, so a key
// is its store key). A reply is published once its handler's output has
// left, after the store's sync, as the server publishes once durable.

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
func (n *node) PublishRead(key string, level wire.Level, r *wire.Reply, until int64) {
	if n.pub.reads == nil || r.Err != nil {
		return
	}
	p := pubRead{level: level, until: until, rep: *r}
	p.rep.ID, p.rep.Client = 0, 0
	n.pub.queued = append(n.pub.queued, queuedPub{key, p})
}

// WithdrawRead implements env.ReadPublisher.
func (n *node) WithdrawRead(key string) {
	if n.pub.reads == nil {
		return
	}
	for i := 0; i < len(n.pub.queued); i++ {
		if n.pub.queued[i].key == key {
			n.pub.queued = append(n.pub.queued[:i], n.pub.queued[i+1:]...)
			i--
		}
	}
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

// owe counts a request of client c on its way to its gateway or being
// handled there (the request answered from a published reply counts
// itself); paid counts its reply leaving the gateway. A request lost with
// its gateway stays owed: that client's reads then always take the
// protocol.
func (s *Sim) owe(c wire.ClientID) {
	if s.cfg.PublishReads {
		s.owed[c]++
	}
}

func (s *Sim) paid(c wire.ClientID) {
	if n := s.owed[c]; n > 1 {
		s.owed[c] = n - 1
	} else if n == 1 {
		delete(s.owed, c)
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
