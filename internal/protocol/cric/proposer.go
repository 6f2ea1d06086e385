package cric

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
)

// maxCachedKeys bounds a proposer's cache of acceptor states; past it the
// cache is dropped whole (deterministic, and only a hint: every use of it
// is guarded by a conditional write).
const maxCachedKeys = 4096

// view is what a proposer knows of one acceptor's object: its state and
// ETag as last read or written, or unknown. Assumed views (a cache miss)
// take the object to be absent: a create-only write finds out otherwise.
type view struct {
	known  bool
	absent bool
	// assumed marks a cache miss's guess (absent), not a read.
	assumed bool
	etag    storagesvc.ETag
	st      state
	data    []byte // the value of st.V, if hasData
	// hasData says data is the object's data (read by a Get or written
	// by o); a Head reads the metadata alone (§5.2.3).
	hasData bool
	// commit is the ID of this proposer's commit PutMeta in flight from
	// this view's ETag (rule 6), or 0: a write to the acceptor waits for
	// its answer and uses the ETag it returns (rule 6a).
	commit uint64
}

// value is a proposed value: its write ID (identity), data and whether it
// is a delete.
type value struct {
	w    string
	data []byte
	del  bool
}

// phase is what an operation waits for.
type phase uint8

const (
	phRead    phase = iota + 1 // Gets of every acceptor's object
	phFast                     // fast-round accepts (ballot #0)
	phPrepare                  // promises
	phAccept                   // classic accepts
	phBackoff                  // a random wait before retrying
	phFetch                    // a read's Get of the chosen version's data
)

// op is one client operation this node runs as proposer (a write) or
// learner (a read, which may write back).
type op struct {
	id    uint64
	req   *wire.Request
	key   string // the object's key
	mine  value  // a write's value
	fast  bool   // try the fast round for fresh versions
	views []view
	// The current phase: its number (timers and answers of an older one
	// are ignored), the version and ballot it works on, which acceptors
	// answered and which succeeded.
	ph       phase
	phSeq    uint64
	n        uint64
	b        Ballot
	val      value // the value being accepted
	answered []bool
	ok       []bool
	reqs     []uint64 // the phase's outstanding request IDs
	sent     int
	got      int
	timer    env.TimerID
	deadline env.TimerID
	attempt  int
	fastDone uint64 // the last version the fast round was tried at
	// proposedAt is the version a write last sent its own value to be
	// accepted at, until it learns that version's chosen value: it may
	// not propose at a later version before (rule 3a).
	proposedAt uint64
	maxRound   uint64
	// rounds counts the storage round trips on o's path (one a phase) and
	// dataBytes the object data o sent to or got from storage (bench
	// cric-table5.1, 5.2).
	rounds, dataBytes int
	// knownN and knownW are the latest version o knows chosen and its
	// value's write ID: an Accept at knownN+1 records it (state.Prev).
	knownN uint64
	knownW string
	// phStart is when the current phase began (node clock, ns), and
	// phaseNs how long the last finished phase took: the round trip that
	// scales the backoff. fresh says o has read acceptors since its last
	// retry: a phase planned on cached or assumed states that fails was
	// stale, not contended, and re-reads without backing off.
	phStart int64
	phaseNs int64
	fresh   bool
	// fullData makes a read Get every acceptor's data, not only the
	// closest one's: set before a write-back, which may re-propose any
	// acceptor's value.
	fullData bool
	// refused counts this phase's acceptors whose state refused the
	// promise (known only through an assistant): a real conflict.
	refused int
	// side holds, per acceptor, the state a Head sent beside a create-only
	// write on an assumed view returned while that write was still
	// unanswered (rule 3c): it replaces the view if the write fails.
	side []view
	// cold says o sent Heads beside its creates (rule 3c): the states
	// they returned are fresh, so a failure planned on the assumed states
	// re-plans on them rather than reading again.
	cold bool
}

// pending is an outstanding storage request: its op, phase and acceptor.
type pending struct {
	op    uint64
	phSeq uint64
	acc   int
	kind  phase
	next  state // the state a write installs
	data  []byte
	hasD  bool            // the write carries data (a Put), or the read is a Get
	pvm   bool            // a PrepareReq to a propose assistant
	cond  storagesvc.ETag // a write's If-Match ETag
	// create says the write was create-only (If-None-Match).
	create bool
	// side says the request is a Head beside a create-only write (rule
	// 3c): its answer is not part of the phase's count.
	side bool
	key  string // the object's key
}

// commitReq is a commit PutMeta in flight (rule 6a): the acceptor and
// key it sets the bit of, the state it installs, and the writes of ops
// waiting for its answer to use the ETag it returns.
type commitReq struct {
	key     string
	acc     int
	from    storagesvc.ETag // the If-Match ETag
	next    state
	waiters []commitWaiter
}

// commitWaiter is an op's write to an acceptor deferred until the
// commit in flight there answers.
type commitWaiter struct {
	op, phSeq uint64
	next      state
	data      []byte
	hasData   bool
}

// deferred is an op's accept to acceptor acc waiting for the answer to
// its promise there (rule 5a).
type deferred struct {
	op, phSeq uint64
	acc       int
}

// maxCommits and maxLate bound the commits in flight and the requests of
// finished phases whose answers still refresh the cache; past them the
// maps are dropped whole (deterministic; an answer then refreshes
// nothing, and a waiting write times out with its phase and re-reads).
const (
	maxCommits = 4096
	maxLate    = 1 << 14
)

type timerKind uint8

const (
	timerPhase timerKind = iota + 1
	timerDeadline
	timerBackoff
)

type opTimer struct {
	op    uint64
	phSeq uint64
	kind  timerKind
}

