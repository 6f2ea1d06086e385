package dirrc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// feTick is the frontend's periodic timer: heartbeats, resends, timeouts.
type feTick struct{}

// client identifies a client at a frontend: the gateway that forwarded
// its requests and its ID there.
type client struct {
	gw wire.NodeID
	id wire.ClientID
}

// waiter is a client acquire waiting for the region's grant.
type waiter struct {
	c     client
	fwdID uint64
	since int64
}

// clientOp is a holder's read, write or release waiting in its row's
// queue (rule F2).
type clientOp struct {
	id    uint64 // this leader's sequence of operations
	c     client
	fwdID uint64
	op    wire.Op
	value []byte
	since int64
}

// feState is where the region's leader is with one row.
type feState uint8

const (
	idle      feState = iota // no hold, none asked for
	acquiring                // fe_acquire sent, waiting for the grant
	syncing                  // granted, fetching the row from the chain
	held                     // granted and current: clients may use it
)

// feRow is one row at a frontend member. cur, rec and found are the
// replicated state: the same on every member that applied the same
// commands (rule F1). The rest is the leader's, in its memory only: a new
// leader starts every row idle (rule F3).
type feRow struct {
	cur   uint64 // the epoch the region's copy is current as of (0: the preloaded copy)
	rec   store.Record
	found bool

	state      feState
	nonce      uint64 // of the fe_acquire this hold answers
	epoch      uint64 // of the grant
	chain      []source
	chainAt    int   // the chain entry being asked
	syncTry    int   // attempts at the entry: which member of its region to ask
	base       int64 // when the fe_acquire was first sent
	lastSend   int64 // when fe_acquire or sync was last sent
	leaseUntil int64 // serve only before this (this member's clock)
	wanted     bool  // another frontend waits for the row
	holders    map[client]int64
	waiters    []waiter
	queue      []*clientOp // holders' operations, served one at a time
	// busy is the token of the head's command or read in flight;
	// installing, of the install command in flight (0: none).
	busy, installing uint64
	// advance: the sync moves to the chain's next entry at the next pump
	// (the group's callbacks must not re-enter it).
	advance bool
}

// wait is a proposal or read this member awaits.
type wait struct {
	kind waitKind
	key  string
	op   *clientOp // wWrite: the operation written
	upTo uint64    // wRead: serve the head's reads up to this operation
	// wInstall: the grant's epoch and nonce.
	epoch, nonce uint64
	// wSync: whom to answer and with what.
	from  wire.NodeID
	want  uint64
	asked uint64
}

type waitKind uint8

const (
	wWrite   waitKind = iota + 1 // cmdWrite
	wInstall                     // cmdInstall
	wRead                        // a read point for the head's reads
	wSync                        // a read point answering a SyncReq
)

// Commands of a region's frontend group (rule F1).
const (
	cmdWrite   byte = 1 + iota // key, epoch, delete, value, version: a write under the hold of epoch
	cmdInstall                 // key, epoch, want, keep, found, record: the region's copy becomes current as of epoch
)

// frontend is one member of a region's frontend (thesis §4.3.1): the
// region's copies of the rows and the epochs they are current as of are
// the state machine of the region's rsm group; its leader aggregates the
// region's clients' acquires and releases into one hold per row (the
// thesis's per-row counter is the holder set's size), talks to the
// directory and serves holders' reads and writes (rules F1–F6).
type frontend struct {
	ks *Keyspace
	id wire.NodeID
	// fe is the region's canonical frontend ID: the name the directory
	// knows the region by (its first node).
	fe    wire.NodeID
	g     *rsm.Group
	rows  map[string]*feRow
	seen  dirgroup.Seen
	reply func(e env.Env, to wire.NodeID, m *dirgroup.FwdReply)
	// st pumps the rows the group's callbacks touched, once the group
	// call under way returns, and notices a lost leadership.
	st        dirgroup.Settler
	waits     map[uint64]*wait
	nextToken uint64
	nextOp    uint64
	hbSeq     uint64
	hbSent    map[uint64]hbSent
	lastTS    int64
	// dir is, per directory group, the replica to send to: the last one
	// heard from as the leader, the next one after resend_interval +
	// heartbeat_interval without a word from it while the group's rows
	// are outstanding (rule R5).
	dir dirgroup.Trackers
	// term and seq make fe_acquire nonces: the leader's term in the high
	// 32 bits, seq counting up within it, so nonces count up across the
	// region's leaders and the directory can tell a stale fe_acquire
	// (reordered, forwarded late, or a deposed leader's) from a newer one
	// (rules 3, F3).
	term, seq uint64
	// counters (this member's, as leader)
	evictions, lapses, syncs uint64
}

