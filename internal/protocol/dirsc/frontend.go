package dirsc

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// frontend is one member of a region's frontend (seed 002 §4.2.7, Alg.
// 4.1): the region's rows, each Modified, Shared or Invalid with its data,
// are the state machine of the region's rsm group (rules F8–F12), whose
// leader serves the region's clients and talks to the directory. Every
// node of the region is a member.
type frontend struct {
	ks *Keyspace
	id wire.NodeID
	// fe is the region's canonical frontend ID: the name the directory
	// knows the region by (its first node), and the writer of versions.
	fe   wire.NodeID
	g    *rsm.Group
	rows map[string]*feRow
	seen dirgroup.Seen
	// reply hands an answer to the gateway the Fwd came from (this
	// node's own, or another's over the network).
	reply  func(e env.Env, to wire.NodeID, m *dirgroup.FwdReply)
	nextOp uint64
	// dir is the directory replica requests go to: the last one heard
	// from (grants, busy answers and invalidations come from the
	// leader), the next one after a request went unanswered (F7).
	dir dirgroup.Trackers
	// st pumps the rows the group's callbacks touched, once the group
	// call under way returns, and notices a lost leadership.
	st dirgroup.Settler
	// waits are the proposals and reads this incarnation awaits, by token.
	waits     map[uint64]*wait
	nextToken uint64
}

// feRow is one row at a frontend member. state, fence and data are the
// replicated state (the same on every member that applied the same
// commands); leaseEnd is this member's own; the rest is the leader's.
type feRow struct {
	state State
	// fence is the highest epoch of a grant or invalidation the region
	// has taken: a grant of an epoch at or below it is stale (rule F4).
	fence uint64
	data  rowData
	// leaseEnd: in S, reads are served locally while Now < leaseEnd. Only
	// the member whose clock timed the lease's start sets it (F11).
	leaseEnd int64
	// queue is the row lock of Alg. 4.1: client operations wait here,
	// in arrival order, and are served one at a time.
	queue    []*clientOp
	req      *outReq  // the request to the directory in flight
	sync     *syncing // a grant whose data is being fetched
	attempts int      // busy answers since the last grant (backoff)
	retrying bool     // a backoff timer is pending
	// busy is the token of the head's proposal or read in flight (0:
	// none): the row waits for it before serving anything else.
	busy uint64
}

type clientOp struct {
	id    uint64
	req   *wire.Request
	from  wire.NodeID // the gateway
	fwdID uint64
	timer env.TimerID
}

type outReq struct {
	want   State
	nonce  uint64
	sentAt int64
	to     wire.NodeID // the directory replica it went to
	timer  env.TimerID
}

type syncing struct {
	grant   *Grant
	sentAt  int64 // when the granted request was sent (the lease's start)
	sources []wire.NodeID
	tries   int
	nonce   uint64
	timer   env.TimerID
}

// wait is a proposal or read this member awaits.
type wait struct {
	kind waitKind
	key  string
	op   *clientOp // wWrite: the operation written
	// wInstall: the grant's state and when its request was sent.
	want   State
	sentAt int64
	// wRead: serve the head's reads queued up to this operation ID.
	upTo uint64
	// wInval, wSync: whom to answer and with what.
	from    wire.NodeID
	at      int64 // wInval: when the invalidation arrived
	epoch   uint64
	nonce   uint64
	syncKey string
}

type waitKind uint8

const (
	wWrite   waitKind = iota + 1 // cmdWrite or cmdGrantWrite
	wInstall                     // cmdInstall
	wInval                       // cmdInval
	wRead                        // a read of the head's queued reads
	wSync                        // a read answering a Sync
)

// Commands of a region's frontend group.
const (
	cmdWrite      byte = 1 + iota // key, delete, value: a write in M
	cmdGrantWrite                 // key, epoch, delete, value: take M and write (a write miss)
	cmdInstall                    // key, want, epoch, keep, data: take a grant
	cmdInval                      // key, to, epoch: an invalidation
)

