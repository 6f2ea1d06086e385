package lease

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is a lease keyspace's policy.
type Config struct {
	// LeaseLength is how long a non-master may serve reads after a grant,
	// on its own clock. Default 60s (GlobLease Table II).
	LeaseLength time.Duration
	// MaxDriftPPM (ρ) bounds every clock's rate error, in parts per
	// million. Default 200.
	MaxDriftPPM float64
	// RenewTimeout (B): a grant arriving later than this after its request
	// is ignored, and the request is sent again. Default 2s.
	RenewTimeout time.Duration
	// ReadTimeout and WriteTimeout bound a gateway's wait. Default 5s each.
	ReadTimeout, WriteTimeout time.Duration
	// Passive makes writes use passive update when no lease is valid
	// (Alg. 2); otherwise every write updates a majority and every holder
	// (active update). Default false.
	Passive bool
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults() {
	if c.LeaseLength == 0 {
		c.LeaseLength = 60 * time.Second
	}
	if c.MaxDriftPPM == 0 {
		c.MaxDriftPPM = 200
	}
	if c.RenewTimeout == 0 {
		c.RenewTimeout = 2 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 5 * time.Second
	}
}

// Validate checks the policy.
func (c Config) Validate() error {
	switch {
	case c.LeaseLength <= 0:
		return fmt.Errorf("lease: lease_length %s: must be positive", c.LeaseLength)
	case c.MaxDriftPPM < 0 || c.MaxDriftPPM >= 100_000:
		return fmt.Errorf("lease: max_drift_ppm %g: must be in [0, 100000)", c.MaxDriftPPM)
	case c.RenewTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0:
		return fmt.Errorf("lease: renew, read and write timeouts must be positive")
	}
	return nil
}

// Keyspace is the shared, read-only state of a lease keyspace.
type Keyspace struct {
	cfg  Config
	topo *topo.Topology
	ring *ring.Ring
	// recordFactor stretches a duration measured on a non-master's clock
	// into the master's, for the worst drifts: (1+ρ)/(1−ρ) (doc.go).
	recordFactor float64
}

// NewKeyspace validates cfg for topology t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rho := cfg.MaxDriftPPM / 1e6
	return &Keyspace{cfg: cfg, topo: t, ring: ring.New(t), recordFactor: (1 + rho) / (1 - rho)}, nil
}

// Config returns the policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// Replicas appends key's replication group: its replica in every region's
// ring (GlobLease §III.A), in region order.
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	for r := range k.topo.World.Regions {
		dst = k.ring.Replicas(dst, r, key, 1)
	}
	return dst
}

// Master is key's master: its replica in the region the key hashes to.
func (k *Keyspace) Master(key string) wire.NodeID {
	r := int(ring.Hash("master/"+key) % uint64(len(k.topo.World.Regions)))
	return k.ring.Replicas(nil, r, key, 1)[0]
}

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica {
		return &Replica{ks: k, id: id, region: k.topo.RegionOf(id)}
	}
}

// stretch converts a local duration into the master-side record length.
func (k *Keyspace) stretch(d time.Duration) int64 { return int64(float64(d) * k.recordFactor) }

// Replica is one node of a lease keyspace: gateway for its region's
// clients, replica of the keys it owns, master of some of them.
type Replica struct {
	ks     *Keyspace
	id     wire.NodeID
	region int
	clock  hlc.Clock
	nextOp uint64

	// Gateway: requests waiting for their replica or master.
	ops map[uint64]*gop
	// Non-master: lease expiries (own clock) and outstanding renewals.
	leases   map[string]int64
	renewing map[string]*renewal
	// Master: lease records and grants not yet acknowledged (own clock),
	// writes in progress, and the fence after a restart.
	records map[string]map[wire.NodeID]int64
	pending map[string]map[wire.NodeID]grant
	writes  map[uint64]*write
	fence   int64
}

type gop struct {
	req     *wire.Request
	timeout env.TimerID
}

type waitRead struct {
	from wire.NodeID
	op   uint64
}

type renewal struct {
	nonce   uint64
	sent    int64
	waiting []waitRead
}

type grant struct {
	nonce  uint64
	expiry int64
}

type write struct {
	id      uint64
	from    wire.NodeID
	op      uint64
	key     string
	version wire.Version
	acked   map[wire.NodeID]bool
	timeout env.TimerID
	recheck env.TimerID
}