// hbSent is a heartbeat sent: when, and to which directory group (each
// group's rows are heartbeated apart).
type hbSent struct {
	at  int64
	dir int
}

func newFrontend(ks *Keyspace, id wire.NodeID, reply func(env.Env, wire.NodeID, *dirgroup.FwdReply)) *frontend {
	f := &frontend{ks: ks, id: id, fe: ks.Frontend(id), rows: map[string]*feRow{}, reply: reply,
		waits: map[uint64]*wait{}, hbSent: map[uint64]hbSent{},
		dir:  dirgroup.NewTrackers(ks.Layout),
		seen: dirgroup.Seen{Horizon: 4 * ks.gatewayTimeout()}}
	f.g = rsm.New(ks.FEGroups[ks.Topo.RegionOf(id)], f)
	return f
}

// start replays the group's log: the rows' copies are rebuilt from the
// commands.
func (f *frontend) start(e env.Env) {
	f.dir.Start(e.Now())
	f.nextOp = e.Rand().Uint64() >> 1
	e.SetTimer(f.ks.cfg.HeartbeatInterval, feTick{})
	f.g.Start(e)
	f.settle(e)
}

// row returns key's row, created the first time a command or request
// names it from the preloaded record, which every member reads alike.
func (f *frontend) row(e env.Env, key string) *feRow {
	if r, ok := f.rows[key]; ok {
		return r
	}
	r := &feRow{holders: map[client]int64{}}
	r.rec, r.found, _ = get(e, loadKey(key))
	f.rows[key] = r
	return r
}

// settle runs after every input: it notices this member losing the
// leadership (rule F3) and pumps the rows the group's callbacks touched.
func (f *frontend) settle(e env.Env) {
	f.st.Settle(e, f.g.IsLeader(), f.stepDown, func(e env.Env, key string) { f.pump(e, key, f.row(e, key)) })
}

// stepDown drops the leader's state of every row (rule F3): holds,
// leases, waiting acquires (redirected: not applied) and queued
// operations (a write whose command is in flight is answered "timeout",
// its outcome unknown; the rest are redirected, unapplied). Its clients'
// holds are gone: the new leader refuses their accesses and releases.
func (f *frontend) stepDown(e env.Env) {
	for _, key := range slices.Sorted(maps.Keys(f.rows)) {
		r := f.rows[key]
		for _, w := range r.waiters {
			f.redirect(e, w.c.gw, w.fwdID)
		}
		for _, op := range r.queue {
			if w := f.waits[r.busy]; r.busy != 0 && w != nil && w.kind == wWrite && w.op == op {
				f.answer(e, op, &wire.Reply{Err: errReply(wire.ErrTimeout, "rc: frontend leader deposed before the write was confirmed (outcome unknown)")})
				continue
			}
			f.redirect(e, op.c.gw, op.fwdID)
		}
		delete(f.waits, r.busy)
		delete(f.waits, r.installing)
		clear(r.holders)
		r.waiters, r.queue, r.busy, r.installing = nil, nil, 0, 0
		r.state, r.nonce, r.chain, r.wanted = idle, 0, nil, false
	}
	clear(f.hbSent)
}

func (f *frontend) redirect(e env.Env, gw wire.NodeID, fwdID uint64) {
	f.reply(e, gw, &dirgroup.FwdReply{ID: fwdID, Redirect: true, Hint: f.g.Leader()})
}