// Frontend timers.
type (
	opTimer struct {
		key string
		id  uint64
	}
	reqTimer struct {
		key   string
		nonce uint64
	}
	retryTimer struct{ key string }
	syncTimer  struct {
		key   string
		nonce uint64
	}
)

func newFrontend(ks *Keyspace, id wire.NodeID, reply func(env.Env, wire.NodeID, *dirgroup.FwdReply)) *frontend {
	f := &frontend{ks: ks, id: id, fe: ks.Frontend(id), rows: make(map[string]*feRow), reply: reply,
		dir: dirgroup.NewTrackers(ks.Layout), waits: make(map[uint64]*wait),
		seen: dirgroup.Seen{Horizon: 4 * (ks.cfg.OpTimeout + ks.cfg.ResendInterval)}}
	f.g = rsm.New(ks.FEGroups[ks.Topo.RegionOf(id)], f)
	return f
}

// start restores the group's latest snapshot and replays the log after it
// (rsm): the rows are rebuilt from the commands.
func (f *frontend) start(e env.Env) {
	f.nextOp = e.Rand().Uint64() >> 1
	f.g.Start(e)
	f.settle(e)
}

// row returns key's row, created the first time a command or request
// names it. Preloaded rows are Modified in the loader's region (seed 002
// §5): every member of that region reads the same load record, so every
// member starts the row alike.
func (f *frontend) row(e env.Env, key string) *feRow {
	if r, ok := f.rows[key]; ok {
		return r
	}
	r := &feRow{}
	if f.ks.loader() == f.fe {
		if data, ok := loaded(e, key); ok {
			r.state, r.data = Modified, data
		}
	}
	f.rows[key] = r
	return r
}

// settle runs after every input: it notices this member losing the
// leadership (rule F9) and pumps the rows the group's callbacks touched.
func (f *frontend) settle(e env.Env) {
	f.st.Settle(e, f.g.IsLeader(), f.stepDown, func(e env.Env, key string) { f.pump(e, key, f.row(e, key)) })
}

// stepDown drops the leader's work (rule F9): requests to the
// directory, syncs, reads and proposals in flight. Every queued operation
// is answered: a write whose command is in flight "timeout" (it may still
// be applied: the outcome is unknown), the others redirected, unapplied.
func (f *frontend) stepDown(e env.Env) {
	for _, key := range slices.Sorted(maps.Keys(f.rows)) {
		r := f.rows[key]
		if r.req != nil {
			e.CancelTimer(r.req.timer)
			r.req = nil
		}
		if r.sync != nil {
			e.CancelTimer(r.sync.timer)
			r.sync = nil
		}
		if w := f.waits[r.busy]; r.busy != 0 && w != nil && w.kind == wWrite && len(r.queue) > 0 && r.queue[0] == w.op {
			r.queue = r.queue[1:]
			f.answer(e, w.op, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: "sc: frontend leader deposed before the write was confirmed (outcome unknown)"}})
		}
		if r.busy != 0 && f.waits[r.busy] != nil && f.waits[r.busy].kind != wWrite {
			delete(f.waits, r.busy) // a read or an install: let it go
		}
		r.busy = 0
		if len(r.queue) > 0 {
			f.st.Touch(key)
		}
	}
}

// onFwd takes a client operation from a gateway: the leader queues it on
// its row (the row lock); any other member redirects it, unapplied.
func (f *frontend) onFwd(e env.Env, from wire.NodeID, m *dirgroup.Fwd) {
	if !f.seen.Add(e, from, m.ID) {
		return
	}
	if !f.g.IsLeader() {
		f.reply(e, from, &dirgroup.FwdReply{ID: m.ID, Redirect: true, Hint: f.g.Leader()})
		return
	}
	f.nextOp++
	op := &clientOp{id: f.nextOp, req: &wire.Request{Op: m.Op, Key: m.Key, Value: m.Value}, from: from, fwdID: m.ID}
	op.timer = e.SetTimer(f.ks.cfg.OpTimeout, opTimer{m.Key, op.id})
	r := f.row(e, m.Key)
	r.queue = append(r.queue, op)
	f.st.Touch(m.Key)
}

