package vmpaxos

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/wire"
)

// maxCachedKeys bounds a proposer's cache of acceptor states (dropped
// whole past it; only a hint, as in cric); maxLate the requests of
// finished phases whose answers still refresh what the proposer knows
// (dropped whole past it: an answer then refreshes nothing).
const (
	maxCachedKeys = 4096
	maxLate       = 1 << 14
)

// view is what a proposer knows of one acceptor's state for an object.
type view struct {
	known bool
	st    cric.State
	// data is the value of st.V when hasData: an active acceptor sends it
	// only when the proposer needs it (reads, promises for the version
	// being proposed).
	data    []byte
	hasData bool
}

// value is a proposed value: write ID, data, delete.
type value struct {
	w    string
	data []byte
	del  bool
}

type phase uint8

const (
	phRead phase = iota + 1
	phFast
	phPrepare
	phAccept
	phBackoff
)

// op is one client operation this node runs as proposer or learner.
type op struct {
	id         uint64
	req        *wire.Request
	mine       value
	fast       bool
	views      []view
	ph         phase
	phSeq      uint64
	n          uint64
	b          cric.Ballot
	val        value
	answered   []bool
	ok         []bool
	reqs       []uint64
	sent, got  int
	timer      env.TimerID
	deadline   env.TimerID
	attempt    int
	fastDone   uint64
	proposedAt uint64 // cric rule 3a
	maxRound   uint64
	// rounds counts the round trips to acceptors on the operation's path
	// (a phase is RoundsPerPhase of them); dataBytes the value bytes it
	// sent to or received from acceptors.
	rounds    int
	dataBytes int
}

// pending is an outstanding request: stage 1 the phase's request (in
// ModeLog its append), stage 2 the read of the log after an append. key,
// ph and n (the version the phase is for) let an answer that comes after
// its phase still be read (refresh).
type pending struct {
	op, phSeq uint64
	acc       int
	stage     uint8
	rec       uint64 // ModeLog: the appended record
	key       string
	ph        phase
	n         uint64
}

type timerKind uint8

const (
	timerPhase timerKind = iota + 1
	timerDeadline
	timerBackoff
)

type opTimer struct {
	op, phSeq uint64
	kind      timerKind
}

type stats struct {
	cric.OpCosts
	fastCommits, slowCommits, writeBacks, timeouts uint64
	// Writes that could try the fast round but took the classic path, by
	// reason: too few acceptors known, or known but refusing (fastRound);
	// the highest version not known chosen, or promised past (plan).
	skipUnknown, skipRefused, skipUnchosen, skipPromised uint64
	// lateViews are answers to finished phases that refreshed a view.
	lateViews uint64
}

// Proposer is a node's proposer and learner (cric's algorithm, doc.go of
// fastpaxos and ppaxos): it keeps no durable state.
type Proposer struct {
	ks      *Keyspace
	id      wire.NodeID
	nonce   uint64
	nextID  uint64
	ops     map[uint64]*op
	pending map[uint64]pending
	// late holds the requests of finished phases: their answers are true
	// states of the acceptors, kept where they tell more (refresh).
	late map[uint64]pending
	// byKey are the live ops by object key, which late answers refresh too.
	byKey map[string][]*op
	cache map[string][]view
	stats stats
}

func newProposer(ks *Keyspace, id wire.NodeID) *Proposer {
	return &Proposer{ks: ks, id: id, ops: map[uint64]*op{}, pending: map[uint64]pending{}, late: map[uint64]pending{},
		byKey: map[string][]*op{}, cache: map[string][]view{}}
}

// Start implements env.Replica: a new nonce and request IDs per
// incarnation (ballots and answers of the last one match nothing).
func (p *Proposer) Start(e env.Env) {
	p.nonce = e.Rand().Uint64()
	p.nextID = e.Rand().Uint64()>>2 | 1
}

