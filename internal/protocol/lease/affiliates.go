package lease

import (
	"cmp"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Affiliated nodes (GlobLease §III.F): a hot key's replica in a region —
// its host — attaches other nodes of that region as extra read replicas
// of the key. Each serves reads under a secondary lease that the host
// grants from within its own lease (or, for the master, its master lease),
// so it ends first in real time; the host forwards every update of the key
// to its affiliates and acknowledges the update only once they have it or
// their secondary leases have expired. The master's view of the host's
// lease therefore covers the affiliates', and nothing else in the protocol
// changes. Gateways learn a hot key's affiliates from the host's read
// replies and spread reads over the host and its affiliates round-robin;
// an affiliate whose secondary lease lapsed sends the gateway back to the
// host. Hosts find hot keys by counting the reads they serve per window
// (top HotKeys keys at HotRate reads/s or more) and detach keys that cool
// down to half that rate.

// SecGrant gives an affiliate the key's record and, answering its
// SecRenew (Nonce), a secondary lease of Length on its clock that starts
// when the affiliate asked — not on arrival, which a slow network could
// delay past the host's own lease. With Nonce 0 it is an offer: the
// affiliate asks for the lease.
type SecGrant struct {
	Key    string
	Nonce  uint64
	Found  bool
	Rec    store.Record
	Length int64
}

// SecRenew asks the host for a secondary lease.
type SecRenew struct {
	Key   string
	Nonce uint64
}

// SecUpdate forwards a write to an affiliate; Op ≠ 0 asks for an ack.
type SecUpdate struct {
	Op  uint64
	Key string
	Rec store.Record
}

// SecUpdateAck acknowledges a SecUpdate.
type SecUpdateAck struct {
	Op  uint64
	Key string
}

func (*SecGrant) Kind() string     { return "lease.sec_grant" }
func (*SecRenew) Kind() string     { return "lease.sec_renew" }
func (*SecUpdate) Kind() string    { return "lease.sec_update" }
func (*SecUpdateAck) Kind() string { return "lease.sec_update_ack" }

func (m *SecGrant) AppendPayload(b []byte) []byte {
	return wire.AppendVarint(store.AppendWire(wire.AppendBool(opKey(b, m.Nonce, m.Key), m.Found), m.Rec), m.Length)
}
func (m *SecGrant) DecodePayload(d *wire.Decoder) {
	m.Nonce, m.Key, m.Found, m.Rec, m.Length = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d), d.Varint()
}
func (m *SecRenew) AppendPayload(b []byte) []byte { return opKey(b, m.Nonce, m.Key) }
func (m *SecRenew) DecodePayload(d *wire.Decoder) { m.Nonce, m.Key = d.Uvarint(), d.String() }
func (m *SecUpdate) AppendPayload(b []byte) []byte {
	return store.AppendWire(opKey(b, m.Op, m.Key), m.Rec)
}
func (m *SecUpdate) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec = d.Uvarint(), d.String(), store.DecodeWire(d)
}
func (m *SecUpdateAck) AppendPayload(b []byte) []byte { return opKey(b, m.Op, m.Key) }
func (m *SecUpdateAck) DecodePayload(d *wire.Decoder) { m.Op, m.Key = d.Uvarint(), d.String() }

// hosted is a host's state for one key with affiliates.
type hosted struct {
	attached bool                  // advertised to gateways and refreshed
	exp      map[wire.NodeID]int64 // bound (host clock) on each secondary lease
}

// secLease is an affiliate's secondary lease, and its request in flight.
type secLease struct {
	exp   int64
	host  wire.NodeID
	nonce uint64
	asked int64
}

// hostWait is an update a host acknowledges once its affiliates have it.
type hostWait struct {
	master  wire.NodeID
	op      uint64
	key     string
	ballot  Ballot
	pending map[wire.NodeID]bool
}

// affiliatesOf are the nodes a host in its region may attach: the next
// Affiliates nodes of the region after it.
func (r *Replica) affiliatesOf() []wire.NodeID {
	nodes := r.ks.topo.ByRegion[r.region]
	i := slices.Index(nodes, r.id)
	var out []wire.NodeID
	for j := 1; j < len(nodes) && len(out) < r.ks.cfg.Affiliates; j++ {
		out = append(out, nodes[(i+j)%len(nodes)])
	}
	return out
}

// hostLease is when this node's own right to serve key ends: its master
// lease if it is the master, else its lease.
func (r *Replica) hostLease(e env.Env, key string) int64 {
	if r.migrating[key] != nil || r.campaigns[key] != nil {
		// Mastership is moving: a handoff has counted the affiliates'
		// leases already, so none may start or grow now.
		return 0
	}
	mt := r.meta(e, key)
	if r.isMaster(mt) {
		return r.mlease[key]
	}
	if l := r.leases[key]; l.ballot == mt.accepted {
		return l.exp
	}
	return 0
}