func (f *frontend) answer(e env.Env, op *clientOp, rep *wire.Reply) {
	e.CancelTimer(op.timer)
	if f.ks.cfg.serveProbe != nil && rep.Err == nil {
		f.ks.cfg.serveProbe(e)
	}
	m := &dirgroup.FwdReply{ID: op.fwdID, Found: rep.Found, Value: rep.Value, Version: rep.Version}
	if rep.Err != nil {
		m.Code, m.Msg = rep.Err.Code, rep.Err.Msg
	}
	f.reply(e, op.from, m)
}

// pump serves the row's queue from its head while the state allows (rules
// F1, F2, F10), one command or read at a time, and otherwise makes sure a
// request for the state the head needs is on its way. A member that is not
// the leader redirects its queue.
func (f *frontend) pump(e env.Env, key string, r *feRow) {
	if !f.g.IsLeader() {
		for _, op := range r.queue {
			e.CancelTimer(op.timer)
			f.reply(e, op.from, &dirgroup.FwdReply{ID: op.fwdID, Redirect: true, Hint: f.g.Leader()})
		}
		r.queue = nil
		return
	}
	if len(r.queue) == 0 || r.sync != nil || r.busy != 0 {
		return
	}
	op := r.queue[0]
	read := op.req.Op == wire.OpGet
	switch {
	case read && f.readable(e, r):
		f.read(e, key, r)
	case !read && r.state == Modified:
		b := []byte{cmdWrite}
		b = wire.AppendString(b, key)
		b = appendWrite(b, op.req)
		f.propose(e, r, b, &wait{kind: wWrite, key: key, op: op})
	default:
		want := Shared
		if !read {
			want = Modified
		}
		if r.req == nil && !r.retrying {
			f.request(e, key, r, want)
		}
	}
}

// readable: the applied state lets the leader serve a read (rule F2).
func (f *frontend) readable(e env.Env, r *feRow) bool {
	return r.state == Modified || r.state == Shared && e.Now() < r.leaseEnd
}

// read asks the group for a read point (ReadIndex) and serves the head's
// queued reads once this member has applied it (rule F10).
func (f *frontend) read(e env.Env, key string, r *feRow) {
	t := f.token(&wait{kind: wRead, key: key, upTo: f.nextOp})
	r.busy = t
	if f.g.Read(e, t) != nil {
		delete(f.waits, t)
		r.busy = 0
	}
}

// propose proposes cmd for the row's head; pump waits for it.
func (f *frontend) propose(e env.Env, r *feRow, cmd []byte, w *wait) {
	t := f.token(w)
	r.busy = t
	if f.g.Propose(e, cmd, t) != nil {
		delete(f.waits, t)
		if r.busy == t {
			r.busy = 0
		}
		f.backoff(e, w.key, r) // no leader, or dropped: try again later
	}
}

func (f *frontend) token(w *wait) uint64 {
	f.nextToken++
	f.waits[f.nextToken] = w
	return f.nextToken
}

func appendWrite(b []byte, req *wire.Request) []byte {
	b = wire.AppendBool(b, req.Op == wire.OpDelete)
	return wire.AppendBytes(b, req.Value)
}

func readReply(d rowData) *wire.Reply {
	rep := &wire.Reply{Found: d.Found && !d.Rec.Tombstone, Version: d.Rec.Version}
	if rep.Found {
		rep.Value = d.Rec.Value
	}
	return rep
}

// apply replaces the row's data with a write: the whole row (seed 002
// A.3, "a put replaces the whole row"), versioned (epoch, sequence, the
// region's canonical frontend).
func (f *frontend) apply(r *feRow, del bool, value []byte) wire.Version {
	seq := uint32(1)
	if v := r.data.Rec.Version; v.TS.WallNanos == int64(r.data.Epoch) && v.Node == f.fe {
		seq = v.TS.Logical + 1
	}
	v := wire.Version{Node: f.fe}
	v.TS.WallNanos, v.TS.Logical = int64(r.data.Epoch), seq
	r.data.Found = true
	r.data.Rec = store.Record{Version: v, Tombstone: del}
	if !del {
		r.data.Rec.Value = value
	}
	return v
}

