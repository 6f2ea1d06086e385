package meteor

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

// bootKey marks a store that a meteor replica has already started on: a
// replica that finds it is a restart, whose earlier status history its peers
// may have missed (status.go, Genesis). Client keys cannot begin with 0xff
// through the RESP front end's key rules, and the marker is never replicated.
const bootKey = "\xffmeteor.booted"

// Keyspace is the state every replica of a meteor keyspace shares and never
// modifies: the policy and the placement of keys.
type Keyspace struct {
	cfg  Config
	topo *topo.Topology
	ring *ring.Ring
}

// NewKeyspace validates cfg for topology t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults(len(t.World.Regions))
	nodes := make([]int, len(t.ByRegion))
	for r, ids := range t.ByRegion {
		nodes[r] = len(ids)
	}
	if err := cfg.Validate(nodes); err != nil {
		return nil, err
	}
	if cfg.OneWay == nil {
		cfg.OneWay = func(a, b wire.NodeID) time.Duration {
			return t.World.BaseDelay(t.RegionOf(a), t.RegionOf(b))
		}
	}
	return &Keyspace{cfg: cfg, topo: t, ring: ring.New(t)}, nil
}

// Config returns the keyspace's policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// Replicas appends the replicas of key to dst, region by region (the same
// placement as the quorum protocol: MeteorShower runs on top of it).
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	for r, n := range k.cfg.ReplicasPerRegion {
		dst = k.ring.Replicas(dst, r, key, n)
	}
	return dst
}

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Theta is θt for a read coordinated by gateway gw and served by replica
// srv, of a key whose replicas are reps (§4.2.2, "Summary of θt"):
//
//   - M1: 0, less ε.
//   - M2: the write level's order statistic of the one-way latencies from
//     the gateway to the replicas (ONE: minimum, QUORUM: median, ALL:
//     maximum), less ε. When reads need more than the serving replica's own
//     status, it is also capped at the latency from the nearest other
//     replica back to the gateway: Lemma 1's argument needs every replica
//     that may be the only one shared by the write's acknowledgers and the
//     read's fresh statuses to have applied the write more than θt + ε
//     before the read began, and an acknowledgement takes at least that
//     latency to reach the gateway. For one replica per region and a
//     QUORUM write the cap equals the median (the thesis' case).
//
// The result may be negative: a read then needs statuses sent after it
// began, plus ε.
func (k *Keyspace) Theta(gw, srv wire.NodeID, reps []wire.NodeID) time.Duration {
	eps := k.cfg.MaxClockSkew
	if k.cfg.Mode == M1 {
		return -eps
	}
	if k.cfg.Theta > 0 {
		return k.cfg.Theta
	}
	lats := make([]time.Duration, 0, len(reps))
	var nearestOther time.Duration = -1
	for _, p := range reps {
		lats = append(lats, k.cfg.OneWay(gw, p))
		if p != srv {
			if l := k.cfg.OneWay(p, gw); nearestOther < 0 || l < nearestOther {
				nearestOther = l
			}
		}
	}
	slices.Sort(lats)
	var stat time.Duration
	switch k.cfg.Write {
	case wire.One:
		stat = lats[0]
	case wire.All:
		stat = lats[len(lats)-1]
	default:
		stat = lats[(len(lats)-1)/2]
	}
	n := len(reps)
	if rq := n - k.cfg.writeAcks(n) + 1; rq > 1 && nearestOther >= 0 {
		stat = min(stat, nearestOther)
	}
	return stat - eps
}