// affHolders lists the affiliates whose secondary lease on key may be
// valid, with the host-clock time each surely ends; after a restart (the
// host forgot whom it attached) every possible affiliate counts until a
// lease it could have granted has run out.
func (r *Replica) affHolders(key string, now int64) (ns []wire.NodeID, exps []int64) {
	if r.ks.cfg.Affiliates == 0 {
		return nil, nil
	}
	h := r.hosted[key]
	for _, a := range r.affiliatesOf() {
		exp := int64(0)
		if h != nil {
			exp = h.exp[a]
		}
		if now < r.affFence {
			exp = max(exp, r.affFence)
		}
		if exp > now {
			ns, exps = append(ns, a), append(exps, exp)
		}
	}
	return ns, exps
}

// refreshAffiliates offers the attached key's affiliates a secondary lease
// (they ask for it: onSecRenew).
func (r *Replica) refreshAffiliates(e env.Env, key string) {
	h := r.hosted[key]
	if h == nil || !h.attached || r.hostLease(e, key) <= e.Now() {
		return
	}
	rec, found := r.get(e, key)
	for _, a := range r.affiliatesOf() {
		e.Send(a, &SecGrant{Key: key, Found: found, Rec: rec})
	}
}

// onSecRenew grants a secondary lease from within this node's own lease:
// (remaining)·(1−ρ)/(1+ρ) on the affiliate's clock, counted from when it
// asked (before this), ends before the host's lease in real time.
func (r *Replica) onSecRenew(e env.Env, from wire.NodeID, m *SecRenew) {
	h := r.hosted[m.Key]
	now := e.Now()
	until := r.hostLease(e, m.Key)
	if h == nil || !h.attached || until <= now || !slices.Contains(r.affiliatesOf(), from) {
		return
	}
	r.markActive(e)
	h.exp[from] = max(h.exp[from], until)
	rec, found := r.get(e, m.Key)
	e.Send(from, &SecGrant{Key: m.Key, Nonce: m.Nonce, Found: found, Rec: rec, Length: int64(float64(until-now) / r.ks.recordFactor)})
}

// advertised is the affiliate list a host's read reply carries.
func (r *Replica) advertised(key string) []wire.NodeID {
	if h := r.hosted[key]; h != nil && h.attached {
		return r.affiliatesOf()
	}
	return nil
}

// countRead feeds hot-key detection at a host.
func (r *Replica) countRead(key string) {
	if r.ks.cfg.Affiliates > 0 {
		r.hot[key]++
	}
}

