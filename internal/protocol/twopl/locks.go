package twopl

import (
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// A region's coordinator keeps the region's lock table and its replica
// of every key (the node's store). A transaction's lock request is
// granted whole or queued whole: no transaction holds some of its locks
// in a region while waiting there for others.

// holder is a granted lock on one key.
type holder struct {
	id   txnID
	excl bool
}

// lockReq is one attempt's lock request in this region.
type lockReq struct {
	id      txnID
	from    wire.NodeID // its manager
	keys    []string
	excl    []bool
	granted bool
	wounded map[txnID]bool // younger holders already asked to abort
}

// onPrepare queues a lock request and grants what it can (rule 2).
func (r *Replica) onPrepare(e env.Env, from wire.NodeID, m *Prepare) {
	if len(m.Keys) != len(m.Excl) || m.NoWait && len(m.Expect) != len(m.Keys) {
		return // malformed
	}
	if m.Read {
		r.vote(e, from, m.Txn, m.Keys, true) // OCC's read phase: no lock
		return
	}
	if r.ended[m.Txn] {
		r.send(e, from, &Vote{Txn: m.Txn})
		return
	}
	if q, ok := r.held[m.Txn]; ok {
		if q.granted {
			r.grant(e, q) // a resend: the vote was lost
		}
		return
	}
	// A newer attempt of a transaction ends its older ones here: its
	// manager aborted them before it began this one.
	var stale []txnID
	for _, q := range r.queue {
		if q.id.sameTxn(m.Txn) && q.id.Attempt < m.Txn.Attempt {
			stale = append(stale, q.id)
		}
	}
	for _, h := range r.grantedSorted() {
		if h.id.sameTxn(m.Txn) && h.id.Attempt < m.Txn.Attempt {
			stale = append(stale, h.id)
		}
	}
	for _, id := range stale {
		r.release(id)
	}
	q := &lockReq{id: m.Txn, from: from, keys: m.Keys, excl: m.Excl, wounded: map[txnID]bool{}}
	if m.NoWait {
		r.validate(e, q, m.Expect)
		return
	}
	r.held[q.id] = q
	i, _ := slices.BinarySearchFunc(r.queue, q, func(a, b *lockReq) int { return cmpID(a.id, b.id) })
	r.queue = slices.Insert(r.queue, i, q)
	e.SetTimer(r.cfg.LockTimeout, queueTimeout{q.id})
	r.grantQueued(e)
}

// grantedSorted is the granted requests, oldest first.
func (r *Replica) grantedSorted() []*lockReq {
	var out []*lockReq
	for _, q := range r.held { // lint:order-independent: sorted below
		if q.granted {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *lockReq) int { return cmpID(a.id, b.id) })
	return out
}

func cmpID(a, b txnID) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// grantQueued grants every queued request, oldest first, that conflicts
// with no granted lock; a request that does conflict wounds the younger
// holders it waits for (wound-wait) and waits for the older ones.
func (r *Replica) grantQueued(e env.Env) {
	for i := 0; i < len(r.queue); {
		q := r.queue[i]
		blockers := r.conflicts(q)
		if len(blockers) == 0 {
			r.queue = slices.Delete(r.queue, i, i+1)
			r.lock(e, q)
			continue
		}
		for _, b := range blockers {
			if q.id.older(b.id) && !q.wounded[b.id] {
				q.wounded[b.id] = true
				r.send(e, b.from, &Wound{Txn: b.id})
			}
		}
		i++
	}
}

// lock grants q its locks and sends its vote.
func (r *Replica) lock(e env.Env, q *lockReq) {
	r.held[q.id] = q
	q.granted = true
	for j, k := range q.keys {
		r.locks[k] = append(r.locks[k], holder{q.id, q.excl[j]})
	}
	r.grant(e, q)
	e.SetTimer(4*r.cfg.LockTimeout, grantInquiry{q.id})
}

// validate is OCC's first phase of Paxos commit (occ.go): q's locks if
// they are free now and no key has a version above what q's transaction
// read (expect); otherwise a refusal, at once.
func (r *Replica) validate(e env.Env, q *lockReq, expect []wire.Version) {
	ok := len(r.conflicts(q)) == 0
	for i, k := range q.keys {
		if !ok {
			break
		}
		rec, found, err := e.Store().Get(k)
		ok = err == nil && (!found || !expect[i].Less(rec.Version))
	}
	if !ok {
		remember(r.ended, &r.endedQ, q.id)
		r.send(e, q.from, &Vote{Txn: q.id})
		return
	}
	r.lock(e, q)
}

// conflicts is the granted requests q waits for, oldest first, each once.
func (r *Replica) conflicts(q *lockReq) []*lockReq {
	var out []*lockReq
	for j, k := range q.keys {
		for _, h := range r.locks[k] {
			if (h.excl || q.excl[j]) && !h.id.sameTxn(q.id) {
				if b := r.held[h.id]; b != nil && !slices.Contains(out, b) {
					out = append(out, b)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *lockReq) int { return cmpID(a.id, b.id) })
	return out
}

// grant sends q's vote: its keys' records as they stand (rule 2).
func (r *Replica) grant(e env.Env, q *lockReq) { r.vote(e, q.from, q.id, q.keys, false) }

// vote sends a granting vote with keys' records as they stand.
func (r *Replica) vote(e env.Env, to wire.NodeID, id txnID, keys []string, read bool) {
	v := &Vote{Txn: id, Read: read, Granted: true, Found: make([]bool, len(keys)), Recs: make([]store.Record, len(keys))}
	for i, k := range keys {
		rec, ok, err := e.Store().Get(k)
		if err != nil {
			return // no vote: the manager resends, or times out
		}
		v.Found[i], v.Recs[i] = ok, rec
	}
	r.send(e, to, v)
}

// onQueueTimeout refuses a request still queued after the lock timeout.
func (r *Replica) onQueueTimeout(e env.Env, id txnID) {
	q, ok := r.held[id]
	if !ok || q.granted {
		return
	}
	r.release(id)
	remember(r.ended, &r.endedQ, id)
	r.send(e, q.from, &Vote{Txn: id})
	r.grantQueued(e)
}

// onGrantInquiry asks the manager of a grant left undecided for long
// (its decision lost with every resend, or a stale Prepare granted after
// the attempt ended) to decide it.
func (r *Replica) onGrantInquiry(e env.Env, id txnID) {
	q, ok := r.held[id]
	if !ok || !q.granted {
		return
	}
	r.send(e, q.from, &Wound{Txn: id})
	e.SetTimer(4*r.cfg.LockTimeout, grantInquiry{id})
}

// onDecide applies a decision: a commit's records (each only over an
// older version), then the release of the attempt's locks (rule 4). The
// Done leaves after the writes are durable (persist before send).
func (r *Replica) onDecide(e env.Env, from wire.NodeID, m *Decide) {
	if m.Commit && len(m.Keys) == len(m.Recs) {
		for i, k := range m.Keys {
			cur, ok, err := e.Store().Get(k)
			if err != nil {
				return // no Done: the manager resends
			}
			if ok && !cur.Version.Less(m.Recs[i].Version) {
				continue // applied already
			}
			if err := e.Store().Put(k, m.Recs[i]); err != nil {
				// The write may or may not have taken effect: fail-stop.
				e.FailStop(fmt.Errorf("twopl: commit write %q: %w", k, err))
				return
			}
		}
		r.applied++
	}
	if _, ok := r.held[m.Txn]; ok {
		r.release(m.Txn)
	}
	remember(r.ended, &r.endedQ, m.Txn)
	r.send(e, from, &Done{Txn: m.Txn})
	r.grantQueued(e)
}

// release drops an attempt's request and locks.
func (r *Replica) release(id txnID) {
	q, ok := r.held[id]
	if !ok {
		return
	}
	delete(r.held, id)
	if !q.granted {
		r.queue = slices.DeleteFunc(r.queue, func(x *lockReq) bool { return x.id == id })
		return
	}
	for _, k := range q.keys {
		hs := slices.DeleteFunc(r.locks[k], func(h holder) bool { return h.id == id })
		if len(hs) == 0 {
			delete(r.locks, k)
		} else {
			r.locks[k] = hs
		}
	}
}