type timerKind uint8

const (
	timerGateway timerKind = iota + 1
	timerRenew
	timerRecheck
	timerWriteTimeout
)

type leaseTimer struct {
	kind timerKind
	op   uint64
	key  string
}

// Start implements env.Replica. Leases, records and pending operations are
// volatile. A restarted master cannot know which leases it granted, so
// until every lease it could have granted has expired it counts every
// replica as a holder (the fence).
func (r *Replica) Start(e env.Env) {
	r.ops = map[uint64]*gop{}
	r.leases = map[string]int64{}
	r.renewing = map[string]*renewal{}
	r.records = map[string]map[wire.NodeID]int64{}
	r.pending = map[string]map[wire.NodeID]grant{}
	r.writes = map[uint64]*write{}
	r.nextOp = e.Rand().Uint64()>>1 | 1
	now := e.Now()
	r.fence = now + r.ks.stretch(r.ks.cfg.LeaseLength+r.ks.cfg.RenewTimeout)
}

// Request implements env.Replica: reads go to the key's replica in this
// region, writes to its master.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	r.nextOp++
	op := r.nextOp
	switch req.Op {
	case wire.OpGet:
		g := &gop{req: req, timeout: e.SetTimer(r.ks.cfg.ReadTimeout, leaseTimer{kind: timerGateway, op: op})}
		r.ops[op] = g
		local := r.ks.ring.Replicas(nil, r.region, req.Key, 1)[0]
		r.send(e, local, &LRead{Op: op, Key: req.Key})
	case wire.OpPut, wire.OpDelete:
		g := &gop{req: req, timeout: e.SetTimer(r.ks.cfg.WriteTimeout, leaseTimer{kind: timerGateway, op: op})}
		r.ops[op] = g
		rec := store.Record{Tombstone: req.Op == wire.OpDelete}
		if !rec.Tombstone {
			rec.Value = req.Value
		}
		r.send(e, r.ks.Master(req.Key), &MWrite{Op: op, Key: req.Key, Rec: rec, Passive: r.ks.cfg.Passive})
	default:
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: unknown operation %s", req.Op)}})
	}
}

// send delivers m, handling it in place when it is for this node.
func (r *Replica) send(e env.Env, to wire.NodeID, m wire.Msg) {
	if to == r.id {
		r.Step(e, r.id, m)
		return
	}
	e.Send(to, m)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *LRead:
		r.onLRead(e, from, m)
	case *LReadResp:
		r.answerRead(e, m)
	case *MWrite:
		r.onMWrite(e, from, m)
	case *MWriteResp:
		r.answerWrite(e, m)
	case *Renew:
		r.onRenew(e, from, m)
	case *Grant:
		r.onGrant(e, from, m)
	case *GrantAck:
		r.onGrantAck(e, from, m)
	case *Update:
		r.apply(e, m.Key, m.Rec)
		if m.Active {
			r.send(e, from, &UpdateAck{Op: m.Op, Key: m.Key})
		}
	case *UpdateAck:
		if w := r.writes[m.Op]; w != nil && w.key == m.Key {
			w.acked[from] = true
			r.check(e, w)
		}
	}
}

func (r *Replica) apply(e env.Env, key string, rec store.Record) {
	r.clock.Observe(e.Now(), rec.Version.TS)
	cur, ok, err := e.Store().Get(key)
	if err != nil || (ok && !cur.Version.Less(rec.Version)) {
		return
	}
	if err := e.Store().Put(key, rec); err != nil {
		e.Log().Error("lease: write failed", "key", key, "err", err)
	}
}

func (r *Replica) readResp(e env.Env, op uint64, key string) *LReadResp {
	rec, ok, _ := e.Store().Get(key)
	return &LReadResp{Op: op, Key: key, Found: ok, Rec: rec}
}

// onLRead is GlobLease Alg. 1: the master, or a replica with a valid lease,
// answers; otherwise the read waits for a lease renewed from the master.
func (r *Replica) onLRead(e env.Env, from wire.NodeID, m *LRead) {
	now := e.Now()
	if r.ks.Master(m.Key) == r.id || r.leases[m.Key] > now {
		r.send(e, from, r.readResp(e, m.Op, m.Key))
		return
	}
	rn := r.renewing[m.Key]
	if rn == nil {
		rn = &renewal{}
		r.renewing[m.Key] = rn
	}
	rn.waiting = append(rn.waiting, waitRead{from, m.Op})
	if rn.nonce == 0 {
		r.requestLease(e, m.Key, rn)
	}
}