// detectHot attaches affiliates to this window's hottest keys and detaches
// keys that cooled down. A host of an attached key sees only its share of
// the reads, so its count is scaled up by the number of servers.
func (r *Replica) detectHot(e env.Env) {
	cfg := r.ks.cfg
	type kc struct {
		key  string
		rate float64
	}
	var counts []kc
	servers := float64(len(r.affiliatesOf()) + 1)
	for k, n := range r.hot { // lint:order-independent: sorted below
		rate := float64(n) / cfg.HotWindow.Seconds()
		if h := r.hosted[k]; h != nil && h.attached {
			rate *= servers
		}
		counts = append(counts, kc{k, rate})
	}
	slices.SortFunc(counts, func(a, b kc) int {
		if c := cmp.Compare(b.rate, a.rate); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	hot := map[string]bool{}
	for _, c := range counts {
		if len(hot) < cfg.HotKeys && c.rate >= cfg.HotRate {
			hot[c.key] = true
		}
	}
	now := e.Now()
	var keys []string
	for k := range r.hosted { // lint:order-independent: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h := r.hosted[k]
		rate := 0.0
		for _, c := range counts {
			if c.key == k {
				rate = c.rate
			}
		}
		if h.attached && !hot[k] && rate < cfg.HotRate/2 {
			h.attached = false // its secondary leases run out on their own
			r.stats.Detached++
		}
		if !h.attached {
			live := false
			for _, exp := range h.exp { // lint:order-independent: any
				live = live || exp > now
			}
			if !live {
				delete(r.hosted, k)
			}
		}
	}
	for _, c := range counts {
		if !hot[c.key] {
			continue
		}
		h := r.hosted[c.key]
		if h == nil {
			h = &hosted{exp: map[wire.NodeID]int64{}}
			r.hosted[c.key] = h
		}
		if !h.attached {
			h.attached = true
			r.stats.Attached++
		}
		r.refreshAffiliates(e, c.key)
	}
	clear(r.hot)
}

// forwardUpdate hands an active update to the key's live affiliates; the
// host acknowledges it to the master once they all have it (or their
// leases ran out). It reports whether the ack was deferred.
func (r *Replica) forwardUpdate(e env.Env, from wire.NodeID, m *Update) bool {
	now := e.Now()
	ns, _ := r.affHolders(m.Key, now)
	if len(ns) == 0 {
		return false
	}
	if !m.Active {
		for _, a := range ns {
			e.Send(a, &SecUpdate{Key: m.Key, Rec: m.Rec})
		}
		return false
	}
	if r.ks.cfg.noAffiliateWait {
		for _, a := range ns {
			e.Send(a, &SecUpdate{Key: m.Key, Rec: m.Rec})
		}
		return false
	}
	r.nextOp++
	w := &hostWait{master: from, op: m.Op, key: m.Key, ballot: m.Ballot, pending: map[wire.NodeID]bool{}}
	r.hostWaits[r.nextOp] = w
	for _, a := range ns {
		w.pending[a] = true
		e.Send(a, &SecUpdate{Op: r.nextOp, Key: m.Key, Rec: m.Rec})
	}
	r.checkHostWait(e, r.nextOp, w)
	return true
}

func (r *Replica) checkHostWait(e env.Env, id uint64, w *hostWait) {
	now := e.Now()
	ns, exps := r.affHolders(w.key, now)
	var wait int64
	for i, a := range ns {
		if w.pending[a] && (wait == 0 || exps[i] < wait) {
			wait = exps[i]
		}
	}
	if wait == 0 {
		delete(r.hostWaits, id)
		r.send(e, w.master, &UpdateAck{Op: w.op, Key: w.key, OK: true, Ballot: w.ballot})
		return
	}
	e.SetTimer(time.Duration(wait-now)+time.Microsecond, &leaseTimer{kind: timerHostWait, op: id})
}

func (r *Replica) onSecUpdateAck(e env.Env, from wire.NodeID, m *SecUpdateAck) {
	if w := r.hostWaits[m.Op]; w != nil && w.key == m.Key {
		delete(w.pending, from)
		r.checkHostWait(e, m.Op, w)
		return
	}
	// The master's own affiliates acknowledge its writes directly.
	if w := r.writes[m.Op]; w != nil && w.key == m.Key {
		w.acked[from] = true
		r.check(e, w)
	}
}

// Affiliate side.

func (r *Replica) onSecGrant(e env.Env, from wire.NodeID, m *SecGrant) {
	if m.Found {
		r.apply(e, m.Key, m.Rec)
	}
	l := r.secLeases[m.Key]
	if m.Nonce == 0 {
		// An offer: ask for the lease, timing it from now.
		l.nonce, l.asked = e.Rand().Uint64()|1, e.Now()
		r.secLeases[m.Key] = l
		e.Send(from, &SecRenew{Key: m.Key, Nonce: l.nonce})
		return
	}
	if m.Nonce != l.nonce {
		return
	}
	if exp := l.asked + m.Length; exp > l.exp {
		l.exp, l.host = exp, from
	}
	l.nonce = 0
	r.secLeases[m.Key] = l
}

func (r *Replica) onSecUpdate(e env.Env, from wire.NodeID, m *SecUpdate) {
	r.apply(e, m.Key, m.Rec)
	if m.Op != 0 {
		r.send(e, from, &SecUpdateAck{Op: m.Op, Key: m.Key})
	}
}

// affiliateRead serves a read at a node that is not the key's replica in
// its region: under a valid secondary lease, or by sending the gateway back
// to the host.
func (r *Replica) affiliateRead(e env.Env, from wire.NodeID, m *LRead) {
	if l := r.secLeases[m.Key]; l.exp > e.Now() {
		rec, ok := r.get(e, m.Key)
		r.send(e, from, &LReadResp{Op: m.Op, Key: m.Key, Found: ok, Rec: rec})
		return
	}
	r.send(e, from, &LReadResp{Op: m.Op, Key: m.Key, Moved: true})
}

func (r *Replica) dropAffiliates(key string) {
	delete(r.affCache, key)
	delete(r.affSeen, key)
}

// readTarget is where a gateway sends a read: the key's replica in its
// region, or, for a hot key, the next of the host and its affiliates.
func (r *Replica) readTarget(key string) wire.NodeID {
	host := r.ks.ring.Owner(r.region, key)
	affs := r.affCache[key]
	if len(affs) == 0 {
		return host
	}
	r.rr++
	i := int(r.rr % uint64(len(affs)+1))
	if i == len(affs) {
		return host
	}
	return affs[i]
}