func (p *Proposer) newID() uint64 { p.nextID++; return p.nextID }

func (p *Proposer) fail(e env.Env, req *wire.Request, code wire.ErrorCode, format string, args ...any) {
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: code, Msg: fmt.Sprintf(p.ks.name+": "+format, args...)}})
}

// Request implements env.Replica; levels choose the fast round as in cric.
func (p *Proposer) Request(e env.Env, req *wire.Request) {
	fast := p.ks.cfg.FastRound
	switch req.Level {
	case wire.LevelDefault:
	case wire.All:
		fast = true
	case wire.Quorum:
		fast = false
	default:
		p.fail(e, req, wire.ErrInvalid, "consistency level %s: QUORUM (classic path), ALL (try the fast round) or DEFAULT", req.Level)
		return
	}
	o := &op{id: p.newID(), req: req, fast: fast}
	switch req.Op {
	case wire.OpGet:
	case wire.OpPut, wire.OpDelete:
		o.mine = value{w: strconv.FormatUint(uint64(p.id), 36) + "-" + strconv.FormatUint(p.nonce, 36) + "-" + strconv.FormatUint(o.id, 36), data: req.Value, del: req.Op == wire.OpDelete}
		if o.mine.del {
			o.mine.data = nil
		}
	default:
		p.fail(e, req, wire.ErrInvalid, "unknown operation %s", req.Op)
		return
	}
	p.ops[o.id] = o
	p.byKey[req.Key] = append(p.byKey[req.Key], o)
	o.deadline = e.SetTimer(p.ks.cfg.OpTimeout, opTimer{op: o.id, kind: timerDeadline})
	o.views = make([]view, p.ks.shape.Acceptors())
	if req.Op == wire.OpGet {
		p.read(e, o)
		return
	}
	if c, ok := p.cache[req.Key]; ok {
		copy(o.views, c)
	} else {
		for i := range o.views {
			o.views[i] = view{known: true, hasData: true} // a new object until found otherwise
		}
	}
	p.plan(e, o)
}

func (p *Proposer) finish(e env.Env, o *op, rep *wire.Reply) {
	if rep != nil {
		rep.ID, rep.Client = o.req.ID, o.req.Client
		e.Reply(rep)
		if rep.Err == nil {
			p.stats.Add(o.req.Op == wire.OpGet, o.rounds, o.dataBytes, len(o.mine.data))
		}
	}
	e.CancelTimer(o.timer)
	e.CancelTimer(o.deadline)
	p.forget(o)
	delete(p.ops, o.id)
	key := o.req.Key
	if ops := slices.DeleteFunc(p.byKey[key], func(x *op) bool { return x == o }); len(ops) > 0 {
		p.byKey[key] = ops
	} else {
		delete(p.byKey, key)
	}
	old, ok := p.cache[key]
	if !ok && len(p.cache) >= maxCachedKeys {
		p.cache = map[string][]view{}
	}
	if ok {
		// A read stops at the first quorum, and late answers may have
		// refreshed the cache since o began: keep the cache's view where
		// it is fresher than o's (rule L), or the next write could know
		// too few acceptors to try the fast round.
		for a, v := range o.views {
			if fresher(old[a], v) {
				o.views[a] = old[a]
			}
		}
	}
	p.cache[key] = o.views
}

// forget ends o's outstanding requests: their answers, if any come, only
// refresh what the proposer knows (refresh).
func (p *Proposer) forget(o *op) {
	if len(p.late)+len(o.reqs) > maxLate {
		p.late = map[uint64]pending{}
	}
	for _, id := range o.reqs {
		if pd, ok := p.pending[id]; ok {
			p.late[id] = pd
			delete(p.pending, id)
		}
	}
	o.reqs = o.reqs[:0]
}