func (r *Replica) requestLease(e env.Env, key string, rn *renewal) {
	rn.nonce = e.Rand().Uint64() | 1
	rn.sent = e.Now()
	r.send(e, r.ks.Master(key), &Renew{Key: key, Nonce: rn.nonce})
	e.SetTimer(r.ks.cfg.RenewTimeout, leaseTimer{kind: timerRenew, key: key})
}

// onGrant starts the lease on arrival (GlobLease §III.D) — if it answers
// the outstanding request and arrived within RenewTimeout of asking, which
// is what bounds the master's pending record (docs/design/lease.md).
func (r *Replica) onGrant(e env.Env, from wire.NodeID, m *Grant) {
	rn := r.renewing[m.Key]
	now := e.Now()
	if rn == nil || rn.nonce != m.Nonce || now-rn.sent > int64(r.ks.cfg.RenewTimeout) {
		return
	}
	if m.Found {
		r.apply(e, m.Key, m.Rec)
	}
	r.leases[m.Key] = now + int64(r.ks.cfg.LeaseLength)
	r.send(e, from, &GrantAck{Key: m.Key, Nonce: m.Nonce})
	delete(r.renewing, m.Key)
	for _, w := range rn.waiting {
		r.send(e, w.from, r.readResp(e, w.op, m.Key))
	}
}

// holders are the replicas whose lease the master must respect now: valid
// records, grants not yet acknowledged, and everyone during the fence.
func (r *Replica) holders(key string, now int64) (hs []wire.NodeID, next int64) {
	if now < r.fence {
		for _, n := range r.ks.Replicas(nil, key) {
			if n != r.id {
				hs = append(hs, n)
			}
		}
		return hs, r.fence
	}
	for n, exp := range r.records[key] { // lint:order-independent: sorted below
		if exp > now {
			hs = append(hs, n)
			if next == 0 || exp < next {
				next = exp
			}
		}
	}
	for n, g := range r.pending[key] { // lint:order-independent: sorted below
		if g.expiry > now && !slices.Contains(hs, n) {
			hs = append(hs, n)
			if next == 0 || g.expiry < next {
				next = g.expiry
			}
		}
	}
	slices.Sort(hs)
	return hs, next
}

func (r *Replica) onRenew(e env.Env, from wire.NodeID, m *Renew) {
	if r.ks.Master(m.Key) != r.id {
		return
	}
	now := e.Now()
	if r.pending[m.Key] == nil {
		r.pending[m.Key] = map[wire.NodeID]grant{}
	}
	// The grant is a lease from the moment it leaves: the replica may start
	// it any time within RenewTimeout of asking, which precedes this.
	r.pending[m.Key][from] = grant{nonce: m.Nonce, expiry: now + r.ks.stretch(r.ks.cfg.RenewTimeout+r.ks.cfg.LeaseLength)}
	rec, ok, _ := e.Store().Get(m.Key)
	r.send(e, from, &Grant{Key: m.Key, Nonce: m.Nonce, Found: ok, Rec: rec})
}

// onGrantAck turns a pending grant into a record that starts now, as the
// paper does, stretched for drift.
func (r *Replica) onGrantAck(e env.Env, from wire.NodeID, m *GrantAck) {
	g, ok := r.pending[m.Key][from]
	if !ok || g.nonce != m.Nonce {
		return
	}
	delete(r.pending[m.Key], from)
	if r.records[m.Key] == nil {
		r.records[m.Key] = map[wire.NodeID]int64{}
	}
	r.records[m.Key][from] = e.Now() + r.ks.stretch(r.ks.cfg.LeaseLength)
}

