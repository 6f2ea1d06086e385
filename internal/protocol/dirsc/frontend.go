package dirsc

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// frontend is a region's frontend (seed 002 §4.2.7, Alg. 4.1): the only
// node of its region that serves the keyspace's rows, holding each in M, S
// or I with its data in its store.
type frontend struct {
	ks   *Keyspace
	id   wire.NodeID
	rows map[string]*feRow
	// seen remembers forwarded requests already taken (gateway, id → when),
	// so a duplicated Fwd is not applied twice.
	seen    map[fwdKey]int64
	nextOp  uint64
	scratch []wire.NodeID
	// dir is, per directory group, the replica requests go to: the last
	// one heard from (grants, busy answers and invalidations come from
	// the leader), the next one after a request went unanswered (F7).
	dir dirgroup.Trackers
}

type fwdKey struct {
	from wire.NodeID
	id   uint64
}

// feRow is one row at a frontend. state, fence and data are durable;
// the rest is in memory only.
type feRow struct {
	state State
	// fence is the highest epoch of a grant or invalidation this frontend
	// has taken: a grant of an epoch at or below it is stale (rule F4).
	fence uint64
	data  rowData
	// leaseEnd: in S, reads are served locally while Now < leaseEnd.
	leaseEnd int64
	// queue is the row lock of Alg. 4.1: client operations wait here,
	// in arrival order, and are served one at a time.
	queue    []*clientOp
	req      *outReq  // the request to the directory in flight
	sync     *syncing // a grant whose data is being fetched
	attempts int      // busy answers since the last grant (backoff)
	retrying bool     // a backoff timer is pending
}

type clientOp struct {
	id    uint64
	req   *wire.Request
	fwd   bool
	from  wire.NodeID // fwd: the gateway
	fwdID uint64
	timer env.TimerID
}

