package twopl

import (
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"slices"
	"strconv"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// txn is one attempt of a transaction at its manager, the coordinator of
// the region that submitted it.
type txn struct {
	id      txnID
	gw      wire.NodeID // the gateway to answer
	seq     uint64
	ops     []wire.TxnOp
	keys    []string // the keys, sorted, each once
	excl    []bool   // keys[i] is written
	retries int      // left
	began   int64    // e.Now() when this attempt began

	votes   map[wire.NodeID]*Vote // granted
	refused map[wire.NodeID]bool
	// OCC (occ.go): the read phase's votes, once a majority answered;
	// the votes above are then the validation's.
	reads  map[wire.NodeID]*Vote
	expect []wire.Version // the newest versions among reads

	decided, commit bool
	decision        *Decide
	done            map[wire.NodeID]bool // regions that applied the decision
	answered        bool
	result          *Result
}

// onSubmit begins a transaction a gateway forwarded (rule 1, doc.go).
func (r *Replica) onSubmit(e env.Env, from wire.NodeID, m *Submit) {
	k := submitKey{from, m.Seq}
	if r.seen[k] {
		return // a network duplicate: the transaction runs once
	}
	remember(r.seen, &r.seenQ, k)
	ts := max(e.Wall(), r.lastTS+1)
	r.lastTS = ts
	t := &txn{id: txnID{TS: ts, Node: r.id}, gw: from, seq: m.Seq, ops: m.Txn.Ops, retries: r.cfg.Retries}
	for _, op := range t.ops {
		i, found := slices.BinarySearch(t.keys, op.Key)
		if !found {
			t.keys = slices.Insert(t.keys, i, op.Key)
			t.excl = slices.Insert(t.excl, i, false)
		}
		t.excl[i] = t.excl[i] || op.Kind != wire.TxnRead
	}
	r.begin(e, t)
}

// begin starts an attempt: lock requests to every region (Paxos commit's
// first phase), and the attempt's tick.
func (r *Replica) begin(e env.Env, t *txn) {
	t.began = e.Now()
	t.votes, t.refused, t.done = map[wire.NodeID]*Vote{}, map[wire.NodeID]bool{}, map[wire.NodeID]bool{}
	r.txns[t.id] = t
	e.SetTimer(r.cfg.Resend, tick{t.id})
	r.prepare(e, t)
}

// prepare sends t's Prepare (its current phase's) to every region that
// has not answered it.
func (r *Replica) prepare(e env.Env, t *txn) {
	p := &Prepare{Txn: t.id, Keys: t.keys, Excl: t.excl}
	if r.cfg.optimistic {
		p.Read = t.reads == nil
		p.NoWait, p.Expect = !p.Read, t.expect
	}
	reading := t.reads == nil
	for _, c := range r.coords {
		if t.decided || reading != (t.reads == nil) {
			return // decided, or moved to the next phase, on a local vote
		}
		if t.votes[c] == nil && !t.refused[c] {
			r.send(e, c, p)
		}
	}
}

// onTick resends what is unanswered, and aborts an attempt without a
// majority of grants after the lock timeout.
func (r *Replica) onTick(e env.Env, id txnID) {
	t, ok := r.txns[id]
	if !ok {
		return
	}
	if !t.decided {
		if e.Now()-t.began >= int64(r.cfg.LockTimeout) {
			r.abort(e, t, "lock timeout")
			return
		}
		e.SetTimer(r.cfg.Resend, tick{id})
		r.prepare(e, t)
		return
	}
	e.SetTimer(r.cfg.Resend, tick{id})
	for _, c := range r.coords {
		if !t.done[c] {
			r.send(e, c, t.decision)
		}
	}
}

// onVote counts a region's grant or refusal (rule 2).
func (r *Replica) onVote(e env.Env, from wire.NodeID, m *Vote) {
	t, ok := r.txns[m.Txn]
	if !ok || t.decided || t.votes[from] != nil || t.refused[from] || m.Read != (r.cfg.optimistic && t.reads == nil) {
		return
	}
	if !m.Granted {
		t.refused[from] = true
		if len(t.refused) > len(r.coords)-r.majority() {
			r.abort(e, t, "refused by a majority of regions (lock timeout)")
		}
		return
	}
	if len(m.Recs) != len(t.keys) || len(m.Found) != len(t.keys) {
		return // malformed
	}
	t.votes[from] = m
	switch {
	case len(t.votes) < r.majority():
	case m.Read:
		r.startValidation(e, t)
	case t.reads != nil:
		r.execute(e, t, t.reads)
	default:
		r.execute(e, t, t.votes)
	}
}

// execute runs a transaction holding a majority of regions' locks: each
// key's current value is the newest version among the granting regions'
// records (rule 3), the results and writes follow, and the decision goes
// to every region (rule 4).
func (r *Replica) execute(e env.Env, t *txn, votes map[wire.NodeID]*Vote) {
	cur, found := r.newest(e, t, votes)
	res := &Result{txngw.Result{Seq: t.seq, Results: make([]wire.TxnResult, len(t.ops))}}
	var writes []int // indexes into keys
	next := slices.Clone(cur)
	for i, op := range t.ops {
		k, _ := slices.BinarySearch(t.keys, op.Key)
		// A read then a write of one key reads the value before the write.
		live := found[k] && !cur[k].Tombstone
		if op.Kind == wire.TxnRead || op.Kind == wire.TxnAdd {
			res.Results[i] = wire.TxnResult{Found: live, Version: cur[k].Version}
			if live {
				res.Results[i].Value = cur[k].Value
			}
		}
		switch op.Kind {
		case wire.TxnWrite:
			next[k] = store.Record{Value: op.Value, Tombstone: op.Delete}
			if op.Delete {
				next[k].Value = nil
			}
		case wire.TxnAdd:
			var n int64
			if live {
				var err error
				if n, err = strconv.ParseInt(string(cur[k].Value), 10, 64); err != nil {
					r.fail(e, t, wire.ErrInvalid, "twopl: add to "+strconv.Quote(op.Key)+": its value is not a decimal integer; nothing was written")
					return
				}
			}
			if op.Delta > 0 && n > 1<<63-1-op.Delta || op.Delta < 0 && n < -1<<63-op.Delta {
				r.fail(e, t, wire.ErrInvalid, "twopl: add to "+strconv.Quote(op.Key)+" would overflow; nothing was written")
				return
			}
			next[k] = store.Record{Value: strconv.AppendInt(nil, n+op.Delta, 10)}
		default:
			continue
		}
		if !slices.Contains(writes, k) {
			writes = append(writes, k)
		}
	}
	d := &Decide{Txn: t.id, Commit: len(writes) > 0}
	if d.Commit {
		// One version above every version read (the HLC observed each).
		res.Version = wire.Version{TS: r.clock.Now(e.Wall()), Node: r.id}
		slices.Sort(writes)
		for _, k := range writes {
			if !env.Invariant(e, !found[k] || cur[k].Version.Less(res.Version), "twopl: version %v at or below %q's %v", res.Version, t.keys[k], cur[k].Version) {
				return
			}
			next[k].Version = res.Version
			d.Keys, d.Recs = append(d.Keys, t.keys[k]), append(d.Recs, next[k])
		}
	}
	t.result = res
	if !d.Commit {
		// Read-only: the reads are what a majority's read locks froze;
		// answer now and release (rule 5).
		r.answer(e, t, res)
	}
	r.decide(e, t, d)
}

// newest is each of t's keys' newest record among votes (found: any
// vote had one).
func (r *Replica) newest(e env.Env, t *txn, votes map[wire.NodeID]*Vote) ([]store.Record, []bool) {
	cur := make([]store.Record, len(t.keys))
	found := make([]bool, len(t.keys))
	for _, c := range r.coords { // region order: deterministic
		v := votes[c]
		if v == nil {
			continue
		}
		for i := range t.keys {
			if v.Found[i] && (!found[i] || cur[i].Version.Less(v.Recs[i].Version)) {
				cur[i], found[i] = v.Recs[i], true
			}
			if v.Found[i] {
				r.clock.Observe(e.Wall(), v.Recs[i].Version.TS)
			}
		}
	}
	return cur, found
}

// decide records and sends t's decision.
func (r *Replica) decide(e env.Env, t *txn, d *Decide) {
	t.decided, t.commit, t.decision = true, d.Commit, d
	for _, c := range r.coords {
		r.send(e, c, d)
	}
}

// onDone counts a region that applied the decision: a commit is answered
// once a majority has (Paxos commit's second phase), and the manager
// forgets the attempt once every region has.
func (r *Replica) onDone(e env.Env, from wire.NodeID, m *Done) {
	t, ok := r.txns[m.Txn]
	if !ok || !t.decided {
		return
	}
	t.done[from] = true
	if t.commit && len(t.done) >= r.majority() {
		r.answer(e, t, t.result)
	}
	if len(t.done) == len(r.coords) {
		delete(r.txns, t.id)
	}
}

// onWound aborts t if it has not decided (wound-wait: an older
// transaction waits for its locks). A wound for an attempt this manager
// no longer knows comes from a grant whose decision every region had
// already applied (a stale Prepare granted again): its release is safe.
func (r *Replica) onWound(e env.Env, from wire.NodeID, m *Wound) {
	t, ok := r.txns[m.Txn]
	switch {
	case !ok && m.Txn.Node == r.id:
		r.send(e, from, &Decide{Txn: m.Txn})
	case ok && !t.decided:
		r.abort(e, t, "wounded by an older transaction")
	}
}

// abort ends t's attempt without effect and retries it, with its age,
// or answers ErrUnavailable.
func (r *Replica) abort(e env.Env, t *txn, why string) {
	r.decide(e, t, &Decide{Txn: t.id})
	if t.retries > 0 {
		n := &txn{id: t.id, gw: t.gw, seq: t.seq, ops: t.ops, keys: t.keys, excl: t.excl, retries: t.retries - 1}
		n.id.Attempt++
		t.answered = true // the retry answers
		r.begin(e, n)
		return
	}
	r.answer(e, t, &Result{txngw.Result{Seq: t.seq, Code: wire.ErrUnavailable, Msg: "twopl: transaction aborted (" + why + "); it took no effect"}})
}

// fail ends t without effect and without retry.
func (r *Replica) fail(e env.Env, t *txn, code wire.ErrorCode, msg string) {
	r.decide(e, t, &Decide{Txn: t.id})
	r.answer(e, t, &Result{txngw.Result{Seq: t.seq, Code: code, Msg: msg}})
}

// answer sends t's result to its gateway, once.
func (r *Replica) answer(e env.Env, t *txn, res *Result) {
	if t.answered {
		return
	}
	t.answered = true
	r.send(e, t.gw, res)
}