// Replica is one node of a meteor keyspace: a storage replica for the keys
// it owns, a gateway (the thesis' proxy) for the requests of clients in its
// region, and a peer that pushes and receives status messages.
type Replica struct {
	ks     *Keyspace
	id     wire.NodeID
	clock  hlc.Clock
	rank   []int // rank[n]: position of node n by proximity from this node
	ops    map[uint64]*op
	nextOp uint64

	// Status dispatcher (status.go).
	epoch   uint64
	genesis bool
	seq     uint64                  // the last status sent
	pending map[string]wire.Version // applied since the last status
	history []sentPayload           // the last Redundant payloads, newest last
	// Status map and read subscription map (status.go).
	peers  map[wire.NodeID]*peerView
	parked []*pread
	pulls  map[pullKey]int64 // outstanding pulls and when they were sent
	nextRd uint64
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	t := ks.topo
	rank := t.ProximityRank(id)
	return &Replica{
		ks: ks, id: id, rank: rank, ops: make(map[uint64]*op),
		pending: make(map[string]wire.Version), peers: make(map[wire.NodeID]*peerView),
		pulls: make(map[pullKey]int64),
	}
}

// op is a request this node coordinates as gateway.
type op struct {
	id       uint64
	req      *wire.Request
	replicas []wire.NodeID
	answered []bool
	acks     int // write: replicas holding the write or a newer version
	need     int
	version  wire.Version
	timeout  env.TimerID
}

type opTimer struct{ op uint64 }

type dispatchTimer struct{}

// Start implements env.Replica.
//
// Operation IDs start at a random point, so an answer meant for a previous
// incarnation matches no new operation. The HLC starts ε ahead of the
// physical clock: every version issued before the crash has a wall time no
// later than the largest clock in the cluster then, which is less than this
// clock now plus ε, so versions issued from here on are newer than any a
// client of this gateway has seen (Lemma 1's per-process write order). The
// epoch is random for the same reason as operation IDs; the boot marker
// tells a first start (Genesis) from a restart.
func (r *Replica) Start(e env.Env) {
	r.nextOp = e.Rand().Uint64()>>1 | 1
	r.epoch = e.Rand().Uint64() | 1
	now := e.Now()
	r.clock.Observe(now, hlc.Timestamp{WallNanos: now + int64(r.ks.cfg.MaxClockSkew)})
	if _, ok, err := e.Store().Get(bootKey); err == nil && !ok {
		if err := e.Store().Put(bootKey, store.Record{Value: []byte{1}}); err == nil {
			r.genesis = true
		}
	}
	e.SetTimer(r.ks.cfg.DispatchInterval, dispatchTimer{})
}

func errReply(req *wire.Request, code wire.ErrorCode, msg string) *wire.Reply {
	return &wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: code, Msg: msg}}
}

// Request implements env.Replica: coordinate a client request.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	switch req.Op {
	case wire.OpGet, wire.OpPut, wire.OpDelete:
	default:
		e.Reply(errReply(req, wire.ErrInvalid, fmt.Sprintf("meteor: unknown operation %s", req.Op)))
		return
	}
	r.nextOp++
	o := &op{id: r.nextOp, req: req, replicas: r.ks.Replicas(nil, req.Key)}
	// The read rule and θt are derived from the keyspace's write level, so
	// a request's level can only strengthen a write (more acks keep
	// r + w > n); a read's level is not used.
	o.need = r.ks.cfg.writeAcks(len(o.replicas))
	if req.Op != wire.OpGet {
		switch req.Level {
		case wire.LevelDefault, wire.One, wire.LocalOne:
		case wire.Two, wire.Three, wire.Quorum, wire.All:
			lc := Config{Write: req.Level}
			n := len(o.replicas)
			need := lc.writeAcks(n)
			switch req.Level {
			case wire.Two:
				need = 2
			case wire.Three:
				need = 3
			}
			if need > n {
				e.Reply(errReply(req, wire.ErrInvalid, fmt.Sprintf("meteor: level %s needs %d replicas; the key has %d", req.Level, need, n)))
				return
			}
			o.need = max(o.need, need)
		default:
			e.Reply(errReply(req, wire.ErrInvalid, fmt.Sprintf("meteor: write level %s is not supported (ONE, TWO, THREE, QUORUM, ALL)", req.Level)))
			return
		}
	}
	slices.SortFunc(o.replicas, func(a, b wire.NodeID) int { return r.rank[a] - r.rank[b] })
	o.answered = make([]bool, len(o.replicas))
	r.ops[o.id] = o
	if req.Op == wire.OpGet {
		r.startRead(e, o)
	} else {
		r.startWrite(e, o)
	}
}