// Proposer is one node of a cric keyspace: a proposer and learner for the
// client requests it is the gateway of. It has no durable state: the
// acceptors are the storage services' objects.
type Proposer struct {
	ks      *Keyspace
	id      wire.NodeID
	nonce   uint64
	nextID  uint64 // storage request IDs and op IDs
	ops     map[uint64]*op
	pending map[uint64]pending
	// late holds the requests of finished phases: their answers are
	// true states with the ETags to match, kept in the cache (refresh).
	late    map[uint64]pending
	commits map[uint64]*commitReq
	// promised are accepts deferred until their acceptor's promise,
	// still in flight when the accept phase began, answers (rule 5a), by
	// the promise's request ID.
	promised map[uint64]deferred
	// byKey are the live ops by object key, which answers refresh too.
	byKey  map[string][]*op
	cache  map[string][]view
	cached int
	stats  stats
	// near lists the acceptors nearest first (the world's base delay
	// from this node's region): reads fetch data from the first.
	near []int
	// pvm is this node's work as a propose assistant (pvm.go), by the
	// ID of its outstanding storage request.
	pvm map[uint64]*pvmJob
}

type stats struct {
	fastCommits, slowCommits, readsOneRound, writeBacks, conflicts, timeouts, unknown, fetches uint64
	OpCosts
	// prepareFailures are Prepare phases short of a quorum; the false ones
	// had no acceptor refuse by its state (every failure a moved ETag or
	// an unknown outcome); pvmRetries are the conditional writes
	// assistants repeated for this proposer (false failures absorbed).
	prepareFailures, falsePrepareFailures, pvmRetries uint64
}

func newProposer(ks *Keyspace, id wire.NodeID) *Proposer {
	return &Proposer{ks: ks, id: id, ops: map[uint64]*op{}, pending: map[uint64]pending{}, late: map[uint64]pending{},
		commits: map[uint64]*commitReq{}, promised: map[uint64]deferred{}, byKey: map[string][]*op{}, cache: map[string][]view{}, pvm: map[uint64]*pvmJob{}}
}

// Start implements env.Replica. A restarted proposer draws a new nonce, so
// its ballots differ from its previous incarnation's, and new request IDs,
// so answers meant for that incarnation match nothing.
func (p *Proposer) Start(e env.Env) {
	p.nonce = e.Rand().Uint64()
	p.nextID = e.Rand().Uint64()>>2 | 1
	t := e.Topology()
	me := t.RegionOf(e.Self())
	p.near = make([]int, p.ks.shape.accept)
	for a := range p.near {
		p.near[a] = a
	}
	slices.SortStableFunc(p.near, func(a, b int) int {
		return cmp.Compare(t.World.BaseDelay(me, p.ks.regionOf[a]), t.World.BaseDelay(me, p.ks.regionOf[b]))
	})
}

func (p *Proposer) newID() uint64 { p.nextID++; return p.nextID }

func replyErr(e env.Env, req *wire.Request, code wire.ErrorCode, format string, args ...any) {
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: code, Msg: fmt.Sprintf("cric: "+format, args...)}})
}

// Request implements env.Replica.
func (p *Proposer) Request(e env.Env, req *wire.Request) {
	cfg := p.ks.cfg
	fast := cfg.FastRound
	switch req.Level {
	case wire.LevelDefault:
	case wire.All:
		fast = true
	case wire.Quorum:
		fast = false
	default:
		replyErr(e, req, wire.ErrInvalid, "consistency level %s: cric takes QUORUM (classic path), ALL (try the fast round) or DEFAULT", req.Level)
		return
	}
	key := cfg.KeyPrefix + req.Key
	if err := storagesvc.CheckKey(key); err != nil {
		replyErr(e, req, wire.ErrInvalid, "%v", err)
		return
	}
	o := &op{id: p.newID(), req: req, key: key, fast: fast}
	switch req.Op {
	case wire.OpGet:
	case wire.OpPut, wire.OpDelete:
		if len(req.Value) > storagesvc.MaxDataBytes {
			replyErr(e, req, wire.ErrInvalid, "value of %d bytes (at most %d)", len(req.Value), storagesvc.MaxDataBytes)
			return
		}
		o.mine = value{w: strconv.FormatUint(uint64(p.id), 36) + "-" + strconv.FormatUint(p.nonce, 36) + "-" + strconv.FormatUint(o.id, 36), data: req.Value, del: req.Op == wire.OpDelete}
		if o.mine.del {
			o.mine.data = nil
		}
	default:
		replyErr(e, req, wire.ErrInvalid, "unknown operation %s", req.Op)
		return
	}
	p.ops[o.id] = o
	o.deadline = e.SetTimer(cfg.OpTimeout, opTimer{op: o.id, kind: timerDeadline})
	o.views = make([]view, p.ks.shape.accept)
	if req.Op == wire.OpGet {
		p.byKey[key] = append(p.byKey[key], o)
		p.read(e, o) // a reader always reads every acceptor (§5.2.2)
		return
	}
	p.byKey[key] = append(p.byKey[key], o)
	if c, ok := p.cache[key]; ok {
		copy(o.views, c)
	} else {
		// A cache miss assumes a new object (§5.2.1; rule 3): measured
		// against reading first, cric-table5.1 NOTES.
		for i := range o.views {
			o.views[i] = view{known: true, absent: true, assumed: true}
		}
	}
	p.plan(e, o)
}

// finish ends o (replying rep unless nil) and keeps what it learned.
func (p *Proposer) finish(e env.Env, o *op, rep *wire.Reply) {
	if rep != nil && rep.Err == nil {
		p.stats.Add(o.req.Op == wire.OpGet, o.rounds, o.dataBytes, len(o.mine.data))
	}
	if rep != nil {
		rep.ID, rep.Client = o.req.ID, o.req.Client
		e.Reply(rep)
	}
	e.CancelTimer(o.timer)
	e.CancelTimer(o.deadline)
	p.forget(o)
	delete(p.ops, o.id)
	if ops := slices.DeleteFunc(p.byKey[o.key], func(x *op) bool { return x == o }); len(ops) > 0 {
		p.byKey[o.key] = ops
	} else {
		delete(p.byKey, o.key)
	}
	old, ok := p.cache[o.key]
	if !ok {
		if p.cached >= maxCachedKeys {
			p.cache, p.cached = map[string][]view{}, 0
		}
		p.cached++
	}
	if o.req.Op == wire.OpGet && ok {
		// A read ends at the first quorum that settles it: keep what the
		// cache knows of the others (a hint like any cached view).
		for a, v := range o.views {
			switch {
			case !v.known:
				o.views[a] = old[a]
			case old[a].commit != 0 && old[a].etag == v.etag:
				o.views[a].commit = old[a].commit // rule 6a
			}
		}
	}
	p.cache[o.key] = o.views
}