func (f *frontend) answer(e env.Env, op *clientOp, rep *wire.Reply) {
	f.answerTo(e, op.c, op.fwdID, rep)
}

func (f *frontend) answerTo(e env.Env, c client, fwdID uint64, rep *wire.Reply) {
	if rep.Err == nil && f.ks.cfg.probe != nil {
		f.ks.cfg.probe(e, "serve")
	}
	m := &dirgroup.FwdReply{ID: fwdID, Found: rep.Found, Value: rep.Value, Version: rep.Version}
	if rep.Err != nil {
		m.Code, m.Msg = rep.Err.Code, rep.Err.Msg
	}
	f.reply(e, c.gw, m)
}

// servable: the row is held and its lease has not run out (rule 6).
func (f *frontend) servable(r *feRow, now int64) bool {
	return r.state == held && now < r.leaseUntil
}

// onFwd takes a client request from a gateway (rules 1, 2, 8, F2): the
// leader admits acquires and queues holders' operations; any other member
// redirects it, unapplied.
func (f *frontend) onFwd(e env.Env, from wire.NodeID, m *dirgroup.Fwd) {
	if !f.seen.Add(e, from, m.ID) {
		return
	}
	if !f.g.IsLeader() {
		f.redirect(e, from, m.ID)
		return
	}
	now := e.Now()
	c := client{gw: from, id: m.Client}
	fail := func(code wire.ErrorCode, format string, args ...any) {
		f.answerTo(e, c, m.ID, &wire.Reply{Err: errReply(code, format, args...)})
	}
	r := f.row(e, m.Key)
	_, holding := r.holders[c]
	switch m.Op {
	case wire.OpAcquire:
		switch {
		case holding:
			r.holders[c] = now
			f.answerTo(e, c, m.ID, &wire.Reply{})
		case f.servable(r, now) && !r.wanted && len(r.waiters) == 0:
			r.holders[c] = now
			f.answerTo(e, c, m.ID, &wire.Reply{})
		default:
			r.waiters = append(r.waiters, waiter{c, m.ID, now})
			if r.state == idle {
				f.startAcquire(e, m.Key, r)
			}
		}
	case wire.OpRelease, wire.OpGet, wire.OpPut, wire.OpDelete:
		if !holding {
			if m.Op == wire.OpRelease {
				fail(wire.ErrInvalid, "rc: release of %q without a hold (never acquired, already released, released for the client after hold_timeout without requests, or lost with its region's frontend leader)", m.Key)
				return
			}
			fail(wire.ErrInvalid, "rc: %s of %q outside a hold: acquire it first (a hold ends at release, after hold_timeout without requests, or when the region loses the row or its frontend leader)", m.Op, m.Key)
			return
		}
		r.holders[c] = now
		f.nextOp++
		r.queue = append(r.queue, &clientOp{id: f.nextOp, c: c, fwdID: m.ID, op: m.Op, value: m.Value, since: now})
		f.st.Touch(m.Key)
	default:
		fail(wire.ErrInvalid, "rc: unknown operation %s (rc serves acquire, release, get, put, delete)", m.Op)
	}
}