// startWrite stamps the write with the gateway's HLC and sends the write
// notification to every replica (Fig. 4.15b). Writes are totally ordered by
// (timestamp, gateway ID) (Lemma 1); the HLC has observed every version this
// gateway returned, so a client's write is ordered after everything it read
// (the per-process order Theorem 1's construction needs).
func (r *Replica) startWrite(e env.Env, o *op) {
	o.version = wire.Version{TS: r.clock.Now(e.Now()), Node: r.id}
	rec := store.Record{Version: o.version, Tombstone: o.req.Op == wire.OpDelete}
	if !rec.Tombstone {
		rec.Value = o.req.Value
	}
	local := false
	for _, n := range o.replicas {
		if n == r.id {
			local = true
			continue
		}
		e.Send(n, &Write{Op: o.id, Key: o.req.Key, Rec: rec})
	}
	o.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, opTimer{o.id})
	if local {
		ack, err := r.applyWrite(e, o.req.Key, rec)
		if err != nil {
			e.Log().Error("meteor: cannot apply a write", "key", o.req.Key, "err", err)
			return
		}
		r.onWriteAck(e, r.id, &WriteAck{Op: o.id, Key: o.req.Key, Rej: !ack})
	}
}

// applyWrite is writeLocal (Fig. 4.14b): store rec if it is newer than the
// local version and register it for the next status message. It reports
// whether rec was applied (Ack) or the replica already had a newer version
// (Rej).
func (r *Replica) applyWrite(e env.Env, key string, rec store.Record) (bool, error) {
	r.clock.Observe(e.Now(), rec.Version.TS)
	cur, ok, err := e.Store().Get(key)
	if err != nil {
		return false, err
	}
	if ok && !cur.Version.Less(rec.Version) {
		return false, nil
	}
	if err := e.Store().Put(key, rec); err != nil {
		return false, err
	}
	if v, ok := r.pending[key]; !ok || v.Less(rec.Version) {
		r.pending[key] = rec.Version
	}
	return true, nil
}

func (r *Replica) onWriteAck(e env.Env, from wire.NodeID, m *WriteAck) {
	o := r.ops[m.Op]
	if o == nil || o.req.Op == wire.OpGet || o.req.Key != m.Key {
		return
	}
	i := slices.Index(o.replicas, from)
	if i < 0 || o.answered[i] {
		return
	}
	o.answered[i] = true
	// A Rej counts like an Ack: the replica holds a newer version, so a
	// read whose fresh statuses include it returns that version or a newer
	// one, which is what Lemma 1 needs of the write. Last writer wins orders
	// the rejected write just before the newer one, where no read can
	// return it. (The thesis answers Fail on a majority of Rejs, which is
	// wrong when a minority applied the write: reads may return it.)
	o.acks++
	if o.acks >= o.need {
		delete(r.ops, o.id)
		e.CancelTimer(o.timeout)
		e.Reply(&wire.Reply{ID: o.req.ID, Client: o.req.Client, Version: o.version})
	}
}

// startRead sends the read to the nearest replica of the key (Fig. 4.15a)
// with the view time T_read − θt.
func (r *Replica) startRead(e env.Env, o *op) {
	srv := o.replicas[0]
	view := e.Now() - int64(r.ks.Theta(r.id, srv, o.replicas))
	o.timeout = e.SetTimer(r.ks.cfg.ReadTimeout, opTimer{o.id})
	if srv == r.id {
		r.park(e, r.id, &ReadReq{Op: o.id, Key: o.req.Key, ViewTs: view})
		return
	}
	e.Send(srv, &ReadReq{Op: o.id, Key: o.req.Key, ViewTs: view})
}

