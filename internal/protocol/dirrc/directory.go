package dirrc

import (
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// dirTick is the directory's periodic timer: it forces the release of
// heads whose holder stopped heartbeating (rule 7).
type dirTick struct{}

// entry is one frontend in a row's FIFO queue.
type entry struct {
	FE    wire.NodeID
	Nonce uint64
}

// dirRow is the directory's state of one row. Everything but deadline is
// persisted before any grant leaves (persist before send).
type dirRow struct {
	epoch     uint64   // of the newest grant
	confirmed bool     // the head reported its copy current as of epoch
	queue     []entry  // FIFO: queue[0] holds the row
	chain     []source // where the head syncs from, newest first
	deadline  int64    // head's forced release, directory clock (memory only)
}

// maxChain bounds a row's sync chain. The chain only grows past one entry
// while heads leave without reporting their copy current (they crashed or
// lapsed mid-sync); the oldest entries go first.
const maxChain = 32

// directory is the central directory (thesis §4.3.1: a FIFO queue per
// row). It runs on one node and keeps its rows in that node's store: a
// crash makes it unavailable until the node restarts (doc.go, "Crashes").
type directory struct {
	ks     *Keyspace
	id     wire.NodeID
	rows   map[string]*dirRow
	forced uint64 // forced releases (counter)
}

func newDirectory(ks *Keyspace, id wire.NodeID) *directory {
	return &directory{ks: ks, id: id, rows: map[string]*dirRow{}}
}

func (d *directory) start(e env.Env) {
	e.SetTimer(d.ks.cfg.HeartbeatInterval, dirTick{})
}

// row returns key's state, loading it from the store on first use after a
// (re)start; a loaded head gets a full lease from now, since its holder may
// have heartbeated just before the crash. nil: the store failed.
func (d *directory) row(e env.Env, key string) *dirRow {
	if r := d.rows[key]; r != nil {
		return r
	}
	rec, found, ok := get(e, dirKey(key))
	if !ok {
		return nil
	}
	r := &dirRow{deadline: e.Now() + int64(d.ks.cfg.HoldLease)}
	if found {
		dec := wire.NewDecoder(rec.Value)
		r.epoch, r.confirmed = dec.Uvarint(), dec.Bool()
		n := listLen(dec)
		for i := 0; i < n && dec.Err() == nil; i++ {
			r.queue = append(r.queue, entry{FE: wire.NodeID(dec.Uvarint()), Nonce: dec.Uvarint()})
		}
		r.chain = decodeSources(dec)
		if err := dec.Err(); err != nil {
			e.FailStop(err)
			return nil
		}
	}
	d.rows[key] = r
	return r
}

func (d *directory) persist(e env.Env, key string, r *dirRow) bool {
	b := wire.AppendBool(wire.AppendUvarint(nil, r.epoch), r.confirmed)
	b = wire.AppendUvarint(b, uint64(len(r.queue)))
	for _, q := range r.queue {
		b = wire.AppendUvarint(wire.AppendUvarint(b, uint64(q.FE)), q.Nonce)
	}
	b = appendSources(b, r.chain)
	return put(e, dirKey(key), store.Record{Value: b})
}

// onAcquire: fe_acquire enqueues the frontend (rule 3). A frontend already
// queued under another nonce has given up that place (it released, lapsed
// or restarted): if it was the head this is its release, and it goes to the
// back of the queue.
func (d *directory) onAcquire(e env.Env, from wire.NodeID, m *FeAcquire) {
	r := d.row(e, m.Key)
	if r == nil {
		return
	}
	i := slices.IndexFunc(r.queue, func(q entry) bool { return q.FE == from })
	switch {
	case i < 0:
		r.queue = append(r.queue, entry{from, m.Nonce})
		if len(r.queue) == 1 {
			d.grantHead(e, m.Key, r)
		} else {
			d.persist(e, m.Key, r)
		}
	case r.queue[i].Nonce == m.Nonce:
		if i == 0 { // the grant was lost: send it again
			e.Send(from, &Grant{Key: m.Key, Nonce: m.Nonce, Epoch: r.epoch, Chain: r.chain})
		}
	case i == 0:
		d.dequeueHead(r)
		r.queue = append(r.queue, entry{from, m.Nonce})
		d.grantHead(e, m.Key, r)
	default:
		r.queue[i].Nonce = m.Nonce
		d.persist(e, m.Key, r)
	}
}

// onRelease: fe_release dequeues the head and grants the next (rules 4, 5).
func (d *directory) onRelease(e env.Env, from wire.NodeID, m *FeRelease) {
	r := d.row(e, m.Key)
	if r == nil || len(r.queue) == 0 || r.queue[0] != (entry{from, m.Nonce}) || m.Epoch != r.epoch {
		// Stale or duplicate. The epoch matters: a duplicated fe_acquire
		// can queue a nonce again after its release, and that grant's
		// epoch was never served (seed 628 of TestSwarm).
		return
	}
	r.confirmed = r.confirmed || m.Current
	d.dequeueHead(r)
	d.grantNext(e, m.Key, r)
}

// dequeueHead removes the head and records it as the newest sync source:
// alone if it reported its copy current, else ahead of the older sources
// (it may have written nothing, rule 5).
func (d *directory) dequeueHead(r *dirRow) {
	h := source{FE: r.queue[0].FE, Epoch: r.epoch}
	if r.confirmed {
		r.chain = []source{h}
	} else {
		r.chain = append([]source{h}, r.chain...)
		if len(r.chain) > maxChain {
			r.chain = r.chain[:maxChain]
		}
	}
	r.queue = slices.Delete(r.queue, 0, 1)
	r.confirmed = false
}

func (d *directory) grantNext(e env.Env, key string, r *dirRow) {
	if len(r.queue) > 0 {
		d.grantHead(e, key, r)
	} else {
		d.persist(e, key, r)
	}
}

// grantHead grants the row to the head of the queue at a new epoch, naming
// the sync chain (rule 4).
func (d *directory) grantHead(e env.Env, key string, r *dirRow) {
	r.epoch++
	r.confirmed = false
	r.deadline = e.Now() + int64(d.ks.cfg.HoldLease)
	if !d.persist(e, key, r) {
		return
	}
	h := r.queue[0]
	e.Send(h.FE, &Grant{Key: key, Nonce: h.Nonce, Epoch: r.epoch, Chain: slices.Clone(r.chain)})
}

// onHeartbeat renews the heads among a frontend's holds (rule 7) and tells
// it which rows others wait for.
func (d *directory) onHeartbeat(e env.Env, from wire.NodeID, m *Heartbeat) {
	ack := &HeartbeatAck{Seq: m.Seq}
	for _, h := range m.Holds {
		r := d.row(e, h.Key)
		if r == nil {
			return
		}
		if len(r.queue) == 0 || r.queue[0] != (entry{from, h.Nonce}) || h.Epoch != r.epoch {
			continue
		}
		r.deadline = e.Now() + int64(d.ks.cfg.HoldLease)
		if h.Current && !r.confirmed {
			r.confirmed = true
			if !d.persist(e, h.Key, r) {
				return
			}
		}
		ack.Holds = append(ack.Holds, hold{Key: h.Key, Nonce: h.Nonce, Current: h.Current, Wanted: len(r.queue) > 1})
	}
	e.Send(from, ack)
}

// tick forces the release of every head that has not heartbeated for
// hold_lease (rule 7: the thesis's proposed heartbeat and timeout).
func (d *directory) tick(e env.Env) {
	e.SetTimer(d.ks.cfg.HeartbeatInterval, dirTick{})
	now := e.Now()
	keys := make([]string, 0, len(d.rows))
	for k, r := range d.rows { // lint:order-independent: the keys are sorted next
		if len(r.queue) > 0 && r.deadline <= now {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := d.rows[k]
		d.forced++
		e.Log().Debug("rc: forced release", "key", k, "holder", r.queue[0].FE, "epoch", r.epoch)
		d.dequeueHead(r)
		d.grantNext(e, k, r)
	}
}