// forget drops o's outstanding requests from its phase: their answers,
// if any come, only refresh what the proposer caches (refresh).
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

// newPhase starts phase ph of o.
func (p *Proposer) newPhase(e env.Env, o *op, ph phase) {
	e.CancelTimer(o.timer)
	p.forget(o)
	o.ph = ph
	o.phSeq++
	o.rounds++
	o.answered = make([]bool, len(o.views))
	o.ok = make([]bool, len(o.views))
	o.sent, o.got, o.refused = 0, 0, 0
	o.phStart = e.Now()
	o.timer = e.SetTimer(p.ks.cfg.StorageTimeout, opTimer{op: o.id, phSeq: o.phSeq, kind: timerPhase})
}

func (p *Proposer) send(e env.Env, o *op, acc int, req *storagesvc.Request, pd pending) {
	req.ID = p.newID()
	req.Key = o.key
	pd.op, pd.phSeq, pd.acc, pd.kind, pd.key = o.id, o.phSeq, acc, o.ph, o.key
	p.pending[req.ID] = pd
	o.reqs = append(o.reqs, req.ID)
	o.sent++
	o.dataBytes += len(req.Data)
	e.Send(p.ks.addrs[acc], req)
}

// read starts a read phase: a Get of every acceptor's object, except
// that a client read (until it must write back) Gets only the
// ReadDataCopies nearest acceptors' and Heads the others' (§5.2.3: data
// from the closest replica, metadata from the rest; the digests tell
// copies apart; §5.3: two of a group's three copies).
func (p *Proposer) read(e env.Env, o *op) {
	p.newPhase(e, o, phRead)
	heads := o.req.Op == wire.OpGet && !o.fullData
	for a := range o.views {
		if heads && !slices.Contains(p.near[:p.ks.cfg.ReadDataCopies], a) {
			p.send(e, o, a, &storagesvc.Request{Op: storagesvc.OpHead}, pending{})
			continue
		}
		p.send(e, o, a, &storagesvc.Request{Op: storagesvc.OpGet}, pending{hasD: true})
	}
}

// fetch starts a read's Get of version m's chosen value w from the
// nearest acceptor whose metadata shows it (its data was not read).
func (p *Proposer) fetch(e env.Env, o *op, m uint64, w string) {
	for _, a := range p.near {
		v := o.views[a]
		if v.known && !v.absent && v.st.V == m && v.st.W == w {
			p.newPhase(e, o, phFetch)
			p.send(e, o, a, &storagesvc.Request{Op: storagesvc.OpGet}, pending{hasD: true})
			return
		}
	}
	o.fullData = true // no acceptor shows it any more: read again
	p.read(e, o)
}

// write sends acceptor a's next state with a conditional write on what o
// knows of it: a Put (data and metadata) if it carries data or the object
// is absent (create-only), else a PutMeta (the Paxos state alone, §5.2.3).
func (p *Proposer) write(e env.Env, o *op, a int, next state, data []byte, hasData bool) {
	v := o.views[a]
	if c, ok := p.commits[v.commit]; ok && v.commit != 0 {
		// Rule 6a: our commit bit is in flight from this ETag; the write
		// goes out with the ETag it returns.
		c.waiters = append(c.waiters, commitWaiter{op: o.id, phSeq: o.phSeq, next: next, data: data, hasData: hasData})
		o.sent++
		return
	}
	req := &storagesvc.Request{Meta: next.meta()}
	switch {
	case v.absent:
		req.Op, req.Data, req.Cond = storagesvc.OpPut, data, storagesvc.Cond{IfNoneMatch: true}
		hasData = true
	case hasData:
		req.Op, req.Data, req.Cond = storagesvc.OpPut, data, storagesvc.Cond{IfMatch: v.etag}
	default:
		req.Op, req.Cond = storagesvc.OpPutMeta, storagesvc.Cond{IfMatch: v.etag}
	}
	p.send(e, o, a, req, pending{next: next, data: data, hasD: hasData, cond: v.etag, create: v.absent})
	if v.assumed && p.ks.cfg.ColdWrites == ColdCreateAndHead {
		p.sideHead(e, o, a)
	}
}

// sideHead sends a Head of acceptor a beside o's create-only write there on
// an assumed view (rule 3c). It is not counted in the phase: its answer
// replaces the view if the write failed (Step), or waits in o.side for
// that; once the phase is over it refreshes views like any late answer.
func (p *Proposer) sideHead(e env.Env, o *op, a int) {
	req := &storagesvc.Request{Op: storagesvc.OpHead, ID: p.newID(), Key: o.key}
	o.cold = true
	p.pending[req.ID] = pending{op: o.id, phSeq: o.phSeq, acc: a, kind: phRead, key: o.key, side: true}
	o.reqs = append(o.reqs, req.ID)
	e.Send(p.ks.addrs[a], req)
}

// committed handles the answer to commit request id (rule 6a): views of
// the acceptor at the ETag it was conditioned on, in the cache and in
// live ops, become the committed state at the ETag it returns (it
// succeeded from that state, so nothing else did), or unknown where they
// wait for it and it failed; and the writes waiting for it go out.
func (p *Proposer) committed(e env.Env, id uint64, c *commitReq, r *storagesvc.Response) {
	delete(p.commits, id)
	upd := func(vs []view) {
		v := vs[c.acc]
		switch {
		case !v.known || v.absent || v.commit != id && v.etag != c.from:
		case r.Code == storagesvc.OK:
			vs[c.acc] = view{known: true, etag: r.ETag, st: c.next, data: v.data, hasData: v.hasData}
		case v.commit == id:
			vs[c.acc] = view{}
		}
	}
	if vs, ok := p.cache[c.key]; ok {
		upd(vs)
	}
	for _, o := range p.byKey[c.key] {
		upd(o.views)
	}
	for _, w := range c.waiters {
		o := p.ops[w.op]
		if o == nil || o.phSeq != w.phSeq {
			continue
		}
		o.sent--
		v := o.views[c.acc]
		if !v.known || v.commit != 0 {
			// The commit failed (or o's view moved on): the acceptor's
			// state is unknown.
			o.answered[c.acc] = true
			o.got++
			o.sent++
			o.views[c.acc] = view{}
			p.progress(e, o)
			continue
		}
		next := w.next
		if next.V == c.next.V && next.W == c.next.W && next.B == c.next.B {
			next.Committed = true // a promise keeps the commit bit
		}
		p.write(e, o, c.acc, next, w.data, w.hasData)
	}
}