func (r *Replica) onReadResp(e env.Env, from wire.NodeID, m *ReadResp) {
	o := r.ops[m.Op]
	if o == nil || o.req.Op != wire.OpGet || o.req.Key != m.Key || from != o.replicas[0] {
		return
	}
	delete(r.ops, o.id)
	e.CancelTimer(o.timeout)
	if !m.Rec.Version.IsZero() {
		// A later write by this gateway's client is ordered after what it
		// read (Lemma 2 / Theorem 1, case 4).
		r.clock.Observe(e.Now(), m.Rec.Version.TS)
	}
	rep := &wire.Reply{ID: o.req.ID, Client: o.req.Client, Version: m.Rec.Version, Found: m.Found && !m.Rec.Tombstone}
	if rep.Found {
		rep.Value = m.Rec.Value
	}
	e.Reply(rep)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *Write:
		applied, err := r.applyWrite(e, m.Key, m.Rec)
		if err != nil {
			// No answer unless the write (or a newer one) is stored.
			e.Log().Error("meteor: cannot apply a write", "key", m.Key, "err", err)
			return
		}
		ack := &WriteAck{Op: m.Op, Key: m.Key, Rej: !applied, Version: m.Rec.Version}
		if !applied {
			if cur, _, err := e.Store().Get(m.Key); err == nil {
				ack.Version = cur.Version
			}
		}
		e.Send(from, ack)
		if applied {
			r.recheck(e)
		}
	case *WriteAck:
		r.onWriteAck(e, from, m)
	case *ReadReq:
		r.park(e, from, m)
	case *ReadResp:
		r.onReadResp(e, from, m)
	case *Status:
		r.onStatus(e, from, m)
	case *Pull:
		r.onPull(e, from, m)
	case *PullResp:
		r.onPullResp(e, from, m)
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	switch t := payload.(type) {
	case dispatchTimer:
		r.dispatch(e)
		e.SetTimer(r.ks.cfg.DispatchInterval, dispatchTimer{})
	case opTimer:
		o := r.ops[t.op]
		if o == nil {
			return
		}
		delete(r.ops, o.id)
		msg := "meteor: not enough replicas acknowledged the write in time"
		if o.req.Op == wire.OpGet {
			msg = "meteor: the nearest replica did not answer the read in time"
		}
		e.Reply(errReply(o.req, wire.ErrTimeout, msg))
	}
}

// ReadFloor is the network time a read from a client in region local
// cannot avoid, for a keyspace with perRegion replicas per region: the
// serving replica is the nearest, and it needs n − w + 1 − 1 peer statuses
// stamped after the view time T − θt, so it waits for the slowest of the
// nearest such peers' statuses, less θt (the dispatch interval's phase comes
// on top). oneWay is the region-to-region one-way delay.
func ReadFloor(cfg Config, local int, oneWay func(a, b int) time.Duration) time.Duration {
	type rep struct {
		region int
		d      time.Duration
	}
	var reps []rep
	for r, n := range cfg.ReplicasPerRegion {
		for i := 0; i < n; i++ {
			reps = append(reps, rep{r, oneWay(local, r)})
		}
	}
	if len(reps) == 0 {
		return 0
	}
	slices.SortStableFunc(reps, func(a, b rep) int { return int(a.d - b.d) })
	srv := reps[0].region
	n := len(reps)
	need := n - cfg.writeAcks(n) + 1
	if need <= 1 {
		return 0
	}
	var back []time.Duration // peers' statuses travel to the serving replica
	for _, p := range reps[1:] {
		back = append(back, oneWay(p.region, srv))
	}
	slices.Sort(back)
	wait := back[need-2]
	theta := -cfg.MaxClockSkew
	if cfg.Mode == M2 {
		lats := make([]time.Duration, 0, n)
		for _, p := range reps {
			lats = append(lats, p.d)
		}
		var stat time.Duration
		switch cfg.Write {
		case wire.One:
			stat = lats[0]
		case wire.All:
			stat = lats[n-1]
		default:
			stat = lats[(n-1)/2]
		}
		nearestOther := oneWay(reps[1].region, local)
		for _, p := range reps[1:] {
			nearestOther = min(nearestOther, oneWay(p.region, local))
		}
		theta = min(stat, nearestOther) - cfg.MaxClockSkew
		if cfg.Theta > 0 {
			theta = cfg.Theta
		}
	}
	return max(0, wait-theta)
}