// pump serves the row's queue from its head, one command or read point at
// a time (rules F2, F4, F5). A member that is not the leader redirects
// its queue.
func (f *frontend) pump(e env.Env, key string, r *feRow) {
	if !f.g.IsLeader() {
		for _, op := range r.queue {
			f.redirect(e, op.c.gw, op.fwdID)
		}
		r.queue = nil
		return
	}
	if r.advance {
		r.advance = false
		if r.state == syncing {
			f.advanceSync(e, key, r)
		}
	}
	for len(r.queue) > 0 && r.busy == 0 {
		op := r.queue[0]
		now := e.Now()
		if _, holding := r.holders[op.c]; !holding {
			r.queue = r.queue[1:]
			f.answer(e, op, &wire.Reply{Err: errReply(wire.ErrInvalid, "rc: %s of %q: the client's hold ended while the request waited (hold_timeout, or the region lost the row)", op.op, key)})
			continue
		}
		if !f.servable(r, now) {
			f.lapse(e, key, r)
			continue // the queue was refused
		}
		switch op.op {
		case wire.OpRelease:
			// The lease still runs, and the holder's writes before it are
			// applied (the queue is served in order): the next holder's
			// sync, which follows the directory's end of this hold, sees
			// them (rule F4).
			r.queue = r.queue[1:]
			delete(r.holders, op.c)
			f.answer(e, op, &wire.Reply{})
			f.maybeRelease(e, key, r)
		case wire.OpGet:
			f.await(e, r, &wait{kind: wRead, key: key, upTo: f.nextOp}, func(t uint64) error { return f.g.Read(e, t) })
		default:
			f.lastTS = max(f.lastTS+1, e.Wall())
			rec := store.Record{Tombstone: op.op == wire.OpDelete,
				Version: wire.Version{TS: hlc.Timestamp{WallNanos: f.lastTS}, Node: f.id}}
			if !rec.Tombstone {
				rec.Value = op.value
			}
			b := wire.AppendUvarint(wire.AppendString([]byte{cmdWrite}, key), r.epoch)
			b = store.AppendWire(b, rec)
			f.await(e, r, &wait{kind: wWrite, key: key, op: op}, func(t uint64) error { return f.g.Propose(e, b, t) })
		}
	}
	if len(r.queue) == 0 {
		f.maybeRelease(e, key, r)
	}
}

// await starts the head's command or read point; the queue waits for it.
// With no leader known it fails: the member is stepping down, and its
// queue is redirected at the next settle.
func (f *frontend) await(e env.Env, r *feRow, w *wait, start func(token uint64) error) {
	t := f.token(w)
	r.busy = t
	if start(t) != nil {
		delete(f.waits, t)
		r.busy = 0
		f.lapse(e, w.key, r)
	}
}

func (f *frontend) token(w *wait) uint64 {
	f.nextToken++
	f.waits[f.nextToken] = w
	return f.nextToken
}

// startAcquire sends fe_acquire under a fresh nonce (rules 3, F3).
func (f *frontend) startAcquire(e env.Env, key string, r *feRow) {
	now := e.Now()
	if t := f.g.Term(); t != f.term {
		f.term, f.seq = t, 0
	}
	f.seq++
	r.state, r.nonce, r.base, r.lastSend, r.wanted = acquiring, f.term<<32|f.seq&(1<<32-1), now, now, false
	e.Send(f.dir.For(key).Target(), &FeAcquire{Key: key, Nonce: r.nonce, Sent: now})
}

// maybeRelease sends fe_release once the last client released (the
// thesis's counter reaching zero), then queues again if clients wait.
func (f *frontend) maybeRelease(e env.Env, key string, r *feRow) {
	if r.state != held || len(r.holders) > 0 || r.busy != 0 {
		return
	}
	e.Send(f.dir.For(key).Target(), &FeRelease{Key: key, Nonce: r.nonce, Epoch: r.epoch, Current: true})
	r.state, r.nonce, r.chain, r.wanted = idle, 0, nil, false
	if len(r.waiters) > 0 {
		f.startAcquire(e, key, r)
	}
}

// lapse drops a hold the leader may no longer serve: its clients lose
// the row (their queued and later accesses are refused) and waiting
// clients queue again.
func (f *frontend) lapse(e env.Env, key string, r *feRow) {
	for _, op := range r.queue {
		if w := f.waits[r.busy]; r.busy != 0 && w != nil && w.kind == wWrite && w.op == op {
			continue // its command decides (Applied)
		}
		f.answer(e, op, &wire.Reply{Err: errReply(wire.ErrUnavailable, "rc: the region's hold on %q lapsed (no heartbeat answer from the directory, or the directory moved on); acquire it again", key)})
	}
	r.queue = slices.DeleteFunc(r.queue, func(op *clientOp) bool {
		w := f.waits[r.busy]
		return r.busy == 0 || w == nil || w.op != op
	})
	if r.state == idle {
		return
	}
	f.lapses++
	clear(r.holders)
	delete(f.waits, r.installing)
	r.installing = 0
	r.state, r.nonce, r.chain, r.wanted = idle, 0, nil, false
	if len(r.waiters) > 0 {
		f.startAcquire(e, key, r)
	}
}