// request sends request(Row, want) to the directory (Alg. 4.1 line 7).
func (f *frontend) request(e env.Env, key string, r *feRow, want State) {
	nonce := e.Rand().Uint64()
	r.req = &outReq{want: want, nonce: nonce, sentAt: e.Now(), to: f.dir.For(key).Target(),
		timer: e.SetTimer(f.ks.cfg.ResendInterval, reqTimer{key, nonce})}
	e.Send(r.req.to, &Request{Key: key, Want: want, Nonce: nonce})
}

func (f *frontend) step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *dirgroup.Fwd:
		f.onFwd(e, from, m)
	case *Busy:
		f.dir.For(m.Key).Heard(from)
		f.onBusy(e, m)
	case *Grant:
		f.dir.For(m.Key).Heard(from)
		f.onGrant(e, m)
	case *Inval:
		f.dir.For(m.Key).Heard(from)
		f.onInval(e, from, m)
	case *Sync:
		f.onSync(e, from, m)
	case *SyncResp:
		f.onSyncResp(e, m)
	}
}

// onBusy: the row is Processing at the directory; ask again after an
// exponential backoff with jitter (seed 002 §4.2.10; rule F3).
func (f *frontend) onBusy(e env.Env, m *Busy) {
	r := f.row(e, m.Key)
	if r.req == nil || r.req.nonce != m.Nonce {
		return
	}
	e.CancelTimer(r.req.timer)
	r.req = nil
	f.backoff(e, m.Key, r)
}

// onGrant takes a grant for the request in flight (rules F4, F5): it
// proposes the grant's command; the group's application checks the fence.
func (f *frontend) onGrant(e env.Env, g *Grant) {
	r := f.row(e, g.Key)
	if r.req == nil || r.req.nonce != g.Nonce || r.req.want != g.Want {
		return // a duplicate, or for a request given up
	}
	e.CancelTimer(r.req.timer)
	sentAt := r.req.sentAt
	r.req = nil
	if g.Epoch <= r.fence || r.busy != 0 {
		f.st.Touch(g.Key) // revoked before it arrived: ask again
		return
	}
	r.attempts = 0
	if g.Want == Modified && len(r.queue) > 0 && r.queue[0].req.Op != wire.OpGet {
		// A write miss needs no data: the put replaces the whole row.
		// Taking M and the write are one command, so no crash can keep
		// M with the old copy.
		op := r.queue[0]
		b := []byte{cmdGrantWrite}
		b = wire.AppendString(b, g.Key)
		b = wire.AppendUvarint(b, g.Epoch)
		b = appendWrite(b, op.req)
		f.propose(e, r, b, &wait{kind: wWrite, key: g.Key, op: op})
		return
	}
	if g.DataEpoch == r.data.Epoch || g.DataEpoch == 0 {
		// The region's copy is the grant's data: the command keeps the
		// copy it finds when applied (which has every write committed
		// before it), provided that copy is still of DataEpoch (F12).
		f.install(e, g.Key, r, g, sentAt, true, rowData{})
		return
	}
	s := &syncing{grant: g, sentAt: sentAt}
	for _, n := range g.Sources {
		if f.ks.Frontend(n) != f.fe {
			s.sources = append(s.sources, f.ks.RegionNodes(n)...)
		}
	}
	if len(s.sources) == 0 {
		f.backoff(e, g.Key, r)
		return
	}
	r.sync = s
	f.sendSync(e, g.Key, r)
}

// install proposes to enter the granted state with data d (the sync's
// result), or with the region's own copy (keep).
func (f *frontend) install(e env.Env, key string, r *feRow, g *Grant, sentAt int64, keep bool, d rowData) {
	r.sync = nil
	b := []byte{cmdInstall}
	b = wire.AppendString(b, key)
	b = wire.AppendUvarint(b, uint64(g.Want))
	b = wire.AppendUvarint(b, g.Epoch)
	b = wire.AppendUvarint(b, g.DataEpoch)
	b = wire.AppendBool(b, keep)
	b = appendData(b, d)
	f.propose(e, r, b, &wait{kind: wInstall, key: key, want: g.Want, sentAt: sentAt})
}