// refresh keeps what an answer to a finished phase tells of acceptor
// pd.acc: a read's state, or the state a write installed with the ETag
// it returned. A live op takes it only where it knows nothing (its
// phase's decisions rest on the states it has); the cache also where it
// holds the very ETag the write was conditioned on. Every such view is
// a true state of the acceptor at that ETag, so a conditional write on
// it is sound, and knowing a version chosen from views of different
// times is sound too (a value accepted by a quorum in one ballot stays
// chosen).
func (p *Proposer) refresh(pd pending, r *storagesvc.Response) {
	var v view
	write := pd.kind != phRead && pd.kind != phFetch
	switch {
	case pd.pvm:
		return
	case r.Code == storagesvc.OK && write:
		v = view{known: true, etag: r.ETag, st: pd.next, data: pd.data, hasData: pd.hasD}
	case !write:
		var ok bool
		if v, ok = readView(r, pd.hasD); !ok {
			return
		}
	default:
		return
	}
	key := pd.key
	// A write that succeeded from ETag cond (or created the object) is
	// the successor of any view at cond (absent): nothing else succeeded
	// from it.
	succ := func(old view) bool {
		if !write || !old.known || old.commit != 0 {
			return false
		}
		return old.absent && pd.create || !old.absent && !pd.create && old.etag == pd.cond
	}
	put := func(vs []view) {
		old := vs[pd.acc]
		nv := v
		if write && !pd.hasD && old.hasData && old.st.V == v.st.V && old.st.W == v.st.W {
			nv.data, nv.hasData = old.data, true // a PutMeta leaves the data
		}
		vs[pd.acc] = nv
	}
	if vs, ok := p.cache[key]; ok && (!vs[pd.acc].known || succ(vs[pd.acc])) {
		put(vs)
	}
	for _, o := range p.byKey[key] {
		// Not an acceptor that succeeded in o's phase: o's value choice
		// rests on the states its promises were made from.
		if !o.views[pd.acc].known || succ(o.views[pd.acc]) && (o.ok == nil || !o.ok[pd.acc]) {
			put(o.views)
		}
	}
}

// Step implements env.Replica: storage services' answers.
func (p *Proposer) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	var id uint64
	switch m := m.(type) {
	case *PrepareReq:
		p.assist(e, from, m)
		return
	case *PrepareResp:
		id = m.ID
	case *storagesvc.Response:
		if p.pvmStep(e, m) {
			return
		}
		if c, ok := p.commits[m.ID]; ok {
			if from == p.ks.addrs[c.acc] {
				p.committed(e, m.ID, c, m)
			}
			return
		}
		id = m.ID
	default:
		return
	}
	pd, ok := p.pending[id]
	if !ok {
		// A duplicate, or an answer to a phase that is over: it only
		// refreshes the cache.
		if pd, ok = p.late[id]; ok {
			delete(p.late, id)
			p.lateAnswer(e, id, pd, from, m)
		}
		return
	}
	delete(p.pending, id)
	o := p.ops[pd.op]
	if o == nil || o.phSeq != pd.phSeq {
		p.lateAnswer(e, id, pd, from, m)
		return
	}
	a := pd.acc
	if pd.side {
		// Rule 3c: the Head beside a create-only write.
		r, isR := m.(*storagesvc.Response)
		if !isR || from != p.ks.addrs[a] {
			return
		}
		if o.views[a].known {
			// The write is unanswered (or succeeded): keep the state in
			// case it fails.
			if v, ok := readView(r, false); ok {
				if o.side == nil {
					o.side = make([]view, len(o.views))
				}
				o.side[a] = v
			}
			return
		}
		p.refresh(pd, r) // the write failed: this state replaces it
		return
	}
	if pd.pvm {
		r, ok := m.(*PrepareResp)
		if !ok || from != p.ks.pvmOf[a] {
			return
		}
		o.answered[a] = true
		o.got++
		p.prepared(o, a, r)
		p.progress(e, o)
		return
	}
	r, ok := m.(*storagesvc.Response)
	if !ok || from != p.ks.addrs[a] {
		return
	}
	o.dataBytes += len(r.Data)
	o.answered[a] = true
	o.got++
	if pd.kind == phRead || pd.kind == phFetch {
		v, ok := readView(r, pd.hasD)
		switch {
		case ok:
			if old := o.views[a]; old.commit != 0 && !v.absent && old.etag == r.ETag {
				v.commit = old.commit // still before our commit lands (rule 6a)
			}
			o.views[a] = v
			o.ok[a] = true
		case r.Code == storagesvc.OK:
			e.Log().Warn("cric: unreadable acceptor state", "key", o.key, "acceptor", a)
			o.views[a] = view{}
		default:
			o.views[a] = view{}
			p.stats.unknown++
		}
	} else {
		switch r.Code {
		case storagesvc.OK:
			v := view{known: true, etag: r.ETag, st: pd.next, data: o.views[a].data, hasData: o.views[a].hasData}
			if pd.hasD {
				v.data, v.hasData = pd.data, true
			}
			o.views[a] = v
			o.ok[a] = true
		case storagesvc.PreconditionFailed:
			// Changed since read, or a duplicate of this very write took
			// effect first: either way its state is unknown now, unless
			// a Head beside it told one (rule 3c).
			o.views[a] = o.takeSide(a)
			p.stats.conflicts++
		default:
			o.views[a] = o.takeSide(a) // outcome unknown: re-read, never assume
			p.stats.unknown++
		}
	}
	p.progress(e, o)
}