// onGrant starts the lazy sync at acquire (rule 5).
func (f *frontend) onGrant(e env.Env, from wire.NodeID, m *Grant) {
	f.dir.For(m.Key).HeardAt(from, e.Now())
	if !f.g.IsLeader() {
		return // the region's leader resends its fe_acquire (rule F3)
	}
	r := f.row(e, m.Key)
	if r.nonce != m.Nonce {
		// A grant for an attempt the region gave up (a duplicated
		// fe_acquire queued it again), or for an earlier leader's: hand
		// it back unused. Only a leader does, and only for a nonce of its
		// term or an earlier one, whose leader can commit nothing more
		// (rule F3).
		if m.Nonce>>32 <= f.g.Term() {
			e.Send(f.dir.For(m.Key).Target(), &FeRelease{Key: m.Key, Nonce: m.Nonce, Epoch: m.Epoch})
		}
		return
	}
	if r.state != acquiring {
		return
	}
	// The lease counts from the fe_acquire the grant echoes, if it is one
	// of this attempt's (rule 6), else from the attempt's first.
	start, now := r.base, e.Now()
	if m.Sent > r.base && m.Sent <= now {
		start = m.Sent
	}
	if start+int64(f.ks.feLease()) <= now {
		// Granted too late to serve (the directory was slow: an
		// election, a queue): the next resend asks again under the same
		// nonce, and the leader renews the head and echoes it. (Not at
		// once: a leader that cannot renew yet would answer in a loop.)
		return
	}
	r.state, r.epoch, r.chain, r.chainAt, r.syncTry = syncing, m.Epoch, m.Chain, 0, 0
	r.leaseUntil = start + int64(f.ks.feLease())
	f.advanceSync(e, m.Key, r)
}

// advanceSync asks the chain's entries, newest first, for a copy current
// as of their epoch (rule 5). An entry naming this region is checked by a
// command, against the copy the group has applied when it is (rule F5).
// Past the end of the chain no one ever wrote the row: the preloaded copy
// is current.
func (f *frontend) advanceSync(e env.Env, key string, r *feRow) {
	if r.installing != 0 {
		return
	}
	if r.chainAt < len(r.chain) && !f.ks.cfg.noSync {
		s := r.chain[r.chainAt]
		if s.FE == f.fe {
			f.install(e, key, r, s.Epoch, true, store.Record{}, false)
			return
		}
		members := f.ks.RegionNodes(s.FE)
		r.lastSend = e.Now()
		e.Send(members[r.syncTry%len(members)], &SyncReq{Key: key, Epoch: r.epoch, Want: s.Epoch})
		r.syncTry++
		return
	}
	f.install(e, key, r, 0, true, store.Record{}, false)
}

// install proposes that the region's copy is current as of the grant's
// epoch: the synced copy, or (keep) the region's own if the group's
// applied copy is current as of want (rule F5).
func (f *frontend) install(e env.Env, key string, r *feRow, want uint64, keep bool, rec store.Record, found bool) {
	b := wire.AppendUvarint(wire.AppendString([]byte{cmdInstall}, key), r.epoch)
	b = wire.AppendBool(wire.AppendUvarint(b, want), keep)
	b = store.AppendWire(wire.AppendBool(b, found), rec)
	t := f.token(&wait{kind: wInstall, key: key, epoch: r.epoch, nonce: r.nonce})
	r.installing, r.lastSend = t, e.Now()
	if f.g.Propose(e, b, t) != nil {
		delete(f.waits, t)
		r.installing = 0 // the next tick tries again
	}
}

