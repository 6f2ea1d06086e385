package dirrc

import (
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// feTick is the frontend's periodic timer: heartbeats, resends, timeouts.
type feTick struct{}

// client identifies a client at a frontend: the gateway that forwarded
// its requests (0: the frontend itself) and its ID there.
type client struct {
	gw wire.NodeID
	id wire.ClientID
}

// waiter is a client acquire waiting for the frontend's grant.
type waiter struct {
	c     client
	id    wire.RequestID
	since int64
}

// feState is where a frontend is with one row.
type feState uint8

const (
	idle      feState = iota // no hold, none asked for
	acquiring                // fe_acquire sent, waiting for the grant
	syncing                  // granted, fetching the row from the chain
	held                     // granted and current: clients may use it
)

// feRow is a frontend's state of one row (memory only: a restart drops
// every hold, doc.go "Crashes").
type feRow struct {
	state      feState
	nonce      uint64 // of the fe_acquire this hold answers
	epoch      uint64 // of the grant
	chain      []source
	chainAt    int   // the chain entry being asked
	base       int64 // when the fe_acquire was first sent
	lastSend   int64 // when fe_acquire or sync was last sent
	leaseUntil int64 // serve only before this (frontend clock)
	wanted     bool  // another frontend waits for the row
	holders    map[client]int64
	waiters    []waiter
}

// frontend is a region's frontend: it aggregates its clients' acquires
// and releases into one hold per row (thesis §4.3.1's per-row counter is
// the holder set's size) and serves their reads and writes from its store.
type frontend struct {
	ks     *Keyspace
	id     wire.NodeID
	rows   map[string]*feRow
	hbSeq  uint64
	hbSent map[uint64]hbSent
	lastTS int64
	// dir is, per directory group, the replica to send to: the last one
	// heard from as the leader, the next one after resend_interval +
	// heartbeat_interval without a word from it while the group's rows
	// are outstanding (rule R5).
	dir dirgroup.Trackers
	// inc and seq make fe_acquire nonces: inc (random per incarnation) in
	// the high 32 bits, seq counting up in the low, so the directory can
	// tell a stale fe_acquire of this incarnation (reordered, or a
	// proposal forwarded late) from a newer one (rule 3).
	inc, seq uint64
	// counters
	evictions, lapses, syncs uint64
}

// hbSent is a heartbeat sent: when, and to which directory group (each
// group's rows are heartbeated apart).
type hbSent struct {
	at  int64
	dir int
}

func newFrontend(ks *Keyspace, id wire.NodeID) *frontend {
	return &frontend{ks: ks, id: id, rows: map[string]*feRow{}, hbSent: map[uint64]hbSent{}, dir: dirgroup.NewTrackers(ks.layout)}
}

func (f *frontend) start(e env.Env) {
	f.dir.Start(e.Now())
	f.inc, f.seq = e.Rand().Uint64()>>32, 0
	e.SetTimer(f.ks.cfg.HeartbeatInterval, feTick{})
}

func (f *frontend) row(key string) *feRow {
	r := f.rows[key]
	if r == nil {
		r = &feRow{holders: map[client]int64{}}
		f.rows[key] = r
	}
	return r
}

func (f *frontend) reply(e env.Env, c client, rep *wire.Reply) {
	rep.Client = c.id
	if c.gw == 0 {
		e.Reply(rep)
		return
	}
	m := &FwdReply{ID: rep.ID, Client: c.id, Found: rep.Found, Value: rep.Value, Version: rep.Version}
	if rep.Err != nil {
		m.Code, m.Msg = rep.Err.Code, rep.Err.Msg
	}
	e.Send(c.gw, m)
}

// servable: the row is held and its lease has not run out (rule 6).
func (f *frontend) servable(r *feRow, now int64) bool {
	return r.state == held && now < r.leaseUntil
}

// request serves one client request (rules 1, 2, 6, 8).
func (f *frontend) request(e env.Env, c client, id wire.RequestID, op wire.Op, key string, value []byte) {
	now := e.Now()
	fail := func(code wire.ErrorCode, format string, args ...any) {
		f.reply(e, c, &wire.Reply{ID: id, Err: errReply(code, format, args...)})
	}
	switch op {
	case wire.OpAcquire, wire.OpRelease, wire.OpGet, wire.OpPut, wire.OpDelete:
	default:
		fail(wire.ErrInvalid, "rc: unknown operation %s (rc serves acquire, release, get, put, delete)", op)
		return
	}
	r := f.row(key)
	_, holding := r.holders[c]
	switch op {
	case wire.OpAcquire:
		switch {
		case holding:
			r.holders[c] = now
			f.reply(e, c, &wire.Reply{ID: id})
		case f.servable(r, now) && !r.wanted && len(r.waiters) == 0:
			r.holders[c] = now
			f.reply(e, c, &wire.Reply{ID: id})
		default:
			r.waiters = append(r.waiters, waiter{c, id, now})
			if r.state == idle {
				f.startAcquire(e, key, r)
			}
		}
	case wire.OpRelease:
		if !holding {
			fail(wire.ErrInvalid, "rc: release of %q without a hold (never acquired, already released, or released for the client after hold_timeout without requests)", key)
			return
		}
		delete(r.holders, c)
		f.reply(e, c, &wire.Reply{ID: id})
		f.maybeRelease(e, key, r)
	default:
		if !holding {
			fail(wire.ErrInvalid, "rc: %s of %q outside a hold: acquire it first (a hold ends at release, after hold_timeout without requests, or when the frontend loses the row)", op, key)
			return
		}
		if !f.servable(r, now) {
			f.lapse(e, key, r)
			fail(wire.ErrUnavailable, "rc: the frontend's hold on %q lapsed (no heartbeat answer from the directory); acquire it again", key)
			return
		}
		r.holders[c] = now
		if op == wire.OpGet {
			rec, found, ok := get(e, rowKey(key))
			if !ok {
				return
			}
			f.reply(e, c, &wire.Reply{ID: id, Found: found && !rec.Tombstone, Value: rec.Value, Version: rec.Version})
			return
		}
		f.lastTS = max(f.lastTS+1, e.Wall())
		rec := store.Record{Value: value, Tombstone: op == wire.OpDelete,
			Version: wire.Version{TS: hlc.Timestamp{WallNanos: f.lastTS}, Node: f.id}}
		if op == wire.OpDelete {
			rec.Value = nil
		}
		if put(e, rowKey(key), rec) {
			f.reply(e, c, &wire.Reply{ID: id, Version: rec.Version})
		}
	}
}

// startAcquire sends fe_acquire under a fresh nonce (rule 3).
func (f *frontend) startAcquire(e env.Env, key string, r *feRow) {
	now := e.Now()
	f.seq++
	r.state, r.nonce, r.base, r.lastSend, r.wanted = acquiring, f.inc<<32|f.seq&(1<<32-1)|1<<31, now, now, false
	e.Send(f.dir.For(key).Target(), &FeAcquire{Key: key, Nonce: r.nonce, Sent: now})
}

// maybeRelease sends fe_release once the last client released (the
// thesis's counter reaching zero), then queues again if clients wait.
func (f *frontend) maybeRelease(e env.Env, key string, r *feRow) {
	if r.state != held || len(r.holders) > 0 {
		return
	}
	e.Send(f.dir.For(key).Target(), &FeRelease{Key: key, Nonce: r.nonce, Epoch: r.epoch, Current: true})
	r.state, r.nonce, r.chain, r.wanted = idle, 0, nil, false
	if len(r.waiters) > 0 {
		f.startAcquire(e, key, r)
	}
}

// lapse drops a hold the frontend may no longer serve: its clients lose
// the row (their later accesses are refused) and waiting clients queue
// again.
func (f *frontend) lapse(e env.Env, key string, r *feRow) {
	if r.state == idle {
		return
	}
	f.lapses++
	clear(r.holders)
	r.state, r.nonce, r.chain, r.wanted = idle, 0, nil, false
	if len(r.waiters) > 0 {
		f.startAcquire(e, key, r)
	}
}

// onGrant starts the lazy sync at acquire (rule 5).
func (f *frontend) onGrant(e env.Env, from wire.NodeID, m *Grant) {
	f.dir.For(m.Key).HeardAt(from, e.Now())
	r := f.rows[m.Key]
	if r == nil || r.nonce != m.Nonce {
		// A grant for an attempt this frontend gave up (a duplicated
		// fe_acquire queued it again): hand it back unused.
		e.Send(f.dir.For(m.Key).Target(), &FeRelease{Key: m.Key, Nonce: m.Nonce, Epoch: m.Epoch})
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
	r.state, r.epoch, r.chain, r.chainAt = syncing, m.Epoch, m.Chain, 0
	r.leaseUntil = start + int64(f.ks.feLease())
	f.advanceSync(e, m.Key, r)
}

// advanceSync asks the chain's entries, newest first, for a copy current
// as of their epoch; its own entries it checks in its store. Past the end
// of the chain no one ever wrote the row: the preloaded copy is current.
func (f *frontend) advanceSync(e env.Env, key string, r *feRow) {
	for r.chainAt < len(r.chain) && !f.ks.cfg.noSync {
		s := r.chain[r.chainAt]
		if s.FE != f.id {
			r.lastSend = e.Now()
			e.Send(s.FE, &SyncReq{Key: key, Epoch: r.epoch, Want: s.Epoch})
			return
		}
		cur, ok := f.curEpoch(e, key)
		if !ok {
			return
		}
		if cur >= s.Epoch {
			break // the thesis's "unless it was itself the previous releaser"
		}
		r.chainAt++
	}
	f.finishSync(e, key, r)
}

func (f *frontend) onSyncResp(e env.Env, from wire.NodeID, m *SyncResp) {
	r := f.rows[m.Key]
	if r == nil || r.state != syncing || m.Epoch != r.epoch || r.chainAt >= len(r.chain) ||
		r.chain[r.chainAt] != (source{from, m.Want}) {
		return
	}
	if !m.Current {
		r.chainAt++
		f.advanceSync(e, m.Key, r)
		return
	}
	rec := m.Rec
	if !m.Found {
		rec = store.Record{Tombstone: true}
	}
	if !put(e, rowKey(m.Key), rec) {
		return
	}
	f.syncs++
	f.finishSync(e, m.Key, r)
}

// finishSync records the copy current as of the grant's epoch (persisted
// before any client is answered) and admits the waiting clients.
func (f *frontend) finishSync(e env.Env, key string, r *feRow) {
	if !put(e, metaKey(key), store.Record{Value: wire.AppendUvarint(nil, r.epoch)}) {
		return
	}
	r.state = held
	now := e.Now()
	if !f.servable(r, now) {
		f.lapse(e, key, r)
		return
	}
	for _, w := range r.waiters {
		r.holders[w.c] = now
		f.reply(e, w.c, &wire.Reply{ID: w.id})
	}
	r.waiters = r.waiters[:0]
	f.maybeRelease(e, key, r)
}

// curEpoch is the epoch the frontend's copy of key is current as of (0:
// the preloaded copy).
func (f *frontend) curEpoch(e env.Env, key string) (uint64, bool) {
	rec, found, ok := get(e, metaKey(key))
	if !ok || !found {
		return 0, ok
	}
	d := wire.NewDecoder(rec.Value)
	v := d.Uvarint()
	if d.Err() != nil {
		e.FailStop(d.Err())
		return 0, false
	}
	return v, true
}

// onSyncReq answers a later holder with this frontend's copy (rule 5). A
// request from a grant newer than this frontend's own hold means the
// directory ended that hold, which it does only after this frontend's
// lease ran out (rule 7): asserted, then the hold is dropped.
func (f *frontend) onSyncReq(e env.Env, from wire.NodeID, m *SyncReq) {
	if r := f.rows[m.Key]; r != nil && (r.state == held || r.state == syncing) {
		if r.epoch >= m.Epoch {
			return // a stale request from an earlier holder
		}
		if !env.Invariant(e, e.Now() >= r.leaseUntil, "rc: %q: sync for epoch %d while holding epoch %d with %dns of lease left",
			m.Key, m.Epoch, r.epoch, r.leaseUntil-e.Now()) {
			return
		}
		f.lapse(e, m.Key, r)
	}
	cur, ok := f.curEpoch(e, m.Key)
	if !ok {
		return
	}
	resp := &SyncResp{Key: m.Key, Epoch: m.Epoch, Want: m.Want, Current: cur >= m.Want}
	if resp.Current {
		rec, found, ok := get(e, rowKey(m.Key))
		if !ok {
			return
		}
		resp.Found, resp.Rec = found && !rec.Tombstone, rec
	}
	e.Send(from, resp)
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

// tick heartbeats the holds, releases the rows of clients that stopped
// sending requests (rule 8), refuses acquires that waited too long, drops
// lapsed holds and resends what may have been lost.
func (f *frontend) tick(e env.Env) {
	cfg := f.ks.cfg
	e.SetTimer(cfg.HeartbeatInterval, feTick{})
	now := e.Now()
	keys := make([]string, 0, len(f.rows))
	for k := range f.rows { // lint:order-independent: the keys are sorted next
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Nothing from a group's replica asked while its rows are
	// outstanding: it may be down, cut off or no longer the leader.
	f.dir.NextIfSilent(now, int64(cfg.ResendInterval+cfg.HeartbeatInterval), keys)
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
			f.reply(e, w.c, &wire.Reply{ID: w.id, Err: errReply(wire.ErrUnavailable, "rc: acquire of %q not granted within acquire_timeout (%s)", k, cfg.AcquireTimeout)})
			return true
		})
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
		case idle:
			if len(r.holders) == 0 && len(r.waiters) == 0 {
				delete(f.rows, k)
			}
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