// lateAnswer handles the answer m (from) to request id of a finished
// phase: a storage answer refreshes the cache and live views; the answer
// to a promise sends the accept that waited for it (rule 5a).
func (p *Proposer) lateAnswer(e env.Env, id uint64, pd pending, from wire.NodeID, m wire.Msg) {
	promised := false
	switch m := m.(type) {
	case *storagesvc.Response:
		if pd.pvm || from != p.ks.addrs[pd.acc] {
			return
		}
		p.refresh(pd, m)
		if o, a, ok := p.deferredFor(id); ok {
			// refresh installed the promised state at the ETag it returned.
			v := o.views[a]
			p.acceptDeferred(e, o, a, m.Code == storagesvc.OK && v.known && v.etag == m.ETag)
		}
	case *PrepareResp:
		if !pd.pvm || from != p.ks.pvmOf[pd.acc] {
			return
		}
		if o, a, ok := p.deferredFor(id); ok {
			o.views[a], promised = pvmView(o.views[a], m)
			p.acceptDeferred(e, o, a, promised)
		}
	}
}

// deferredFor takes the accept waiting for promise id (rule 5a), if its
// op's phase is still on.
func (p *Proposer) deferredFor(id uint64) (o *op, a int, ok bool) {
	w, ok := p.promised[id]
	if !ok {
		return nil, 0, false
	}
	delete(p.promised, id)
	o = p.ops[w.op]
	if o == nil || o.phSeq != w.phSeq {
		return nil, 0, false
	}
	return o, w.acc, true
}

// acceptDeferred sends o's accept to acceptor a, whose promise has
// answered (rule 5a): on the promised state if it succeeded; else the
// acceptor counts as answered and failed.
func (p *Proposer) acceptDeferred(e env.Env, o *op, a int, promised bool) {
	o.sent--
	if promised {
		if next, ok, _ := o.views[a].st.accept(o.n, o.b, o.val.w, digest(o.val.data), o.val.del); ok {
			next.Prev = o.prevOf(o.n)
			p.write(e, o, a, next, o.val.data, true)
			return
		}
	} else {
		o.views[a] = view{} // the promise failed: unknown
	}
	o.answered[a] = true
	o.sent++
	o.got++
	p.progress(e, o)
}

// takeSide is the state a Head beside a create-only write to acceptor a
// returned (rule 3c), if any, for the write's failure; else unknown.
func (o *op) takeSide(a int) view {
	if o.side == nil {
		return view{}
	}
	v := o.side[a]
	o.side[a] = view{}
	return v
}

// readView is the view a read's answer shows: the state and ETag it
// returned (its data if hasD), or absent; ok is false if it shows nothing
// (an error, or unreadable metadata).
func readView(r *storagesvc.Response, hasD bool) (v view, ok bool) {
	switch r.Code {
	case storagesvc.OK:
		st, err := parseState(r.Meta)
		if err != nil {
			return view{}, false
		}
		return view{known: true, etag: r.ETag, st: st, data: r.Data, hasData: hasD}, true
	case storagesvc.NotFound:
		return view{known: true, absent: true, hasData: true}, true
	}
	return view{}, false
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
		// A write may still be chosen (its accepts are on their way).
		p.finish(e, o, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: "cric: operation timed out; outcome unknown"}})
	case timerPhase:
		if t.phSeq != o.phSeq || o.ph == phBackoff {
			return
		}
		for a := range o.views {
			if !o.answered[a] {
				o.views[a] = view{} // no answer: outcome unknown
			}
		}
		p.endPhase(e, o)
	case timerBackoff:
		if t.phSeq == o.phSeq && o.ph == phBackoff {
			p.plan(e, o)
		}
	}
}

// in is the membership function of the acceptors that succeeded this phase.
func (o *op) in(a int) bool { return o.ok[a] }

// progress decides whether o's phase is over after an answer.
func (p *Proposer) progress(e env.Env, o *op) {
	h := p.ks.shape
	switch o.ph {
	case phRead:
		// The closest quorum of answers settles it if it shows the
		// highest version chosen (typically its commit bit); otherwise
		// wait for every replica (§5.2.2), which may show it chosen, before
		// writing back or finishing it: a needless write-back raises the
		// promise under a write in flight and makes it retry.
		if o.got == o.sent {
			p.endPhase(e, o)
		} else if h.quorum(o.in) {
			if _, _, _, chosen, _ := p.learned(o); chosen {
				p.endPhase(e, o)
			}
		}
	case phFast:
		if p.fastChosen(o) || o.got == o.sent {
			p.endPhase(e, o)
		}
	case phPrepare, phAccept:
		if h.quorum(o.in) || o.got == o.sent {
			p.endPhase(e, o)
		}
	case phFetch:
		p.endPhase(e, o)
	}
}

// endPhase acts on a phase's outcome.
func (p *Proposer) endPhase(e env.Env, o *op) {
	h := p.ks.shape
	ph := o.ph
	o.phSeq++ // later answers of this phase only refresh nothing
	e.CancelTimer(o.timer)
	o.phaseNs = e.Now() - o.phStart
	switch ph {
	case phRead:
		if !h.quorum(o.in) {
			p.retry(e, o)
			return
		}
		o.fresh = true
		p.plan(e, o)
	case phFast:
		if p.fastChosen(o) {
			// Chosen in the fast round: a super quorum accepted it (§5.2.1).
			p.stats.fastCommits++
			p.chosen(e, o, o.n, o.val)
			return
		}
		p.plan(e, o)
	case phPrepare:
		if !h.quorum(o.in) {
			p.stats.prepareFailures++
			if o.refused == 0 {
				p.stats.falsePrepareFailures++
			}
			if p.ks.cfg.ProposeAssistants {
				// The assistants read every acceptor they answered for:
				// what o knows is as fresh as a read.
				o.fresh = true
			}
			p.retry(e, o)
			return
		}
		p.acceptPhase(e, o)
	case phAccept:
		if !h.quorum(o.in) {
			p.retry(e, o)
			return
		}
		p.stats.slowCommits++
		p.chosen(e, o, o.n, o.val)
	case phFetch:
		p.plan(e, o) // with the data, or with that acceptor unknown
	}
}