func (p *Proposer) newPhase(e env.Env, o *op, ph phase) {
	e.CancelTimer(o.timer)
	p.forget(o)
	o.ph = ph
	o.phSeq++
	if ph == phRead {
		o.rounds++ // a read is one round trip in either mode
	} else {
		o.rounds += p.ks.RoundsPerPhase()
	}
	o.answered = make([]bool, len(o.views))
	o.ok = make([]bool, len(o.views))
	o.sent, o.got = 0, 0
	wait := p.ks.cfg.StorageTimeout * time.Duration(p.ks.RoundsPerPhase())
	o.timer = e.SetTimer(wait, opTimer{op: o.id, phSeq: o.phSeq, kind: timerPhase})
}

// send sends r (a phase's request) to acceptor a.
func (p *Proposer) send(e env.Env, o *op, a int, r *Request, stage uint8, rec uint64) {
	r.ID, r.Key = p.newID(), o.req.Key
	p.pending[r.ID] = pending{op: o.id, phSeq: o.phSeq, acc: a, stage: stage, rec: rec, key: o.req.Key, ph: o.ph, n: o.n}
	o.reqs = append(o.reqs, r.ID)
	if stage == 1 {
		o.sent++
	}
	o.dataBytes += len(r.Data)
	e.Send(p.ks.addrs[a], r)
}

func (p *Proposer) read(e env.Env, o *op) {
	p.newPhase(e, o, phRead)
	for a := range o.views {
		p.send(e, o, a, &Request{Op: OpRead}, 1, 0)
	}
}

// step handles an acceptor's answer.
func (p *Proposer) step(e env.Env, from wire.NodeID, r *Response) {
	pd, ok := p.pending[r.ID]
	if !ok {
		// A duplicate, or an answer to a finished phase: it only
		// refreshes what the proposer knows (rule L).
		if pd, ok = p.late[r.ID]; ok && from == p.ks.addrs[pd.acc] {
			delete(p.late, r.ID)
			p.refresh(e, pd, r)
		}
		return
	}
	if from != p.ks.addrs[pd.acc] {
		return
	}
	delete(p.pending, r.ID)
	o := p.ops[pd.op]
	if o == nil || o.phSeq != pd.phSeq {
		p.refresh(e, pd, r) // its phase ended (a backoff, or a quorum without it)
		return
	}
	a := pd.acc
	o.dataBytes += len(r.Data)
	for i := range r.Log {
		o.dataBytes += len(r.Log[i].Data)
	}
	if p.ks.mode == ModeLog && o.ph != phRead && pd.stage == 1 {
		if !r.OK { // the log is full: refused
			p.result(e, o, a, false, view{})
			return
		}
		// Appended: read the log back to learn whether it took effect.
		p.send(e, o, a, &Request{Op: OpRead}, 2, r.ID)
		return
	}
	v, took, known := p.viewOf(e, pd, r)
	if !known {
		p.result(e, o, a, false, view{})
		return
	}
	if p.ks.mode == ModeLogic && (o.ph == phAccept || o.ph == phFast) && took {
		v.data, v.hasData = o.val.data, true
	}
	p.result(e, o, a, took, withData(v, o.views[a]))
}

// viewOf is what answer r to request pd tells of acceptor pd.acc (known
// false: nothing, as for a ModeLog append's answer or an unreadable
// state), and whether the request took effect (a read always does). In
// ModeLog it is the state just after pd's record when that took effect,
// else the state at the end of the log. The view carries the value only
// when the answer did.
func (p *Proposer) viewOf(e env.Env, pd pending, r *Response) (v view, took, known bool) {
	if p.ks.mode == ModeLog {
		if pd.ph != phRead && pd.stage == 1 {
			return view{}, false, false
		}
		final, fdata, at, adata, ok, found := replay(r.Log, pd.rec)
		if pd.ph == phRead {
			return view{known: true, st: final, data: fdata, hasData: true}, true, true
		}
		if found && ok {
			return view{known: true, st: at, data: adata, hasData: true}, true, true
		}
		return view{known: true, st: final, data: fdata, hasData: true}, false, true
	}
	st, err := cric.ParseState(r.State)
	if err != nil {
		e.Log().Warn(p.ks.name+": unreadable acceptor state", "key", pd.key, "acceptor", pd.acc, "err", err)
		return view{}, false, false
	}
	// The acceptor sends the value for a read, and for a promise on the
	// version being prepared when it has accepted it.
	hasData := pd.ph == phRead || pd.ph == phPrepare && st.V == pd.n
	return view{known: true, st: st, data: r.Data, hasData: hasData}, pd.ph == phRead || r.OK, true
}