func (f *frontend) onSyncResp(e env.Env, from wire.NodeID, m *SyncResp) {
	r := f.rows[m.Key]
	if r == nil || r.state != syncing || r.installing != 0 || m.Epoch != r.epoch || r.chainAt >= len(r.chain) ||
		r.chain[r.chainAt] != (source{f.ks.Frontend(from), m.Want}) {
		return
	}
	if !m.Current {
		r.chainAt, r.syncTry = r.chainAt+1, 0
		f.advanceSync(e, m.Key, r)
		return
	}
	f.syncs++
	rec := m.Rec
	if !m.Found {
		rec = store.Record{Tombstone: true}
	}
	f.install(e, m.Key, r, 0, false, rec, m.Found)
}

// onSyncReq answers a later holder with the region's copy (rule 5) after
// a read point this member has applied (rule F6). A request from a grant
// newer than the leader's own hold means the directory ended that hold:
// the leader drops it.
func (f *frontend) onSyncReq(e env.Env, from wire.NodeID, m *SyncReq) {
	if r := f.rows[m.Key]; r != nil && (r.state == held || r.state == syncing) {
		if r.epoch >= m.Epoch {
			return // a stale request from an earlier holder
		}
		f.lapse(e, m.Key, r)
	}
	t := f.token(&wait{kind: wSync, key: m.Key, from: from, want: m.Want, asked: m.Epoch})
	if f.g.Read(e, t) != nil {
		delete(f.waits, t) // no leader known: the asker tries the region's next member
	}
}

// Apply implements rsm.StateMachine: one command, in log order, on every
// member. Each re-checks its condition on the applied copy (rule F1).
func (f *frontend) Apply(e env.Env, index uint64, cmd []byte) []byte {
	kind, key, d, ok := dirgroup.DecodeCommand(e, "rc", index, cmd)
	if !ok {
		return nil
	}
	r := f.row(e, key)
	f.st.Touch(key)
	var res []byte
	switch kind {
	case cmdWrite:
		epoch, rec := d.Uvarint(), store.DecodeWire(d)
		if d.Err() == nil && epoch == r.cur {
			// Written under the hold the copy was made current for: a
			// write proposed under an older hold takes no effect.
			r.rec, r.found = rec, true
			res = []byte{1}
		}
	case cmdInstall:
		epoch, want, keep := d.Uvarint(), d.Uvarint(), d.Bool()
		found, rec := d.Bool(), store.DecodeWire(d)
		switch {
		case d.Err() != nil || epoch < r.cur:
		case epoch == r.cur:
			res = []byte{1} // installed already (a duplicate)
		case keep && r.cur >= want:
			r.cur, res = epoch, []byte{1}
		case !keep:
			r.rec, r.found, r.cur, res = rec, found, epoch, []byte{1}
		}
	default:
		env.Invariant(e, false, "rc: frontend command %d has unknown kind %d", index, kind)
	}
	if d.Err() != nil {
		env.Invariant(e, false, "rc: frontend command %d undecodable: %v", index, d.Err())
	}
	return res
}

// Snapshot implements rsm.StateMachine: every row's replicated state (rule
// F1): the epoch its copy is current as of, and the copy.
func (f *frontend) Snapshot(env.Env) []byte {
	return dirgroup.EncodeRows(f.rows, func(b []byte, r *feRow) []byte {
		return store.AppendWire(wire.AppendBool(wire.AppendUvarint(b, r.cur), r.found), r.rec)
	})
}