// fastChosen reports whether o's fast round has chosen its value: a super
// quorum accepted it (§5.2.1; the teeth's unsafe rule: any acceptor).
func (p *Proposer) fastChosen(o *op) bool {
	if p.ks.cfg.unsafeFastBelowSuper {
		return slices.Contains(o.ok, true)
	}
	return p.ks.shape.super(o.in)
}

// retry waits a random backoff (§5.2.1: against starvation), then plans
// again from a fresh read. A phase planned on cached or assumed states
// (no read since the last retry) failed because they were stale: it
// re-reads at once. Otherwise the wait is a uniform draw in
// [0, base·2^min(attempt-1, maxBackoffShift)), base the larger of
// Backoff and half the failed phase's measured round trip (its time to
// its last answer): a competitor's next phase takes about one round
// trip, so a wait far shorter only re-enters the same duel, and one far
// longer spends the op's time idle.
func (p *Proposer) retry(e env.Env, o *op) {
	if o.cold && p.knownQuorum(o) {
		// Rule 3c: the phase was planned on a cache miss's assumed states
		// (stale, not contention), and the Heads beside its creates, or
		// the assistants, read a quorum since: plan on those at once.
		o.cold = false
		o.fresh = true
		o.ph = phBackoff
		o.phSeq++
		p.plan(e, o)
		return
	}
	if !o.fresh {
		o.fresh = true // at most once: the read makes the views fresh
		o.ph = phBackoff
		o.phSeq++
		p.read(e, o)
		return
	}
	o.fresh = false
	o.attempt++
	o.ph = phBackoff
	o.phSeq++
	base := max(int64(p.ks.cfg.Backoff), min(o.phaseNs, int64(p.ks.cfg.StorageTimeout))/2)
	span := base << min(o.attempt-1, maxBackoffShift)
	o.timer = e.SetTimer(time.Duration(e.Rand().Int64N(span)), opTimer{op: o.id, phSeq: o.phSeq, kind: timerBackoff})
}

// maxBackoffShift caps the backoff's doubling: 2^3 round trips.
const maxBackoffShift = 3

// knownQuorum reports whether o knows the state of a quorum of acceptors.
func (p *Proposer) knownQuorum(o *op) bool {
	return p.ks.shape.quorum(func(a int) bool { return o.views[a].known })
}

// learned is what o's views show of the latest versions: m, the highest
// accepted version; pv, the highest promised; and, if version m is known
// chosen, its value.
func (p *Proposer) learned(o *op) (m, pv uint64, v value, chosen, viaCommit bool) {
	h := p.ks.shape
	for _, w := range o.views {
		if w.known {
			m, pv = max(m, w.st.V), max(pv, w.st.PV)
		}
	}
	if m == 0 {
		return 0, pv, value{}, true, false // the initial absent value
	}
	at := func(w view) bool { return w.known && !w.absent && w.st.V == m }
	for _, w := range o.views {
		if at(w) && (w.st.Committed || w.commit != 0) {
			// Our own commit in flight says as much (sent once chosen).
			return m, pv, valueOf(w), true, w.st.Committed
		}
	}
	for _, w := range o.views {
		if !at(w) {
			continue
		}
		same := func(a int) bool {
			x := o.views[a]
			return at(x) && x.st.B == w.st.B && x.st.W == w.st.W
		}
		if w.st.B.IsFast() && h.super(same) || !w.st.B.IsFast() && h.quorum(same) {
			return m, pv, valueOf(w), true, false
		}
	}
	return m, pv, value{}, false, false
}

// dataFor is value w's data at version n from a view that has it and
// whose digest matches.
func (o *op) dataFor(w string, n uint64) ([]byte, bool) {
	for _, v := range o.views {
		if v.known && v.hasData && v.st.V == n && v.st.W == w && digest(v.data) == v.st.Digest {
			return v.data, true
		}
	}
	return nil, false
}

// prevOf is what an Accept at version n records of version n-1's chosen
// value (state.Prev): its write ID if o knows it, else "".
func (o *op) prevOf(n uint64) string {
	if n > 1 && o.knownN == n-1 {
		return o.knownW
	}
	return ""
}

func valueOf(w view) value { return value{w: w.st.W, data: w.data, del: w.st.Tombstone} }