// withData is v, with the value old holds when v lacks it and old is at
// the same accepted value.
func withData(v, old view) view {
	if !v.hasData && old.hasData && old.st.V == v.st.V && old.st.W == v.st.W {
		v.data, v.hasData = old.data, true
	}
	return v
}

// later reports whether acceptor state s comes after t in an acceptor's
// history: a promise raises (PV, PB), an accept raises it or, promised
// already, the accepted version or ballot (V, B), a commit sets the bit,
// and nothing lowers them.
func later(s, t cric.State) bool {
	switch {
	case s.PV != t.PV:
		return s.PV > t.PV
	case s.PB != t.PB:
		return t.PB.Less(s.PB)
	case s.V != t.V:
		return s.V > t.V
	case s.B != t.B:
		return t.B.Less(s.B)
	}
	return s.Committed && !t.Committed
}

// fresher reports whether view v tells more of its acceptor than old: it
// is known and old is not, or a later state.
func fresher(v, old view) bool {
	return v.known && (!old.known || later(v.st, old.st))
}

// refresh keeps what an answer to a finished phase tells (rule L): the
// cache takes it where it is fresher than the cached view, and a live op
// on the key where it is fresher than the op's view of an acceptor that
// did not take its current phase's request (the op's value choice rests
// on the states its promises came with). Every such view is a true state
// of the acceptor, and knowing a version chosen from views of different
// times is sound (a value accepted by a quorum in one ballot, or by a
// super quorum in the fast round, or committed, stays chosen); which
// acceptors a phase asks is only a hint, since an acceptor applies the
// acceptor logic itself (in ModeLog, the replay of its log does).
func (p *Proposer) refresh(e env.Env, pd pending, r *Response) {
	v, _, known := p.viewOf(e, pd, r)
	if !known {
		return
	}
	a := pd.acc
	kept := false
	if vs, ok := p.cache[pd.key]; ok && fresher(v, vs[a]) {
		vs[a], kept = withData(v, vs[a]), true
	}
	for _, o := range p.byKey[pd.key] {
		if !(o.ok != nil && o.ok[a]) && fresher(v, o.views[a]) { // o.ok is nil before o's first phase
			o.views[a], kept = withData(v, o.views[a]), true
		}
	}
	if kept {
		p.stats.lateViews++
	}
}

// result records acceptor a's outcome in o's phase.
func (p *Proposer) result(e env.Env, o *op, a int, ok bool, v view) {
	o.answered[a] = true
	o.got++
	o.views[a] = v
	o.ok[a] = ok
	h := p.ks.shape
	switch o.ph {
	case phFast:
		if h.Super(o.in) || o.got == o.sent {
			p.endPhase(e, o)
		}
	default:
		if h.Quorum(o.in) || o.got == o.sent {
			p.endPhase(e, o)
		}
	}
}

// Timer implements env.Replica.
func (p *Proposer) Timer(e env.Env, payload any) {
	t, ok := payload.(opTimer)
	if !ok {
		return
	}
	o := p.ops[t.op]
	if o == nil {
		return
	}
	switch t.kind {
	case timerDeadline:
		p.stats.timeouts++
		p.finish(e, o, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: p.ks.name + ": operation timed out; outcome unknown"}})
	case timerPhase:
		if t.phSeq != o.phSeq || o.ph == phBackoff {
			return
		}
		for a := range o.views {
			if !o.answered[a] {
				o.views[a] = view{}
			}
		}
		p.endPhase(e, o)
	case timerBackoff:
		if t.phSeq == o.phSeq && o.ph == phBackoff {
			p.plan(e, o)
		}
	}
}