func (f *frontend) sendSync(e env.Env, key string, r *feRow) {
	s := r.sync
	s.nonce = e.Rand().Uint64()
	to := s.sources[s.tries%len(s.sources)]
	s.tries++
	s.timer = e.SetTimer(f.ks.cfg.ResendInterval, syncTimer{key, s.nonce})
	e.Send(to, &Sync{Key: key, Nonce: s.nonce})
}

// onSync answers with the region's copy once this member has applied
// every command committed before the Sync arrived (a ReadIndex read), so
// a lagging member or a deposed leader never hands out a copy missing a
// committed write (rule F12). Any member answers, whatever its state: the
// requester checks the data's epoch (F5).
func (f *frontend) onSync(e env.Env, from wire.NodeID, m *Sync) {
	t := f.token(&wait{kind: wSync, from: from, syncKey: m.Key, nonce: m.Nonce})
	if f.g.Read(e, t) != nil {
		delete(f.waits, t)
	}
}

// onSyncResp installs the row if the source had the grant's data, and
// otherwise tries the next source (rule F5).
func (f *frontend) onSyncResp(e env.Env, m *SyncResp) {
	r := f.row(e, m.Key)
	s := r.sync
	if s == nil || s.nonce != m.Nonce {
		return
	}
	e.CancelTimer(s.timer)
	if m.Data.Epoch == s.grant.DataEpoch {
		f.install(e, m.Key, r, s.grant, s.sentAt, false, m.Data)
		return
	}
	f.nextSource(e, m.Key, r)
}

func (f *frontend) nextSource(e env.Env, key string, r *feRow) {
	if r.sync.tries >= 2*len(r.sync.sources) {
		r.sync = nil
		f.backoff(e, key, r)
		return
	}
	f.sendSync(e, key, r)
}

// backoff asks the directory again later (rule F3).
func (f *frontend) backoff(e env.Env, key string, r *feRow) {
	if r.retrying {
		return
	}
	r.retrying = true
	d := f.ks.cfg.RetryBase << min(r.attempts, 20)
	d = min(d, f.ks.cfg.RetryMax)
	d = d/2 + time.Duration(e.Rand().Int64N(int64(d/2)+1))
	r.attempts++
	e.SetTimer(d, retryTimer{key})
}

// onInval proposes the invalidation; the member that proposed it
// acknowledges once the group applied it (rules F6, F8). A member that
// knows no leader cannot: the directory tries the region's next member.
func (f *frontend) onInval(e env.Env, from wire.NodeID, m *Inval) {
	b := []byte{cmdInval}
	b = wire.AppendString(b, m.Key)
	b = wire.AppendUvarint(b, uint64(m.To))
	b = wire.AppendUvarint(b, m.Epoch)
	t := f.token(&wait{kind: wInval, key: m.Key, from: from, at: e.Now(), epoch: m.Epoch})
	if f.g.Propose(e, b, t) != nil {
		delete(f.waits, t)
	}
}