// Restore implements rsm.StateMachine: every row takes a Snapshot's
// replicated state; a row the snapshot does not name starts again from
// the preloaded record. What the leader was doing with a row (holds,
// leases, queues: F3) stays for settle to end: a member restores only as
// a follower.
func (f *frontend) Restore(e env.Env, data []byte) error {
	rows, err := dirgroup.DecodeRows(data, func(d *wire.Decoder) *feRow {
		return &feRow{cur: d.Uvarint(), found: d.Bool(), rec: store.DecodeWire(d)}
	})
	if err != nil {
		return fmt.Errorf("rc: frontend %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(f.rows)) {
		if _, ok := rows[key]; !ok {
			r := f.rows[key]
			r.cur = 0
			r.rec, r.found, _ = get(e, loadKey(key))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rows)) {
		r, nr := f.row(e, key), rows[key]
		r.cur, r.found, r.rec = nr.cur, nr.found, nr.rec
	}
	return nil
}

// Applied implements rsm.StateMachine: this member proposed the command
// (in this incarnation).
func (f *frontend) Applied(e env.Env, token uint64, res []byte) {
	w, ok := f.waits[token]
	if !ok {
		return
	}
	delete(f.waits, token)
	r := f.row(e, w.key)
	f.st.Touch(w.key)
	switch w.kind {
	case wWrite:
		if r.busy == token {
			r.busy = 0
		}
		if i := slices.Index(r.queue, w.op); i >= 0 {
			r.queue = slices.Delete(r.queue, i, i+1)
		}
		if len(res) == 0 {
			f.answer(e, w.op, &wire.Reply{Err: errReply(wire.ErrUnavailable, "rc: %s of %q not applied: the region's copy moved past the hold", w.op.op, w.key)})
			return
		}
		f.answer(e, w.op, &wire.Reply{Version: r.rec.Version})
	case wInstall:
		if r.installing != token {
			return
		}
		r.installing = 0
		if r.state != syncing || r.nonce != w.nonce || r.epoch != w.epoch {
			return
		}
		if len(res) == 0 {
			// The region's copy is not current as of this entry's epoch:
			// ask the next entry.
			r.chainAt, r.syncTry, r.advance = r.chainAt+1, 0, true
			return
		}
		f.finishSync(e, w.key, r)
	}
}

// visible says the region's copy holds a value (not absent, not deleted).
func (r *feRow) visible() bool { return r.found && !r.rec.Tombstone }

// finishSync admits the waiting clients: the region's copy is current as
// of the grant's epoch, committed before any of them is answered.
func (f *frontend) finishSync(e env.Env, key string, r *feRow) {
	r.state = held
	now := e.Now()
	if !f.servable(r, now) {
		f.lapse(e, key, r)
		return
	}
	for _, w := range r.waiters {
		r.holders[w.c] = now
		f.answerTo(e, w.c, w.fwdID, &wire.Reply{})
	}
	r.waiters = r.waiters[:0]
	f.maybeRelease(e, key, r)
}

// Readable implements rsm.StateMachine: a read this member asked for may
// be served from its applied state (rules F4, F6).
func (f *frontend) Readable(e env.Env, token uint64) {
	w, ok := f.waits[token]
	if !ok {
		return
	}
	delete(f.waits, token)
	r := f.row(e, w.key)
	if w.kind == wSync {
		resp := &SyncResp{Key: w.key, Epoch: w.asked, Want: w.want, Current: r.cur >= w.want}
		if resp.Current {
			resp.Rec, resp.Found = r.rec, r.visible()
		}
		e.Send(w.from, resp)
		return
	}
	f.st.Touch(w.key)
	if r.busy != token {
		return
	}
	r.busy = 0
	if !f.servable(r, e.Now()) {
		return // pump refuses the queue
	}
	for len(r.queue) > 0 && r.queue[0].op == wire.OpGet && r.queue[0].id <= w.upTo {
		op := r.queue[0]
		r.queue = r.queue[1:]
		if _, holding := r.holders[op.c]; !holding {
			f.answer(e, op, &wire.Reply{Err: errReply(wire.ErrInvalid, "rc: get of %q: the client's hold ended while the request waited", w.key)})
			continue
		}
		rep := &wire.Reply{Found: r.visible(), Version: r.rec.Version}
		if rep.Found {
			rep.Value = r.rec.Value
		}
		f.answer(e, op, rep)
	}
}

// onHeartbeatAck notes a directory replica acting as the leader of the
// group the heartbeat went to (rule R5) and extends the leases it renewed.
func (f *frontend) onHeartbeatAck(e env.Env, from wire.NodeID, m *HeartbeatAck) {
	hb, ok := f.hbSent[m.Seq]
	if !ok {
		return
	}
	f.dir.At(hb.dir).HeardAt(from, e.Now())
	sent := hb.at
	for _, h := range m.Holds {
		r := f.rows[h.Key]
		if r == nil || r.nonce != h.Nonce || (r.state != held && r.state != syncing) {
			continue
		}
		r.leaseUntil = max(r.leaseUntil, sent+int64(f.ks.feLease()))
		r.wanted = h.Wanted
	}
}

// tick: the leader heartbeats its holds, releases the rows of clients
// that stopped sending requests (rule 8), refuses acquires and queued
// operations that waited too long, drops lapsed holds and resends what
// may have been lost.
func (f *frontend) tick(e env.Env) {
	cfg := f.ks.cfg
	e.SetTimer(cfg.HeartbeatInterval, feTick{})
	if !f.g.IsLeader() {
		f.dir.Start(e.Now())
		return
	}
	now := e.Now()
	keys := slices.Sorted(maps.Keys(f.rows))
	// Nothing from a group's replica asked while its rows are
	// outstanding: it may be down, cut off or no longer the leader.
	busy := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return f.rows[k].state == idle && len(f.rows[k].waiters) == 0 })
	f.dir.NextIfSilent(now, int64(cfg.ResendInterval+cfg.HeartbeatInterval), busy)
	var holds []hold
	for _, k := range keys {
		r := f.rows[k]
		for c, seen := range r.holders { // lint:order-independent: only deletes and a count
			if seen+int64(cfg.HoldTimeout) <= now {
				delete(r.holders, c)
				f.evictions++
				if cfg.probe != nil {
					cfg.probe(e, "client_eviction")
				}
			}
		}
		r.waiters = slices.DeleteFunc(r.waiters, func(w waiter) bool {
			if w.since+int64(cfg.AcquireTimeout) > now {
				return false
			}
			f.answerTo(e, w.c, w.fwdID, &wire.Reply{Err: errReply(wire.ErrUnavailable, "rc: acquire of %q not granted within acquire_timeout (%s)", k, cfg.AcquireTimeout)})
			return true
		})
		if len(r.queue) > 0 {
			f.st.Touch(k) // refuse the queued operations of evicted holders
		}
		switch {
		case r.state == held && now >= r.leaseUntil:
			f.lapse(e, k, r)
		case r.state == held:
			f.maybeRelease(e, k, r)
		case r.state == acquiring && now-r.lastSend >= int64(cfg.ResendInterval):
			r.lastSend = now
			e.Send(f.dir.For(k).Target(), &FeAcquire{Key: k, Nonce: r.nonce, Sent: now})
		case r.state == syncing && now >= r.leaseUntil:
			f.lapse(e, k, r)
		case r.state == syncing && now-r.lastSend >= int64(cfg.ResendInterval):
			f.advanceSync(e, k, r)
		}
		switch r.state {
		case held, syncing:
			holds = append(holds, hold{Key: k, Nonce: r.nonce, Epoch: r.epoch, Current: r.state == held})
		}
	}
	// One heartbeat per directory group with holds (keys are sorted, so
	// each group's holds are too).
	byDir := make([][]hold, f.dir.Len())
	for _, h := range holds {
		i := f.dir.Index(h.Key)
		byDir[i] = append(byDir[i], h)
	}
	for i, hs := range byDir {
		if len(hs) == 0 {
			continue
		}
		f.hbSeq++
		f.hbSent[f.hbSeq] = hbSent{at: now, dir: i}
		delete(f.hbSent, f.hbSeq-8*uint64(len(byDir)))
		e.Send(f.dir.At(i).Target(), &Heartbeat{Seq: f.hbSeq, Holds: hs})
	}
}
