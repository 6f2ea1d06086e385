package dirsc

import (
	"maps"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// directory is the central directory (seed 002 §4.2.6, Alg. 4.2): per row
// its state, owner and copy set, and which frontends hold the row's
// current data. No data passes through it. Every change of a row is one
// deterministic transition taken in arrival order and persisted before
// anything it implies is sent, so the directory can later run as commands
// of a replicated state machine.
type directory struct {
	ks   *Keyspace
	id   wire.NodeID
	boot int64
	rows map[string]*dirRow
}

// dirRow is one row at the directory. The first six fields are durable.
type dirRow struct {
	state State
	owner wire.NodeID // M: the owner
	// epoch counts grants; every grant but an owner's re-grant takes a
	// new one, and invalidations carry the current one (rule D2).
	epoch uint64
	// dataEpoch is the epoch whose data is the row's current value as far
	// as confirmed (0: never written); sources hold it.
	dataEpoch uint64
	sources   []wire.NodeID
	sharers   []wire.NodeID // S: the copy set
	// leases: for each sharer, when (on this clock) its lease is over for
	// sure (rule D4).
	leases map[wire.NodeID]int64
	// proc is the request being processed: the Processing state of Alg.
	// 4.2, never stored, so a crash leaves the saved state (rule D3).
	proc *proc
}

type proc struct {
	requester wire.NodeID
	want      State
	nonce     uint64
	to        State
	epoch     uint64
	waiting   []wire.NodeID
	acks      map[wire.NodeID]*InvalAck
	ackedAt   map[wire.NodeID]int64
	timer     env.TimerID
}

type dirTimer struct{ key string }

func newDirectory(ks *Keyspace, id wire.NodeID) *directory {
	return &directory{ks: ks, id: id, rows: make(map[string]*dirRow)}
}

func (d *directory) start(e env.Env) { d.boot = e.Now() }

// row returns key's entry, reading it from the store the first time. A
// sharer's lease may have been granted just before a crash: it is over
// for sure a stretched lease after boot.
func (d *directory) row(e env.Env, key string) *dirRow {
	if r, ok := d.rows[key]; ok {
		return r
	}
	r := &dirRow{leases: make(map[wire.NodeID]int64)}
	if rec, ok := get(e, dirKey(key)); ok {
		dec := wire.NewDecoder(rec.Value)
		r.state, r.owner = decodeState(dec), wire.NodeID(dec.Varint())
		r.epoch, r.dataEpoch = dec.Uvarint(), dec.Uvarint()
		r.sources, r.sharers = decodeNodes(dec), decodeNodes(dec)
		if dec.Err() != nil {
			env.Invariant(e, false, "sc: directory row %q undecodable: %v", key, dec.Err())
		}
	} else if _, ok := loaded(e, key); ok {
		// Preloaded rows are Modified at the loader (seed 002 §5).
		r.state, r.owner, r.epoch, r.dataEpoch = Modified, d.ks.loader(), loadEpoch, loadEpoch
		r.sources = []wire.NodeID{d.ks.loader()}
	}
	for _, s := range r.sharers {
		r.leases[s] = d.boot + int64(d.ks.cfg.stretchedLease())
	}
	d.rows[key] = r
	return r
}

func (d *directory) save(e env.Env, key string, r *dirRow) bool {
	b := []byte{byte(r.state)}
	b = wire.AppendVarint(b, int64(r.owner))
	b = wire.AppendUvarint(b, r.epoch)
	b = wire.AppendUvarint(b, r.dataEpoch)
	b = appendNodes(b, r.sources)
	b = appendNodes(b, r.sharers)
	return put(e, dirKey(key), store.Record{Value: b})
}

// onRequest is Alg. 4.2 with its gaps closed (doc.go, rules D1–D6).
func (d *directory) onRequest(e env.Env, from wire.NodeID, m *Request) {
	r := d.row(e, m.Key)
	if p := r.proc; p != nil {
		if p.requester == from && p.want == m.Want {
			p.nonce = m.Nonce // a resend: answer the latest
			return
		}
		e.Send(from, &Busy{Key: m.Key, Nonce: m.Nonce}) // Alg. 4.2 line 6
		return
	}
	p := &proc{requester: from, want: m.Want, nonce: m.Nonce, epoch: r.epoch,
		acks: make(map[wire.NodeID]*InvalAck), ackedAt: make(map[wire.NodeID]int64)}
	switch {
	case m.Want == Modified && r.state == Modified && r.owner == from:
		// The owner lost its grant (or this is a stale copy of its
		// request): the same grant again, same epoch (rule D2).
		e.Send(from, &Grant{Key: m.Key, Want: Modified, Nonce: m.Nonce, Epoch: r.epoch,
			DataEpoch: r.dataEpoch, Sources: without(r.sources, from)})
		return
	case m.Want == Modified && r.state == Shared:
		// The requester is left out of its own invalidation set (rule D6).
		p.to, p.waiting = Invalid, without(r.sharers, from)
	case m.Want == Modified && r.state == Modified:
		p.to, p.waiting = Invalid, []wire.NodeID{r.owner}
	case m.Want == Shared && r.state == Modified:
		// Downgrade the owner, even when it is the requester: it may
		// have taken the grant after all (rule D6).
		p.to, p.waiting = Shared, []wire.NodeID{r.owner}
	}
	// Shared or Modified requested of an Invalid row, or Shared of a
	// Shared one, needs no invalidation (rule D1).
	r.proc = p
	d.invalidate(e, m.Key, r)
}

// invalidate sends the pending invalidations, drops sharers whose lease is
// over, and completes the request when nothing is left to wait for.
func (d *directory) invalidate(e env.Env, key string, r *dirRow) {
	p := r.proc
	now := e.Now()
	next := int64(d.ks.cfg.ResendInterval)
	p.waiting = slices.DeleteFunc(p.waiting, func(n wire.NodeID) bool {
		end, leased := r.leases[n]
		if r.state == Shared && leased && now >= end {
			return true // its lease is over: no need to hear from it
		}
		if r.state == Shared && leased {
			next = min(next, end-now)
		}
		e.Send(n, &Inval{Key: key, To: p.to, Epoch: p.epoch})
		return false
	})
	if len(p.waiting) == 0 || d.ks.cfg.noInvalidationWait {
		d.finish(e, key, r)
		return
	}
	e.CancelTimer(p.timer)
	p.timer = e.SetTimer(max(time.Duration(next), 1), dirTimer{key})
}

func (d *directory) onTimer(e env.Env, t dirTimer) {
	if r := d.rows[t.key]; r != nil && r.proc != nil {
		d.invalidate(e, t.key, r)
	}
}

func (d *directory) onAck(e env.Env, from wire.NodeID, m *InvalAck) {
	r := d.row(e, m.Key)
	p := r.proc
	if p == nil || m.Epoch != p.epoch || !slices.Contains(p.waiting, from) {
		return
	}
	p.acks[from] = m
	p.ackedAt[from] = e.Now()
	p.waiting = without(p.waiting, from)
	if len(p.waiting) == 0 {
		e.CancelTimer(p.timer)
		d.finish(e, m.Key, r)
	}
}

// finish ends Processing: it works out who holds the current data (rule
// D5), takes the new state under a new epoch, persists it and grants.
func (d *directory) finish(e env.Env, key string, r *dirRow) {
	p := r.proc
	r.proc = nil
	dataEpoch, sources := r.dataEpoch, slices.Clone(r.sources)
	keep := func(n wire.NodeID) {
		if !slices.Contains(sources, n) {
			sources = append(sources, n)
		}
	}
	var owner *InvalAck
	if r.state == Modified {
		owner = p.acks[r.owner]
		switch {
		case owner != nil && owner.DataEpoch == r.epoch,
			owner == nil && d.ks.cfg.noInvalidationWait:
			// The owner took its grant: its copy is the current data.
			dataEpoch, sources = r.epoch, []wire.NodeID{r.owner}
		case owner != nil && owner.DataEpoch == dataEpoch:
			keep(r.owner)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.acks)) {
		if a := p.acks[n]; a.DataEpoch == dataEpoch {
			keep(n)
		}
	}
	prev, prevOwner := r.state, r.owner
	r.epoch++
	r.dataEpoch, r.sources = dataEpoch, sources
	now := e.Now()
	stretched := int64(d.ks.cfg.stretchedLease())
	switch p.want {
	case Modified:
		r.state, r.owner, r.sharers = Modified, p.requester, nil
		clear(r.leases)
	case Shared:
		if prev != Shared {
			r.sharers = nil
			clear(r.leases)
		}
		if prev == Modified && prevOwner != p.requester && owner != nil && owner.Kept && owner.DataEpoch == dataEpoch {
			// The downgraded owner keeps reading under a lease from its
			// ack (rule D4).
			r.sharers = append(r.sharers, prevOwner)
			r.leases[prevOwner] = p.ackedAt[prevOwner] + stretched
		}
		if !slices.Contains(r.sharers, p.requester) {
			r.sharers = append(r.sharers, p.requester)
		}
		r.leases[p.requester] = now + stretched
		r.state, r.owner = Shared, 0
	}
	if !d.save(e, key, r) {
		return
	}
	src := without(sources, p.requester)
	for _, n := range r.sharers {
		if n != p.requester && !slices.Contains(src, n) {
			src = append(src, n) // unconfirmed: the requester checks
		}
	}
	e.Send(p.requester, &Grant{Key: key, Want: p.want, Nonce: p.nonce, Epoch: r.epoch, DataEpoch: dataEpoch, Sources: src})
}

func without(ns []wire.NodeID, n wire.NodeID) []wire.NodeID {
	return slices.DeleteFunc(slices.Clone(ns), func(x wire.NodeID) bool { return x == n })
}