type outReq struct {
	want   State
	nonce  uint64
	sentAt int64
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

func newFrontend(ks *Keyspace, id wire.NodeID) *frontend {
	return &frontend{ks: ks, id: id, rows: make(map[string]*feRow), seen: make(map[fwdKey]int64), dir: dirgroup.NewTrackers(ks.layout)}
}

func (f *frontend) start(e env.Env) { f.nextOp = e.Rand().Uint64() >> 1 }

// row returns key's row, reading it from the store the first time. After
// a restart no lease is held: leases are measured on a clock the previous
// incarnation's readings cannot be compared with.
func (f *frontend) row(e env.Env, key string) *feRow {
	if r, ok := f.rows[key]; ok {
		return r
	}
	r := &feRow{}
	if rec, ok := get(e, feKey(key)); ok {
		d := wire.NewDecoder(rec.Value)
		r.state, r.fence, r.data = decodeState(d), d.Uvarint(), decodeData(d)
		if d.Err() != nil {
			env.Invariant(e, false, "sc: frontend row %q undecodable: %v", key, d.Err())
		}
	} else if f.ks.loader() == f.id {
		if data, ok := loaded(e, key); ok {
			r.state, r.data = Modified, data
		}
	}
	f.rows[key] = r
	return r
}

// save makes r's durable part durable (before anything it implies is sent).
func (f *frontend) save(e env.Env, key string, r *feRow) bool {
	b := append([]byte{byte(r.state)}, wire.AppendUvarint(nil, r.fence)...)
	b = appendData(b, r.data)
	return put(e, feKey(key), store.Record{Value: b, Version: r.data.Rec.Version})
}

// submit queues a client operation on its row (the row lock) and serves
// what it can.
func (f *frontend) submit(e env.Env, op *clientOp) {
	f.nextOp++
	op.id = f.nextOp
	op.timer = e.SetTimer(f.ks.cfg.OpTimeout, opTimer{op.req.Key, op.id})
	r := f.row(e, op.req.Key)
	r.queue = append(r.queue, op)
	f.pump(e, op.req.Key, r)
}

func (f *frontend) onFwd(e env.Env, from wire.NodeID, m *Fwd) {
	k := fwdKey{from, m.ID}
	if _, dup := f.seen[k]; dup {
		return
	}
	now := e.Now()
	if len(f.seen) >= 4096 {
		// Forget what no duplicate can still follow: a copy arrives
		// within a network delay of the original (doc.go, "Guarantee").
		horizon := now - int64(4*(f.ks.cfg.OpTimeout+f.ks.cfg.ResendInterval))
		for k, at := range f.seen { // lint:order-independent: deletes every old entry
			if at < horizon {
				delete(f.seen, k)
			}
		}
	}
	f.seen[k] = now
	f.submit(e, &clientOp{req: &wire.Request{Op: m.Op, Key: m.Key, Value: m.Value}, fwd: true, from: from, fwdID: m.ID})
}

func (f *frontend) reply(e env.Env, op *clientOp, rep *wire.Reply) {
	e.CancelTimer(op.timer)
	if !op.fwd {
		rep.ID, rep.Client = op.req.ID, op.req.Client
		e.Reply(rep)
		return
	}
	m := &FwdReply{ID: op.fwdID, Found: rep.Found, Value: rep.Value, Version: rep.Version}
	if rep.Err != nil {
		m.Code, m.Msg = rep.Err.Code, rep.Err.Msg
	}
	e.Send(op.from, m)
}

// pump serves the row's queue from its head while the local state allows
// (rules F1, F2), and otherwise makes sure a request for the state the head
// needs is on its way.
func (f *frontend) pump(e env.Env, key string, r *feRow) {
	for len(r.queue) > 0 && r.sync == nil {
		op := r.queue[0]
		read := op.req.Op == wire.OpGet
		switch {
		case read && (r.state == Modified || r.state == Shared && e.Now() < r.leaseEnd):
			f.reply(e, op, readReply(r.data))
		case !read && r.state == Modified:
			if !f.write(e, key, r, op) {
				return
			}
		default:
			want := Shared
			if !read {
				want = Modified
			}
			if r.req == nil && !r.retrying {
				f.request(e, key, r, want)
			}
			return
		}
		r.queue = r.queue[1:]
	}
}

func readReply(d rowData) *wire.Reply {
	rep := &wire.Reply{Found: d.Found && !d.Rec.Tombstone, Version: d.Rec.Version}
	if rep.Found {
		rep.Value = d.Rec.Value
	}
	return rep
}

// write applies op in M: the whole row is replaced (seed 002 A.3, "a put
// replaces the whole row"), versioned (epoch, sequence, this frontend).
func (f *frontend) write(e env.Env, key string, r *feRow, op *clientOp) bool {
	v := f.apply(r, op)
	if !f.save(e, key, r) {
		return false
	}
	f.reply(e, op, &wire.Reply{Version: v})
	return true
}

// apply replaces the row's data in memory with op's write.
func (f *frontend) apply(r *feRow, op *clientOp) wire.Version {
	seq := uint32(1)
	if v := r.data.Rec.Version; v.TS.WallNanos == int64(r.data.Epoch) && v.Node == f.id {
		seq = v.TS.Logical + 1
	}
	v := wire.Version{Node: f.id}
	v.TS.WallNanos, v.TS.Logical = int64(r.data.Epoch), seq
	r.data.Found = true
	r.data.Rec = store.Record{Version: v, Tombstone: op.req.Op == wire.OpDelete}
	if !r.data.Rec.Tombstone {
		r.data.Rec.Value = op.req.Value
	}
	return v
}

// request sends request(Row, want) to the directory (Alg. 4.1 line 7).
func (f *frontend) request(e env.Env, key string, r *feRow, want State) {
	nonce := e.Rand().Uint64()
	r.req = &outReq{want: want, nonce: nonce, sentAt: e.Now(),
		timer: e.SetTimer(f.ks.cfg.ResendInterval, reqTimer{key, nonce})}
	e.Send(f.dir.For(key).Target(), &Request{Key: key, Want: want, Nonce: nonce})
}

// heard notes that directory replica n acts as the leader of key's
// directory group (rule F7).
func (f *frontend) heard(key string, n wire.NodeID) {
	f.dir.For(key).Heard(n)
}

func (f *frontend) step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *Fwd:
		f.onFwd(e, from, m)
	case *Busy:
		f.heard(m.Key, from)
		f.onBusy(e, m)
	case *Grant:
		f.heard(m.Key, from)
		f.onGrant(e, m)
	case *Inval:
		f.heard(m.Key, from)
		f.onInval(e, from, m)
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

// onGrant takes a grant for the request in flight (rules F4, F5).
func (f *frontend) onGrant(e env.Env, g *Grant) {
	r := f.row(e, g.Key)
	if r.req == nil || r.req.nonce != g.Nonce || r.req.want != g.Want {
		return // a duplicate, or for a request given up
	}
	e.CancelTimer(r.req.timer)
	sentAt := r.req.sentAt
	r.req = nil
	if g.Epoch <= r.fence {
		f.pump(e, g.Key, r) // revoked before it arrived: ask again
		return
	}
	r.attempts = 0
	if g.Want == Modified && len(r.queue) > 0 && r.queue[0].req.Op != wire.OpGet {
		// A write miss needs no data: the put replaces the whole row.
		// The new state and the write are stored in one put, so no
		// crash can keep M with the old copy (a torn crash keeps a
		// prefix of a handler's writes).
		op := r.queue[0]
		r.sync, r.state, r.leaseEnd = nil, Modified, 0
		r.fence = max(r.fence, g.Epoch)
		r.data.Epoch = g.Epoch
		v := f.apply(r, op)
		if !f.save(e, g.Key, r) {
			return
		}
		r.queue = r.queue[1:]
		f.reply(e, op, &wire.Reply{Version: v})
		f.pump(e, g.Key, r)
		return
	}
	if g.DataEpoch == r.data.Epoch || g.DataEpoch == 0 {
		d := r.data
		if g.DataEpoch == 0 {
			d = rowData{}
		}
		f.install(e, g.Key, r, g, sentAt, d)
		return
	}
	s := &syncing{grant: g, sentAt: sentAt}
	for _, n := range g.Sources {
		if n != f.id {
			s.sources = append(s.sources, n)
		}
	}
	if len(s.sources) == 0 {
		f.backoff(e, g.Key, r)
		return
	}
	r.sync = s
	f.sendSync(e, g.Key, r)
}

// install enters the granted state with data d (the sync's result, or
// what the frontend already holds).
func (f *frontend) install(e env.Env, key string, r *feRow, g *Grant, sentAt int64, d rowData) {
	r.sync = nil
	r.fence = max(r.fence, g.Epoch)
	r.data = d
	r.state = g.Want
	r.leaseEnd = 0
	if g.Want == Modified {
		// From here on this copy is the data of epoch g.Epoch: an
		// invalidation's ack says so (rule D5).
		r.data.Epoch = g.Epoch
	} else {
		// The directory counts the lease from its grant, which followed
		// this request: L on this clock from the send ends first (D4).
		r.leaseEnd = sentAt + int64(f.ks.cfg.ShareLease)
	}
	if !f.save(e, key, r) {
		return
	}
	f.pump(e, key, r)
}

func (f *frontend) sendSync(e env.Env, key string, r *feRow) {
	s := r.sync
	s.nonce = e.Rand().Uint64()
	to := s.sources[s.tries%len(s.sources)]
	s.tries++
	s.timer = e.SetTimer(f.ks.cfg.ResendInterval, syncTimer{key, s.nonce})
	e.Send(to, &Sync{Key: key, Nonce: s.nonce})
}

func (f *frontend) onSync(e env.Env, from wire.NodeID, m *Sync) {
	r := f.row(e, m.Key)
	e.Send(from, &SyncResp{Key: m.Key, Nonce: m.Nonce, Data: r.data})
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
		f.install(e, m.Key, r, s.grant, s.sentAt, m.Data)
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

// onInval drops the row to m.To and acknowledges once that is durable
// (Alg. 4.2 lines 11–12, 19–20; rules F4, F6).
func (f *frontend) onInval(e env.Env, from wire.NodeID, m *Inval) {
	r := f.row(e, m.Key)
	if m.Epoch < r.fence {
		// Older than a grant or invalidation already taken: the directory
		// has moved on and ignores this ack (its epoch is stale).
		e.Send(from, &InvalAck{Key: m.Key, Epoch: m.Epoch, DataEpoch: r.data.Epoch})
		return
	}
	r.fence = m.Epoch
	if r.sync != nil {
		// The grant being synced is revoked (its epoch ≤ m.Epoch).
		e.CancelTimer(r.sync.timer)
		r.sync = nil
	}
	kept := false
	switch {
	case m.To == Invalid:
		r.state, r.leaseEnd = Invalid, 0
	case r.state == Modified:
		// M→S: this copy is the row's data (write-back: it is durable
		// here and sharers sync from it). The lease runs from now,
		// before the ack the directory counts from (rule D4).
		r.state, r.leaseEnd = Shared, e.Now()+int64(f.ks.cfg.ShareLease)
		kept = true
	case r.state == Shared:
		kept = true // a resent downgrade: the lease is not extended
	}
	if !f.save(e, m.Key, r) {
		return
	}
	e.Send(from, &InvalAck{Key: m.Key, Epoch: m.Epoch, DataEpoch: r.data.Epoch, Kept: kept})
	f.pump(e, m.Key, r)
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
		// Never applied: a queued operation takes effect only when served.
		f.reply(e, op, &wire.Reply{Err: &wire.Error{Code: wire.ErrUnavailable, Msg: "sc: row not obtained in time (not applied)"}})
		f.pump(e, p.key, r)
	case reqTimer:
		r := f.row(e, p.key)
		if r.req == nil || r.req.nonce != p.nonce {
			return
		}
		r.req = nil
		// No answer: the replica asked may be down or cut off; ask the
		// next (a follower forwards the request to its leader).
		f.dir.For(p.key).Next()
		f.pump(e, p.key, r)
	case retryTimer:
		r := f.row(e, p.key)
		r.retrying = false
		f.pump(e, p.key, r)
	case syncTimer:
		r := f.row(e, p.key)
		if r.sync == nil || r.sync.nonce != p.nonce {
			return
		}
		f.nextSource(e, p.key, r)
	}
}