// plan picks o's next step from what it knows.
func (p *Proposer) plan(e env.Env, o *op) {
	if !p.knownQuorum(o) {
		p.read(e, o)
		return
	}
	m, pv, v, chosen, viaCommit := p.learned(o)
	if chosen && m >= o.knownN {
		o.knownN, o.knownW = m, v.w
	}
	if o.req.Op == wire.OpGet {
		switch {
		case p.ks.cfg.unsafeReadCommittedOnly && !viaCommit:
			// Teeth: ignore a higher version without its commit bit and
			// return the newest committed one.
			p.answerRead(e, o, p.newestCommitted(o))
		case chosen:
			// Version m is chosen and no later one can be: a later chosen
			// version was accepted by a quorum, which intersects the
			// quorum read since this read began (Theorem V.2).
			d, ok := p.dataOf(o, m, v.w)
			if !ok {
				p.stats.fetches++
				p.fetch(e, o, m, v.w)
				return
			}
			if viaCommit {
				p.stats.readsOneRound++
			}
			v.data = d
			p.answerRead(e, o, v)
		case !o.fullData:
			// A write-back may re-propose any acceptor's value: read
			// every acceptor's data first.
			o.fullData = true
			p.read(e, o)
		default:
			// Not known chosen: write back the highest accepted value
			// (§5.2.2), or find out what version m chose.
			p.stats.writeBacks++
			p.slow(e, o, m)
		}
		return
	}
	// Rule 3a: a write whose value may have been chosen at proposedAt must
	// learn that version's value before it proposes again: proposing at a
	// later version could apply it twice. Once later versions hide it
	// (garbage collection), the outcome is unknown.
	if o.proposedAt != 0 {
		// Rule 3b: the acceptors of version proposedAt+1 may record which
		// value proposedAt chose (state.Prev).
		for _, w := range o.views {
			if !w.known || w.absent || w.st.V != o.proposedAt+1 || w.st.Prev == "" {
				continue
			}
			if w.st.Prev == o.mine.w {
				p.finish(e, o, &wire.Reply{}) // chosen at proposedAt
				return
			}
			o.proposedAt = 0 // another value was chosen there
			break
		}
	}
	if o.proposedAt != 0 {
		switch {
		case chosen && m == o.proposedAt && v.w != o.mine.w:
			o.proposedAt = 0
		case m > o.proposedAt || pv > o.proposedAt:
			p.stats.timeouts++
			p.finish(e, o, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: "cric: a later version hides whether this write was chosen; outcome unknown"}})
			return
		}
	}
	switch {
	case pv > m:
		// Someone promised for version pv, so pv-1 is chosen: compete
		// for pv (Paxos recovery keeps whatever pv has accepted).
		p.slow(e, o, pv)
	case !chosen:
		p.slow(e, o, m) // finish version m first
	case v.w == o.mine.w:
		p.finish(e, o, &wire.Reply{})
	case o.fast && o.fastDone != m+1:
		p.fastRound(e, o, m+1)
	default:
		p.slow(e, o, m+1)
	}
}

// dataOf is the data of value w at version m from a view that read it
// and whose digest, kept in the metadata beside the Paxos state (§5.2.3),
// matches it: a copy is trusted only for the version its digest names.
// A tombstone, and version 0 (the object never written), need no data.
func (p *Proposer) dataOf(o *op, m uint64, w string) ([]byte, bool) {
	if m == 0 {
		return nil, true // the initial absent value: nothing to fetch
	}
	for _, v := range o.views {
		if !v.known || v.absent || v.st.V != m || v.st.W != w {
			continue
		}
		if v.st.Tombstone {
			return nil, true
		}
		if v.hasData && digest(v.data) == v.st.Digest {
			return v.data, true
		}
	}
	return nil, false
}

// newestCommitted is the value of the highest committed version o's
// views show (only the teeth's unsafe read uses it).
func (p *Proposer) newestCommitted(o *op) value {
	var best view
	for _, w := range o.views {
		if w.known && w.st.Committed && w.st.V > best.st.V {
			best = w
		}
	}
	if best.st.V == 0 {
		return value{}
	}
	return valueOf(best)
}

func (p *Proposer) answerRead(e env.Env, o *op, v value) {
	rep := &wire.Reply{Found: v.w != "" && !v.del}
	if rep.Found {
		rep.Value = v.data
	}
	p.finish(e, o, rep)
}

// fastRound tries to get o's value accepted for version n in ballot #0
// at a super quorum, skipping Prepare (§5.2.1).
func (p *Proposer) fastRound(e env.Env, o *op, n uint64) {
	o.fastDone = n
	o.proposedAt = n
	o.n, o.b, o.val = n, Ballot{}, o.mine
	d := digest(o.mine.data)
	type plan struct {
		a    int
		next state
	}
	var plans []plan
	for a, w := range o.views {
		if !w.known {
			continue
		}
		if next, ok, _ := w.st.accept(n, Ballot{}, o.mine.w, d, o.mine.del); ok {
			next.Prev = o.prevOf(n)
			plans = append(plans, plan{a, next})
		}
	}
	can := func(a int) bool {
		return slices.ContainsFunc(plans, func(x plan) bool { return x.a == a })
	}
	if !p.ks.shape.super(can) {
		p.slow(e, o, n)
		return
	}
	p.newPhase(e, o, phFast)
	for _, x := range plans {
		p.write(e, o, x.a, x.next, o.mine.data, true)
	}
}

// slow runs the classic path for version n: promises with a ballot above
// every one seen, by conditional writes on the states read (§5.2.1).
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
	o.n, o.b = n, Ballot{Round: o.maxRound, Node: uint32(p.id), Nonce: p.nonce}
	type plan struct {
		a    int
		next state
	}
	var plans []plan
	for a, w := range o.views {
		if !w.known {
			continue
		}
		if next, ok, _ := w.st.promise(n, o.b); ok {
			plans = append(plans, plan{a, next})
		}
	}
	can := func(a int) bool {
		return slices.ContainsFunc(plans, func(x plan) bool { return x.a == a })
	}
	if p.ks.cfg.ProposeAssistants {
		// The assistants read each acceptor's state themselves: an
		// unknown one may promise too.
		if p.ks.shape.quorum(func(a int) bool { return can(a) || !o.views[a].known }) {
			p.newPhase(e, o, phPrepare)
			for a, w := range o.views {
				if can(a) || !w.known {
					p.prepareVia(e, o, a)
				}
			}
			return
		}
	}
	if !p.ks.shape.quorum(can) {
		// Too many acceptors moved past version n (or are unknown): what
		// we know is stale. Read again.
		for a := range o.views {
			if !can(a) {
				o.views[a] = view{}
			}
		}
		p.retry(e, o)
		return
	}
	p.newPhase(e, o, phPrepare)
	for _, x := range plans {
		p.write(e, o, x.a, x.next, nil, false)
	}
}