func (o *op) in(a int) bool { return o.ok[a] }

func (p *Proposer) endPhase(e env.Env, o *op) {
	h := p.ks.shape
	ph := o.ph
	o.phSeq++
	e.CancelTimer(o.timer)
	switch ph {
	case phRead:
		if !h.Quorum(o.in) {
			p.retry(e, o)
			return
		}
		p.plan(e, o)
	case phFast:
		if h.Super(o.in) {
			p.stats.fastCommits++
			p.chosen(e, o, o.n, o.val)
			return
		}
		p.plan(e, o)
	case phPrepare:
		if !h.Quorum(o.in) {
			p.retry(e, o)
			return
		}
		p.acceptPhase(e, o)
	case phAccept:
		if !h.Quorum(o.in) {
			p.retry(e, o)
			return
		}
		p.stats.slowCommits++
		p.chosen(e, o, o.n, o.val)
	}
}

func (p *Proposer) retry(e env.Env, o *op) {
	o.attempt++
	o.ph = phBackoff
	o.phSeq++
	span := int64(p.ks.cfg.Backoff) << min(o.attempt, 6)
	o.timer = e.SetTimer(time.Duration(e.Rand().Int64N(span)), opTimer{op: o.id, phSeq: o.phSeq, kind: timerBackoff})
}

func (p *Proposer) knownQuorum(o *op) bool {
	return p.ks.shape.Quorum(func(a int) bool { return o.views[a].known })
}

// learned is cric's rule 2 on o's views: m the highest accepted version,
// pv the highest promised, and m's value if m is known chosen.
func (p *Proposer) learned(o *op) (m, pv uint64, v value, chosen, hasData bool) {
	h := p.ks.shape
	for _, w := range o.views {
		if w.known {
			m, pv = max(m, w.st.V), max(pv, w.st.PV)
		}
	}
	if m == 0 {
		return 0, pv, value{}, true, true
	}
	at := func(w view) bool { return w.known && w.st.V == m }
	for _, w := range o.views {
		if at(w) && w.st.Committed {
			return m, pv, valueOf(w), true, w.hasData
		}
	}
	for _, w := range o.views {
		same := func(a int) bool {
			x := o.views[a]
			return at(x) && x.st.B == w.st.B && x.st.W == w.st.W
		}
		if at(w) && (w.st.B.IsFast() && h.Super(same) || !w.st.B.IsFast() && h.Quorum(same)) {
			return m, pv, valueOf(w), true, w.hasData
		}
	}
	return m, pv, value{}, false, false
}

func valueOf(w view) value { return value{w: w.st.W, data: w.data, del: w.st.Tombstone} }

// plan is cric's rules 3 and 7: o's next step from what it knows.
func (p *Proposer) plan(e env.Env, o *op) {
	if !p.knownQuorum(o) {
		p.read(e, o)
		return
	}
	m, pv, v, chosen, hasData := p.learned(o)
	if o.req.Op == wire.OpGet {
		if chosen && !hasData {
			p.read(e, o) // chosen, but the value is not at hand
			return
		}
		if chosen {
			// Keep what the read learned: version m is chosen, so a
			// write from the cache need not finish it again.
			for a, w := range o.views {
				if w.known && w.st.V == m && w.st.W == v.w {
					o.views[a].st.Committed = true
				}
			}
			p.answerRead(e, o, v)
			return
		}
		p.stats.writeBacks++
		p.slow(e, o, m)
		return
	}
	if o.proposedAt != 0 {
		switch {
		case chosen && m == o.proposedAt && v.w != o.mine.w:
			o.proposedAt = 0
		case m > o.proposedAt || pv > o.proposedAt:
			p.stats.timeouts++
			p.finish(e, o, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: p.ks.name + ": a later version hides whether this write was chosen; outcome unknown"}})
			return
		}
	}
	switch {
	case pv > m:
		if o.fast {
			p.stats.skipPromised++
		}
		p.slow(e, o, pv)
	case !chosen:
		if o.fast {
			p.stats.skipUnchosen++
		}
		p.slow(e, o, m)
	case v.w == o.mine.w:
		p.finish(e, o, &wire.Reply{})
	case o.fast && o.fastDone != m+1:
		p.fastRound(e, o, m+1)
	default:
		p.slow(e, o, m+1)
	}
}