// Apply implements rsm.StateMachine: one command, in log order, on every
// member. The result says whether it took effect (and with what).
func (f *frontend) Apply(e env.Env, index uint64, cmd []byte) []byte {
	kind, key, d, ok := dirgroup.DecodeCommand(e, "sc", index, cmd)
	if !ok {
		return nil
	}
	r := f.row(e, key)
	f.st.Touch(key)
	var res []byte
	switch kind {
	case cmdWrite:
		del, value := d.Bool(), d.Bytes()
		if d.Err() == nil && r.state == Modified {
			res = wire.AppendVersion([]byte{1}, f.apply(r, del, value))
		}
	case cmdGrantWrite:
		epoch, del, value := d.Uvarint(), d.Bool(), d.Bytes()
		if d.Err() == nil && epoch > r.fence {
			f.enter(e, r, Modified, epoch)
			r.data.Epoch = epoch
			res = wire.AppendVersion([]byte{1}, f.apply(r, del, value))
		}
	case cmdInstall:
		want, epoch, dataEpoch := decodeState(d), d.Uvarint(), d.Uvarint()
		keep, data := d.Bool(), decodeData(d)
		if keep {
			data = r.data
			if dataEpoch == 0 {
				data = rowData{}
			}
		}
		if d.Err() == nil && epoch > r.fence && data.Epoch == dataEpoch {
			f.enter(e, r, want, epoch)
			r.data = data
			if want == Modified {
				// From here on this copy is the data of epoch epoch:
				// an invalidation's ack says so (rule D5).
				r.data.Epoch = epoch
			}
			res = []byte{1}
		}
	case cmdInval:
		to, epoch := decodeState(d), d.Uvarint()
		if d.Err() == nil {
			res = f.applyInval(e, r, to, epoch)
		}
	default:
		env.Invariant(e, false, "sc: frontend command %d has unknown kind %d", index, kind)
	}
	if d.Err() != nil {
		env.Invariant(e, false, "sc: frontend command %d undecodable: %v", index, d.Err())
	}
	return res
}

// enter takes a new state under epoch: this member's lease, timed for the
// state left, is over (rule F11); a sync for a grant at or below epoch is
// moot.
func (f *frontend) enter(e env.Env, r *feRow, s State, epoch uint64) {
	r.state, r.leaseEnd = s, 0
	r.fence = max(r.fence, epoch)
	if r.sync != nil && r.sync.grant.Epoch <= epoch {
		e.CancelTimer(r.sync.timer)
		r.sync = nil
	}
}

// applyInval drops the row to to (Alg. 4.2 lines 11–12, 19–20; rules F4,
// F6). Its result is the ack's: the copy's data epoch, whether the region
// keeps it Shared, and whether this command downgraded it from M.
func (f *frontend) applyInval(e env.Env, r *feRow, to State, epoch uint64) []byte {
	if epoch < r.fence {
		// Older than a grant or invalidation already taken: the
		// directory has moved on and ignores this ack (its epoch is
		// stale).
		return appendAck(nil, r.data.Epoch, false, false)
	}
	kept, down := false, false
	switch {
	case to == Invalid:
		f.enter(e, r, Invalid, epoch)
	case r.state == Modified:
		// M→S: this copy is the row's data (write-back: sharers sync
		// from the region). The lease is the proposer's (rule F11).
		f.enter(e, r, Shared, epoch)
		kept, down = true, true
	case r.state == Shared:
		r.fence = epoch
		kept = true // a resent downgrade: the lease is not extended
	default:
		f.enter(e, r, r.state, epoch)
	}
	return appendAck(nil, r.data.Epoch, kept, down)
}

func appendAck(b []byte, dataEpoch uint64, kept, down bool) []byte {
	b = wire.AppendUvarint(b, dataEpoch)
	return wire.AppendBool(wire.AppendBool(b, kept), down)
}

// Snapshot implements rsm.StateMachine: every row's replicated state
// (state, fence, data), in key order. Leases and the leader's work are
// this member's, not encoded.
func (f *frontend) Snapshot(env.Env) []byte {
	return dirgroup.EncodeRows(f.rows, func(b []byte, r *feRow) []byte {
		b = wire.AppendUvarint(wire.AppendUvarint(b, uint64(r.state)), r.fence)
		return appendData(b, r.data)
	})
}