// onMWrite is GlobLease Alg. 2 at the master.
func (r *Replica) onMWrite(e env.Env, from wire.NodeID, m *MWrite) {
	if r.ks.Master(m.Key) != r.id {
		return // a gateway with a stale view; it times out
	}
	now := e.Now()
	_, exists, _ := e.Store().Get(m.Key)
	rec := m.Rec
	rec.Version = wire.Version{TS: r.clock.Now(now), Node: r.id}
	r.apply(e, m.Key, rec)
	hs, _ := r.holders(m.Key, now)
	others := slices.DeleteFunc(r.ks.Replicas(nil, m.Key), func(n wire.NodeID) bool { return n == r.id })
	if m.Passive && exists && len(hs) == 0 {
		// Passive update: no valid lease anywhere, so the local write is
		// enough; the others catch up lazily.
		for _, n := range others {
			r.send(e, n, &Update{Key: m.Key, Rec: rec})
		}
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Version: rec.Version})
		return
	}
	// Active update: a majority, including every lease holder.
	r.nextOp++
	w := &write{id: r.nextOp, from: from, op: m.Op, key: m.Key, version: rec.Version, acked: map[wire.NodeID]bool{}}
	r.writes[w.id] = w
	w.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, leaseTimer{kind: timerWriteTimeout, op: w.id})
	for _, n := range others {
		r.send(e, n, &Update{Op: w.id, Key: m.Key, Rec: rec, Active: true})
	}
	if r.writes[w.id] != nil {
		r.check(e, w)
	}
}

// check completes an active write once a majority of the group has it and
// no replica holding a lease lacks it; otherwise it waits for acks, or for
// the earliest unacknowledged lease to expire.
func (r *Replica) check(e env.Env, w *write) {
	now := e.Now()
	group := len(r.ks.Replicas(nil, w.key))
	hs, _ := r.holders(w.key, now)
	var wait int64
	for _, h := range hs {
		if !w.acked[h] {
			exp := r.expiryOf(w.key, h)
			if wait == 0 || exp < wait {
				wait = exp
			}
		}
	}
	if wait == 0 && len(w.acked)+1 > group/2 {
		delete(r.writes, w.id)
		e.CancelTimer(w.timeout)
		e.CancelTimer(w.recheck)
		r.send(e, w.from, &MWriteResp{Op: w.op, Key: w.key, Version: w.version})
		return
	}
	if wait > 0 {
		e.CancelTimer(w.recheck)
		w.recheck = e.SetTimer(time.Duration(wait-now)+time.Microsecond, leaseTimer{kind: timerRecheck, op: w.id})
	}
}

func (r *Replica) expiryOf(key string, n wire.NodeID) int64 {
	exp := r.records[key][n]
	if g, ok := r.pending[key][n]; ok && g.expiry > exp {
		exp = g.expiry
	}
	return max(exp, r.fence)
}

func (r *Replica) answerRead(e env.Env, m *LReadResp) {
	g := r.ops[m.Op]
	if g == nil || g.req.Key != m.Key {
		return
	}
	delete(r.ops, m.Op)
	e.CancelTimer(g.timeout)
	rep := &wire.Reply{ID: g.req.ID, Client: g.req.Client, Version: m.Rec.Version, Found: m.Found && !m.Rec.Tombstone}
	if rep.Found {
		rep.Value = m.Rec.Value
	}
	e.Reply(rep)
}

func (r *Replica) answerWrite(e env.Env, m *MWriteResp) {
	g := r.ops[m.Op]
	if g == nil || g.req.Key != m.Key {
		return
	}
	delete(r.ops, m.Op)
	e.CancelTimer(g.timeout)
	rep := &wire.Reply{ID: g.req.ID, Client: g.req.Client, Version: m.Version}
	if m.Failed {
		rep.Err = &wire.Error{Code: wire.ErrTimeout, Msg: "lease: the write did not reach a majority and every lease holder in time"}
	}
	e.Reply(rep)
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	t, ok := payload.(leaseTimer)
	if !ok {
		return
	}
	switch t.kind {
	case timerGateway:
		if g := r.ops[t.op]; g != nil {
			delete(r.ops, t.op)
			e.Reply(&wire.Reply{ID: g.req.ID, Client: g.req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "lease: no answer in time"}})
		}
	case timerRenew:
		if rn := r.renewing[t.key]; rn != nil && e.Now()-rn.sent >= int64(r.ks.cfg.RenewTimeout) {
			r.requestLease(e, t.key, rn) // the grant was lost or late: ask again
		}
	case timerRecheck:
		if w := r.writes[t.op]; w != nil {
			r.check(e, w)
		}
	case timerWriteTimeout:
		if w := r.writes[t.op]; w != nil {
			delete(r.writes, t.op)
			e.CancelTimer(w.recheck)
			r.send(e, w.from, &MWriteResp{Op: w.op, Key: w.key, Failed: true})
		}
	}
}