func (p *Proposer) answerRead(e env.Env, o *op, v value) {
	rep := &wire.Reply{Found: v.w != "" && !v.del}
	if rep.Found {
		rep.Value = v.data
	}
	p.finish(e, o, rep)
}

// fastRound sends o's value to be accepted for version n in ballot #0 by
// every acceptor whose known state allows it.
func (p *Proposer) fastRound(e env.Env, o *op, n uint64) {
	o.fastDone, o.proposedAt = n, n
	o.n, o.b, o.val = n, cric.Ballot{}, o.mine
	can := func(a int) bool {
		w := o.views[a]
		_, ok, _ := w.st.Accept(n, cric.Ballot{}, o.mine.w, "", o.mine.del)
		return w.known && ok
	}
	if !p.ks.shape.Super(can) {
		if p.ks.shape.Super(func(a int) bool { return o.views[a].known }) {
			p.stats.skipRefused++
		} else {
			p.stats.skipUnknown++
		}
		p.slow(e, o, n)
		return
	}
	p.newPhase(e, o, phFast)
	for a := range o.views {
		if can(a) {
			p.send(e, o, a, &Request{Op: OpAccept, N: n, W: o.mine.w, Del: o.mine.del, Data: o.mine.data}, 1, 0)
		}
	}
}

// slow starts the classic path for version n: Prepare with a ballot above
// every one seen, at every acceptor whose known state would promise.
func (p *Proposer) slow(e env.Env, o *op, n uint64) {
	if !p.knownQuorum(o) {
		p.read(e, o)
		return
	}
	for _, w := range o.views {
		if w.known {
			o.maxRound = max(o.maxRound, w.st.B.Round, w.st.PB.Round)
		}
	}
	o.maxRound++
	o.n, o.b = n, cric.Ballot{Round: o.maxRound, Node: uint32(p.id), Nonce: p.nonce}
	can := func(a int) bool {
		_, ok, _ := o.views[a].st.Promise(n, o.b)
		return o.views[a].known && ok
	}
	if !p.ks.shape.Quorum(can) {
		for a := range o.views {
			if !can(a) {
				o.views[a] = view{}
			}
		}
		p.retry(e, o)
		return
	}
	p.newPhase(e, o, phPrepare)
	for a := range o.views {
		if can(a) {
			p.send(e, o, a, &Request{Op: OpPrepare, N: n, B: o.b}, 1, 0)
		}
	}
}