// Restore implements rsm.StateMachine: every row takes a Snapshot's
// replicated state as a command entering it would (enter: no lease, rule
// F11; a sync the fence makes moot ends). What a deposed leader was doing
// with a row stays for settle to end (F9): a member restores only as a
// follower, perhaps deposed within the same call.
func (f *frontend) Restore(e env.Env, data []byte) error {
	rows, err := dirgroup.DecodeRows(data, func(d *wire.Decoder) *feRow {
		return &feRow{state: decodeState(d), fence: d.Uvarint(), data: decodeData(d)}
	})
	if err != nil {
		return fmt.Errorf("sc: frontend %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(rows)) {
		r, nr := f.rows[key], rows[key]
		if r == nil {
			r = &feRow{}
			f.rows[key] = r
		}
		f.enter(e, r, nr.state, nr.fence)
		r.fence, r.data = nr.fence, nr.data
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
	if r.busy == token {
		r.busy = 0
	}
	switch w.kind {
	case wWrite:
		if len(res) == 0 {
			return // not in M when applied: the head asks for M again
		}
		d := wire.NewDecoder(res[1:])
		v := d.Version()
		if i := slices.Index(r.queue, w.op); i >= 0 {
			r.queue = slices.Delete(r.queue, i, i+1)
			f.answer(e, w.op, &wire.Reply{Version: v})
		}
	case wInstall:
		if len(res) > 0 && w.want == Shared {
			// The directory counts the lease from its grant, which
			// followed this request: L on this clock from the send
			// ends first (rule D4).
			r.leaseEnd = w.sentAt + int64(f.ks.cfg.ShareLease)
		}
	case wInval:
		d := wire.NewDecoder(res)
		dataEpoch, kept, down := d.Uvarint(), d.Bool(), d.Bool()
		if down {
			// The lease runs from the invalidation's arrival here,
			// before the ack the directory counts from (rule D4).
			r.leaseEnd = w.at + int64(f.ks.cfg.ShareLease)
		}
		e.Send(w.from, &InvalAck{Key: w.key, Epoch: w.epoch, DataEpoch: dataEpoch, Kept: kept})
	}
}

// Readable implements rsm.StateMachine: a read this member asked for may
// be served from its applied state.
func (f *frontend) Readable(e env.Env, token uint64) {
	w, ok := f.waits[token]
	if !ok {
		return
	}
	delete(f.waits, token)
	if w.kind == wSync {
		e.Send(w.from, &SyncResp{Key: w.syncKey, Nonce: w.nonce, Data: f.row(e, w.syncKey).data})
		return
	}
	r := f.row(e, w.key)
	f.st.Touch(w.key)
	if r.busy != token {
		return
	}
	r.busy = 0
	for len(r.queue) > 0 && r.queue[0].req.Op == wire.OpGet && r.queue[0].id <= w.upTo && f.readable(e, r) {
		f.answer(e, r.queue[0], readReply(r.data))
		r.queue = r.queue[1:]
	}
}

func (f *frontend) onTimer(e env.Env, payload any) {
	switch p := payload.(type) {
	case opTimer:
		r := f.row(e, p.key)
		i := slices.IndexFunc(r.queue, func(o *clientOp) bool { return o.id == p.id })
		if i < 0 {
			return
		}
		op := r.queue[i]
		r.queue = slices.Delete(r.queue, i, i+1)
		if w := f.waits[r.busy]; i == 0 && r.busy != 0 && w != nil && w.kind == wWrite && w.op == op {
			// Its command may yet be applied: the outcome is unknown.
			f.answer(e, op, &wire.Reply{Err: &wire.Error{Code: wire.ErrTimeout, Msg: "sc: write not confirmed in time (outcome unknown)"}})
		} else {
			// Never applied: a queued operation takes effect only when
			// served.
			f.answer(e, op, &wire.Reply{Err: &wire.Error{Code: wire.ErrUnavailable, Msg: "sc: row not obtained in time (not applied)"}})
		}
		f.st.Touch(p.key)
	case reqTimer:
		r := f.row(e, p.key)
		if r.req == nil || r.req.nonce != p.nonce {
			return
		}
		// No answer: the replica asked may be down or cut off; ask the
		// next (a follower forwards the request to its leader), unless a
		// leader was heard from since (F7).
		f.dir.For(p.key).Unanswered(r.req.to)
		r.req = nil
		f.st.Touch(p.key)
	case retryTimer:
		r := f.row(e, p.key)
		r.retrying = false
		f.st.Touch(p.key)
	case syncTimer:
		r := f.row(e, p.key)
		if r.sync == nil || r.sync.nonce != p.nonce {
			return
		}
		f.nextSource(e, p.key, r)
	}
}