// acceptPhase picks the value for version n from the quorum that promised
// and asks every acceptor whose state o knows to accept it.
func (p *Proposer) acceptPhase(e env.Env, o *op) {
	n := o.n
	if m, _, _, chosen, _ := p.learned(o); chosen && m >= n {
		// The promises showed version n already chosen (a commit bit,
		// typically: a write planned on assumed or stale states, through
		// assistants, which answer the state but no data): accepting it
		// again would cost a read of its data for nothing.
		p.plan(e, o)
		return
	}
	promised := slices.Clone(o.ok)
	// The states they promised from: what they had accepted for n (a
	// promise changes only PV and PB).
	at := func(a int) bool { return promised[a] && o.views[a].st.V == n }
	best := -1
	for a := range o.views {
		if at(a) && (best < 0 || o.views[best].st.B.Less(o.views[a].st.B)) {
			best = a
		}
	}
	var val value
	switch {
	case best >= 0 && !o.views[best].st.B.IsFast():
		val = valueOf(o.views[best]) // Paxos: the highest ballot's value
	case best >= 0:
		val = p.fastRecovery(o, promised, n)
	case o.req.Op != wire.OpGet:
		val = o.mine // free: nothing accepted for n in the quorum
	default:
		// A reader writing back whose quorum accepted nothing for n: any
		// value accepted for n elsewhere is a written value.
		for a, w := range o.views {
			if w.known && w.st.V == n && (val.w == "" || o.views[best].st.B.Less(w.st.B)) {
				val, best = valueOf(w), a
			}
		}
		if val.w == "" {
			p.retry(e, o)
			return
		}
	}
	if val.w == o.mine.w {
		val = o.mine // our own value, whatever copy o saw of it
	} else if !val.del {
		// Re-proposing another's value: its data from a copy whose
		// digest matches. If o knows it only by metadata (a Head, a
		// cached view, an assistant's answer), Get every acceptor's
		// data, then prepare again.
		d, ok := o.dataFor(val.w, n)
		if !ok {
			o.fullData = true
			p.read(e, o)
			return
		}
		val.data = d
	}
	o.val = val
	if val.w == o.mine.w {
		o.proposedAt = n
	}
	d := digest(val.data)
	// Rule 5a: promises not yet answered (the quorum came first). An
	// accept sent now on the ETag before the promise fails once the
	// promise lands, leaving that acceptor a version behind (and a
	// reader near it a second round trip): it waits for the promise's
	// ETag instead.
	inflight := make([]uint64, len(o.views))
	for _, id := range o.reqs {
		if pd, ok := p.pending[id]; ok && pd.kind == phPrepare {
			inflight[pd.acc] = id
		}
	}
	p.newPhase(e, o, phAccept)
	for a, w := range o.views {
		if id := inflight[a]; id != 0 && w.known {
			if len(p.promised) >= maxCommits {
				p.promised = map[uint64]deferred{}
			}
			p.promised[id] = deferred{op: o.id, phSeq: o.phSeq, acc: a}
			o.sent++
			continue
		}
		if !w.known {
			continue
		}
		if next, ok, _ := w.st.accept(n, o.b, val.w, d, val.del); ok {
			next.Prev = o.prevOf(n)
			p.write(e, o, a, next, val.data, true)
		}
	}
}

// fastRecovery picks the value after a fast round whose outcome the
// promised quorum Q does not settle by a classic ballot (§5.2.1, with
// Fast Paxos's rule generalized to hierarchical quorums): a value v may
// have been chosen in round #0 only if some super quorum R could have
// accepted it, i.e. every acceptor of R in Q accepted v in round #0. At
// most one value passes (two super quorums and a quorum share an acceptor,
// Theorem V.4); if none does, the most frequent is as good as any (the
// thesis's rule).
func (p *Proposer) fastRecovery(o *op, promised []bool, n uint64) value {
	h := p.ks.shape
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
		if h.super(possible) {
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

// chosen: value v is chosen for version n. Set the commit bit
// asynchronously where o's accept landed (§5.2.2), then answer, or, for a
// write whose value lost, go on to the next version (last writer wins).
func (p *Proposer) chosen(e env.Env, o *op, n uint64, v value) {
	if n >= o.knownN {
		o.knownN, o.knownW = n, v.w
	}
	for a, w := range o.views {
		if w.known && !w.absent && w.st.V == n && w.st.W == v.w && !w.st.Committed && w.commit == 0 {
			next := w.st
			next.Committed = true
			// No answer is awaited; its ETag is kept (rule 6a).
			if len(p.commits) >= maxCommits {
				p.commits = map[uint64]*commitReq{}
			}
			id := p.newID()
			p.commits[id] = &commitReq{key: o.key, acc: a, from: w.etag, next: next}
			e.Send(p.ks.addrs[a], &storagesvc.Request{ID: id, Op: storagesvc.OpPutMeta, Key: o.key,
				Meta: next.meta(), Cond: storagesvc.Cond{IfMatch: w.etag}})
			o.views[a].commit = id
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
	// Our value lost version n: version n+1 is fresh. Every acceptor that
	// accepted n (a quorum) is still known, unless a commit bit went out.
	o.attempt = 0
	o.phSeq++
	p.plan(e, o)
}

// Counters implements protocol.Counted.
func (p *Proposer) Counters(int64) []protocol.Counter {
	s := p.stats
	return append([]protocol.Counter{
		protocol.Count("fast_commits_total", "writes chosen in the fast round (ballot #0)", s.fastCommits),
		protocol.Count("slow_commits_total", "versions chosen by the classic path (writes and write-backs)", s.slowCommits),
		protocol.Count("reads_one_round_total", "reads answered from a quorum's commit bit", s.readsOneRound),
		protocol.Count("write_backs_total", "reads that re-proposed the highest accepted value", s.writeBacks),
		protocol.Count("prepare_failures_total", "Prepare phases short of a quorum", s.prepareFailures),
		protocol.Count("false_prepare_failures_total", "Prepare phases short of a quorum with no acceptor refusing by its state (false propose failures, §5.2.4)", s.falsePrepareFailures),
		protocol.Count("pvm_retries_total", "conditional writes propose assistants repeated after the object moved (false failures absorbed)", s.pvmRetries),
		protocol.Count("data_fetches_total", "reads whose nearest acceptor lacked the chosen data: one more Get", s.fetches),
		protocol.Count("conflicts_total", "conditional writes refused (precondition failed)", s.conflicts),
		protocol.Count("unknown_total", "storage requests with an unknown outcome (error or no answer)", s.unknown),
		protocol.Count("timeouts_total", "operations that timed out", s.timeouts),
	}, s.OpCosts.Counters()...)
}