// acceptPhase picks the value for version n from the promises (cric rule
// 5) and asks every acceptor whose state o knows to accept it.
func (p *Proposer) acceptPhase(e env.Env, o *op) {
	n := o.n
	promised := slices.Clone(o.ok)
	best := -1
	for a, w := range o.views {
		if promised[a] && w.st.V == n && (best < 0 || o.views[best].st.B.Less(w.st.B)) {
			best = a
		}
	}
	var val value
	if best >= 0 && !o.views[best].hasData {
		p.retry(e, o) // never in practice: promises for n carry the value
		return
	}
	switch {
	case best >= 0 && !o.views[best].st.B.IsFast():
		val = valueOf(o.views[best])
	case best >= 0:
		val = p.fastRecovery(o, promised, n)
	case o.req.Op != wire.OpGet:
		val = o.mine
	default:
		for a, w := range o.views {
			if w.known && w.hasData && w.st.V == n && (val.w == "" || o.views[best].st.B.Less(w.st.B)) {
				val, best = valueOf(w), a
			}
		}
		if val.w == "" {
			p.retry(e, o)
			return
		}
	}
	o.val = val
	if val.w == o.mine.w {
		o.proposedAt = n
	}
	p.newPhase(e, o, phAccept)
	for a, w := range o.views {
		if _, ok, _ := w.st.Accept(n, o.b, val.w, "", val.del); w.known && ok {
			p.send(e, o, a, &Request{Op: OpAccept, N: n, B: o.b, W: val.w, Del: val.del, Data: val.data}, 1, 0)
		}
	}
}

// fastRecovery is cric's recovery after a fast round (Theorem V.4): the
// value some super quorum may have chosen, else the most frequent.
func (p *Proposer) fastRecovery(o *op, promised []bool, n uint64) value {
	var cands []value
	count := map[string]int{}
	for a, w := range o.views {
		if promised[a] && w.st.V == n && w.st.B.IsFast() {
			if count[w.st.W] == 0 {
				cands = append(cands, valueOf(w))
			}
			count[w.st.W]++
		}
	}
	for _, c := range cands {
		possible := func(a int) bool {
			w := o.views[a]
			return !promised[a] || w.st.V == n && w.st.B.IsFast() && w.st.W == c.w
		}
		if p.ks.shape.Super(possible) {
			return c
		}
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if count[c.w] > count[best.w] {
			best = c
		}
	}
	return best
}

// chosen: v is chosen for version n. Commit it where o saw it accepted
// (no answer awaited), then answer, or go on to the next version.
func (p *Proposer) chosen(e env.Env, o *op, n uint64, v value) {
	for a, w := range o.views {
		if w.known && w.st.V == n && w.st.W == v.w && !w.st.Committed {
			e.Send(p.ks.addrs[a], &Request{ID: p.newID(), Key: o.req.Key, Op: OpCommit, N: n, W: v.w})
			o.views[a].st.Committed = true
		}
	}
	if o.req.Op == wire.OpGet {
		p.answerRead(e, o, v)
		return
	}
	if v.w == o.mine.w {
		p.finish(e, o, &wire.Reply{})
		return
	}
	if n == o.proposedAt {
		o.proposedAt = 0
	}
	o.attempt = 0
	o.phSeq++
	p.plan(e, o)
}

// Counters implements protocol.Counted. The round-trip and data counters
// measure seed 001's Tables 5.1 and 5.2 (bench cric-table5.1, 5.2).
func (p *Proposer) Counters(int64) []protocol.Counter {
	s := p.stats
	return append(s.OpCosts.Counters(),
		protocol.Count("fast_commits_total", "versions chosen in the fast round", s.fastCommits),
		protocol.Count("slow_commits_total", "versions chosen by the classic path", s.slowCommits),
		protocol.Count("write_backs_total", "reads that re-proposed the highest accepted value", s.writeBacks),
		protocol.Count("timeouts_total", "operations that timed out", s.timeouts),
		protocol.Count("fast_skipped_unknown_total", "fast-round writes that took the classic path: too few acceptors' states known", s.skipUnknown),
		protocol.Count("fast_skipped_refused_total", "fast-round writes that took the classic path: too few known states allow the fast Accept", s.skipRefused),
		protocol.Count("fast_skipped_unchosen_total", "fast-round writes that first finished a version not known chosen", s.skipUnchosen),
		protocol.Count("fast_skipped_promised_total", "fast-round writes that first finished a version promised past the highest accepted", s.skipPromised),
		protocol.Count("late_views_total", "answers to finished phases that refreshed a cached or live view", s.lateViews),
	)
}
