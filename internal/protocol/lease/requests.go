package lease

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Requests are at-most-once across restarts (doc.go, "Requests"). A
// gateway addresses each attempt of a write or migration to one
// incarnation of its target — the number of times the target has started,
// bumped durably by Start — and only that incarnation may execute it.
// Within an incarnation the first copy of an attempt is handled and later
// copies dropped (firstCopy); a copy addressed to another incarnation is
// refused with Stale and the receiver's incarnation, so the memory of
// which attempts were seen, lost on a restart, is never needed across one.

// incKey holds the node's incarnation; like activeKey it cannot collide
// with a mastership record.
const incKey = metaPrefix + metaPrefix + "incarnation"

// startIncarnation bumps the stored incarnation and tells the other nodes.
// The store write is durable before the Hellos leave (persist before
// send), so no message naming this incarnation outlives a crash that
// loses it, and a restart never reuses a number something was addressed to.
func (r *Replica) startIncarnation(e env.Env) {
	var prev uint64
	if rec, ok := r.get(e, incKey); ok {
		d := wire.NewDecoder(rec.Value)
		prev = d.Uvarint()
		if err := d.Err(); err != nil {
			e.FailStop(fmt.Errorf("lease: incarnation record: %w", err))
			return
		}
	}
	r.inc = prev + 1
	r.incs = map[wire.NodeID]uint64{r.id: r.inc}
	if !r.put(e, incKey, store.Record{Value: wire.AppendUvarint(nil, r.inc)}) {
		return
	}
	for _, n := range r.ks.topo.Nodes {
		if n.ID != r.id {
			e.Send(n.ID, &Hello{Inc: r.inc})
		}
	}
}

// learnInc records that node n has started its inc-th incarnation.
func (r *Replica) learnInc(n wire.NodeID, inc uint64) {
	r.incs[n] = max(r.incs[n], inc)
}

// attempt sends g's request to g.target, addressed to the target's newest
// incarnation this gateway knows (0 if none: every node refuses it, and
// says which incarnation it is). Each attempt is a fresh copy: a message
// already sent is never changed.
func (r *Replica) attempt(e env.Env, g *gop) {
	g.inc = r.incs[g.target]
	r.send(e, g.target, g.msg.addressed(g.inc))
}

// request is a gateway's request to a key's master.
type request interface {
	wire.Msg
	// addressed returns a copy addressed to incarnation inc.
	addressed(inc uint64) wire.Msg
}

func (m *MWrite) addressed(inc uint64) wire.Msg {
	c := *m
	c.Inc = inc
	return &c
}

func (m *Migrate) addressed(inc uint64) wire.Msg {
	c := *m
	c.Inc = inc
	return &c
}

// staleAttempt handles g's target refusing an attempt because it is now
// incarnation inc. An answer to an earlier attempt (inc not above the one
// the current attempt was addressed to) is ignored. If the attempt was
// addressed to no incarnation, nothing can have executed it, and it is
// sent again to inc. Otherwise an earlier incarnation may have executed
// it before it restarted: the client is told the outcome is unknown
// (ErrTimeout, with msg).
func (r *Replica) staleAttempt(e env.Env, op uint64, g *gop, from wire.NodeID, inc uint64, msg string) {
	r.learnInc(from, inc)
	switch {
	case inc <= g.inc:
	case g.inc == 0:
		r.attempt(e, g)
	default:
		delete(r.ops, op)
		e.CancelTimer(g.timeout)
		e.Reply(&wire.Reply{ID: g.req.ID, Client: g.req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: msg}})
	}
}

// firstCopy reports whether this is the first copy of a gateway's request
// seen by this incarnation; later copies (network duplicates) are dropped,
// whatever the first one's fate. Entries older than the longest a
// duplicate can lag are forgotten.
func (r *Replica) firstCopy(e env.Env, from wire.NodeID, op uint64) bool {
	id := opID{from, op}
	if _, dup := r.seen[id]; dup {
		return false
	}
	now := e.Now()
	r.seen[id] = now
	if len(r.seen) > r.seenPurgeAt {
		horizon := now - 4*int64(r.ks.cfg.WriteTimeout+r.ks.cfg.ElectionTimeout)
		for k, at := range r.seen { // lint:order-independent: deletes only
			if at < horizon {
				delete(r.seen, k)
			}
		}
		r.seenPurgeAt = 2*len(r.seen) + 1024
	}
	return true
}
