package quorum

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/slab"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Keyspace is the state every replica of a quorum keyspace shares and never
// modifies: the policy and the placement of keys.
type Keyspace struct {
	cfg  Config
	topo *topo.Topology
	ring *ring.Ring
	// commitWaitNs is 2δ, or 0 when commit wait is off or writes are
	// query-ordered.
	commitWaitNs int64
	// query: writes are query-ordered (Config.WriteOrder, resolved; never
	// on a single node, whose one HLC orders every version).
	query bool
	// guarantee is GuaranteeOf the keyspace's levels, when query.
	guarantee Guarantee
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
	ks := &Keyspace{cfg: cfg, topo: t, ring: ring.New(t)}
	if len(t.Nodes) > 1 {
		ks.query = cfg.WriteOrder == WriteOrderQuery || cfg.WriteOrder == WriteOrderAuto && queryIsFaster(t, cfg)
		if !ks.query && !cfg.NoCommitWait {
			ks.commitWaitNs = 2 * int64(cfg.MaxClockOffset)
		}
	}
	if ks.query {
		g, err := GuaranteeOf(cfg.ReplicasPerRegion, cfg.Read, cfg.Write)
		if err != nil {
			return nil, err
		}
		ks.guarantee = g
	}
	return ks, nil
}

// queryNeed is what a query round needs from a coordinator in region reg:
// the keyspace's read level, whose sets meet every set a completed write
// or read left its version on (doc.go, "Write order"); QUORUM where the
// read level is unusable (a region without replicas and a LOCAL_ level).
func queryNeed(cfg Config, reg int) need {
	nd, err := requirement(cfg.Read, cfg.ReplicasPerRegion, reg)
	if err != nil {
		nd, _ = requirement(wire.Quorum, cfg.ReplicasPerRegion, reg)
	}
	return nd
}

// queryRefusal is why a query-ordered keyspace refuses level l for reads
// (read) or writes from a coordinator in region reg, or nil. A query
// orders a write only after the operations whose sets it meets (doc.go,
// "Write order"), so a request at a level whose set can miss some
// region's query set would let later writes be stamped below it, breaking
// the guarantee of the keyspace's own levels for every client. Writes are
// checked when the keyspace's reads see completed writes (regular or
// linearizable): the write's set must meet every query set. Reads are
// checked when the keyspace is linearizable: a read's repair leaves its
// version on its set, which must meet every later query. The keyspace's
// own levels always pass (GuaranteeOf's intersections).
func (k *Keyspace) queryRefusal(l wire.Level, read bool, reg int) error {
	if !k.query || k.cfg.anyLevel || read && k.guarantee < Linearizable || !read && k.guarantee < Regular {
		return nil
	}
	nd, err := requirement(l, k.cfg.ReplicasPerRegion, reg)
	if err != nil {
		return nil // refused as invalid anyway
	}
	for b := range k.cfg.ReplicasPerRegion {
		if canBeDisjoint(nd, queryNeed(k.cfg, b), k.cfg.ReplicasPerRegion) {
			what := "write"
			if read {
				what = "read"
			}
			return fmt.Errorf("quorum: this keyspace orders writes by a query at its read level %s (write_order query; read %s, write %s), "+
				"and a %s at level %s can miss a query's replicas, letting later writes order below it; use a level whose replicas always meet a %s set (or the keyspace's own)",
				k.cfg.Read, k.cfg.Read, k.cfg.Write, what, l, k.cfg.Read)
		}
	}
	return nil
}

// queryIsFaster is write_order auto's choice, the same at every node (it
// reads only the topology and the settings): query-ordered writes when,
// from every region with replicas, (1) every replica set that satisfies
// the write level also satisfies the read level (covers), so the query
// needs no replica the write would not, and a write is as available as
// with clock order; and (2) a read-level round trip plus a write-level
// one (the query, then the write) costs no more than a clock-ordered
// write, max(write round trip, expected commit wait), the commit wait
// running from the version's stamp alongside the round trip (2δ, or less
// under commit_wait measured: expectedWait). A tie goes to the
// query: its reads do not wait either, its order does not rest on the
// clock bound, and where the world's delays overstate the real ones (a
// world run on loopback without WAN emulation) its round trips shrink
// while 2δ does not. Round trips are the world's mean delays to the
// nearest replica set (Floor). With commit wait off, clock order costs
// nothing.
func queryIsFaster(t *topo.Topology, cfg Config) bool {
	if cfg.NoCommitWait {
		return false
	}
	oneWay := func(a, b int) time.Duration { return t.World.MeanDelay(a, b) }
	for reg, n := range cfg.ReplicasPerRegion {
		if n == 0 {
			continue
		}
		rn, err := requirement(cfg.Read, cfg.ReplicasPerRegion, reg)
		if err != nil {
			return false
		}
		wn, err := requirement(cfg.Write, cfg.ReplicasPerRegion, reg)
		if err != nil || !covers(wn, rn, cfg.ReplicasPerRegion) {
			return false
		}
		rd := Floor(cfg.ReplicasPerRegion, cfg.Read, reg, oneWay)
		wr := Floor(cfg.ReplicasPerRegion, cfg.Write, reg, oneWay)
		if rd+wr > max(wr, expectedWait(t, cfg, reg)) {
			return false
		}
	}
	return true
}

// expectedWait is what auto expects a clock-ordered answer from region reg
// to wait past its stamp: 2δ, or under commit_wait measured the most a
// probe from any region takes to arrive here (the measured bound with
// clocks in step), if less.
func expectedWait(t *topo.Topology, cfg Config, reg int) time.Duration {
	w := 2 * cfg.MaxClockOffset
	if cfg.CommitWait != CommitWaitMeasured {
		return w
	}
	var far time.Duration
	for from := range t.World.Regions {
		far = max(far, t.World.MeanDelay(from, reg))
	}
	return min(w, far)
}

// QueryOrdered reports whether the keyspace's writes are query-ordered
// (Config.WriteOrder after auto's choice).
func (k *Keyspace) QueryOrdered() bool { return k.query }

// Config returns the keyspace's policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// OrdersWrites reports whether the keyspace runs on a single node, whose
// replica then orders every write of every key (one HLC stamps them all,
// in the order it applies them): the one layout in which this protocol
// applies conditional writes atomically (doc.go, "Conditional writes").
func (k *Keyspace) OrdersWrites() bool { return len(k.topo.Nodes) == 1 }

// CondRefusal is the error a conditional write gets in a keyspace of
// several nodes.
const CondRefusal = "quorum: conditional writes need a single-node cluster, whose one replica orders every write; " +
	"with several nodes, coordinators stamp writes with their own clocks and last writer wins cannot order concurrent writes"

// Replicas appends the replicas of key to dst, region by region.
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	return k.ring.ReplicasEach(dst, key, k.cfg.ReplicasPerRegion)
}

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Replica is one node of a quorum keyspace: a storage replica for the keys
// it owns and a coordinator for the requests of clients in its region.
type Replica struct {
	// reps carves the fast path's read replies: one allocation per
	// chunk, not per GET (issue 17).
	reps slab.Slab[wire.Reply]

	ks     *Keyspace
	id     wire.NodeID
	region int
	clock  hlc.Clock
	rank   []int // rank[n]: position of node n by proximity from this node
	ops    map[uint64]*op
	nextOp uint64
	// needs[l] is level l's requirement for a coordinator here (or the
	// error that makes l unusable here), computed once.
	needs    [wire.All + 1]need
	needErrs [wire.All + 1]error
	// queryNeed is what a query-ordered write's query round needs here
	// (the function of that name).
	queryNeed need
	// queryErrs[0][l], queryErrs[1][l]: why a write, a read, at level l
	// is refused here under query order (Keyspace.queryRefusal), or nil.
	queryErrs [2][wire.All + 1]error
	scratch   []wire.NodeID
	// ownsRegion: this node is its region's only node and the region
	// keeps a replica of every key, so it holds every key's replica here
	// and selfSuffices need not hash the key to find it.
	ownsRegion bool
	// peers[n] bounds how far this node's clock is ahead of node n's,
	// under commit_wait measured (clocks.go); nil otherwise.
	peers     []peerClock
	rho       float64 // MaxDriftPPM as a fraction
	epoch     int64   // this incarnation: the wall time Start read
	probeTick probeTimer
	// ceiling is at or above the timestamp of every version this
	// replica's store holds: a version stamped above it is newer than the
	// key's record, whatever that is, so apply writes it without reading
	// the record first (doc.go, "Writes without a read").
	ceiling hlc.Timestamp
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	t := ks.topo
	rank := t.ProximityRank(id)
	r := &Replica{ks: ks, id: id, region: t.RegionOf(id), rank: rank, ops: make(map[uint64]*op), rho: ks.cfg.MaxDriftPPM / 1e6}
	for _, l := range wire.Levels() {
		r.needs[l], r.needErrs[l] = requirement(l, ks.cfg.ReplicasPerRegion, r.region)
	}
	for _, l := range wire.Levels() {
		r.queryErrs[0][l] = ks.queryRefusal(l, false, r.region)
		r.queryErrs[1][l] = ks.queryRefusal(l, true, r.region)
	}
	r.queryNeed = queryNeed(ks.cfg, r.region)
	r.ownsRegion = len(t.ByRegion[r.region]) == 1 && ks.cfg.ReplicasPerRegion[r.region] > 0
	return r
}

// opPhase is where a coordinated operation stands.
type opPhase uint8

const (
	phaseQuery   opPhase = iota + 1 // query-ordered write: waiting for the versions of a read-level set
	phaseCollect                    // waiting for acks or read responses
	phaseRepair                     // read: waiting for repair acks
	phaseWait                       // waiting out commit wait
)

// op is a request this node coordinates.
type op struct {
	id       uint64
	req      *wire.Request
	need     need
	phase    opPhase
	replicas []wire.NodeID // nearest first
	asked    []bool
	answered []bool
	recs     []store.Record // read: each replica's answer
	found    []bool
	got      []int // answers per region
	version  wire.Version
	// above is the highest version a query-ordered write's query round
	// found; the write is stamped above it.
	above    wire.Version
	conflict bool // a conditional write whose condition failed; version is the current one
	best     store.Record
	hasBest  bool
	repairs  int // repair acks still missing
	timeout  env.TimerID
	spec     env.TimerID
	timers   [timerCommitWait]opTimer // payloads, by kind − 1 (timer)
}

type timerKind uint8

const (
	timerTimeout timerKind = iota + 1
	timerSpeculate
	timerCommitWait
)

type opTimer struct {
	op   uint64
	kind timerKind
}

// timer is o's payload for a timer of kind k: a pointer into o, so that
// arming a timer allocates nothing (a boxed opTimer was an allocation per
// timer, up to three per read).
func (o *op) timer(k timerKind) *opTimer {
	t := &o.timers[k-1]
	*t = opTimer{o.id, k}
	return t
}

// Start implements env.Replica. All durable state is in the store, so a
// restarted replica has little to recover; in-flight coordinations are lost
// and their clients time out.
//
// Two things guard against the previous incarnation. Operation IDs start at
// a random point, so an answer to an operation of the crashed incarnation,
// still in flight, matches no new operation. And the HLC starts 2δ ahead of
// the physical clock: the old incarnation issued no wall time beyond true
// time + δ, and now true time is at least the clock − δ, so every version
// issued from here on is newer than every version issued before the crash,
// and no (timestamp, node) pair is reused for a different value.
func (r *Replica) Start(e env.Env) {
	r.nextOp = e.Rand().Uint64()>>1 | 1 // never 0: op 0 marks fast-path writes
	now := e.Wall()
	r.clock.Observe(now, hlc.Timestamp{WallNanos: now + 2*int64(r.ks.cfg.MaxClockOffset)})
	// What the store holds was stamped before this start, by HLCs whose
	// wall part came from a physical clock (at most true time + δ) or
	// from a start like this one (at most true time + 3δ): at most the
	// clock + 4δ now (doc.go, "Writes without a read").
	r.ceiling = hlc.Timestamp{WallNanos: now + 4*int64(r.ks.cfg.MaxClockOffset) + 1}
	r.epoch = now
	r.startProbes(e)
}

// Request implements env.Replica: coordinate a client request.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	level := req.Level
	isRead := req.Op == wire.OpGet
	if req.Op == wire.OpTxn {
		r.txn(e, req)
		return
	}
	if req.Op != wire.OpGet && req.Op != wire.OpPut && req.Op != wire.OpDelete {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("quorum: unknown operation %s", req.Op)}})
		return
	}
	if level == wire.LevelDefault {
		level = r.ks.cfg.Write
		if isRead {
			level = r.ks.cfg.Read
		}
	}
	if level > wire.All {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("quorum: unknown consistency level %s", level)}})
		return
	}
	nd, err := r.needs[level], r.needErrs[level]
	if err == nil && !req.Cond {
		err = r.queryErrs[b2i(isRead)][level]
	}
	if err != nil {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: err.Error()}})
		return
	}
	if req.Cond && !isRead {
		if !r.ks.OrdersWrites() {
			e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: CondRefusal}})
			return
		}
	} else if r.selfSuffices(nd, req.Key) && r.fastPath(e, req) {
		return
	}
	r.nextOp++
	o := r.newOp(req, nd, isRead)
	r.ops[o.id] = o
	if isRead {
		r.startRead(e, o)
	} else {
		r.startWrite(e, o)
	}
}

// newOp is the operation coordinating req, its replicas nearest first.
// For a group of up to smallGroup replicas in as many regions (every
// preset world's), the op and its slices are one allocation (were seven,
// ~15% of a quorum run's allocations).
func (r *Replica) newOp(req *wire.Request, nd need, isRead bool) *op {
	regions := len(r.ks.cfg.ReplicasPerRegion)
	var o *op
	if regions > smallGroup {
		o = &op{got: make([]int, regions)}
		o.replicas = r.ks.Replicas(nil, req.Key)
	} else {
		a := new(opSmall)
		o = &a.op
		o.got = a.got[:regions]
		o.replicas = r.ks.Replicas(a.replicas[:0], req.Key)
		if len(o.replicas) <= smallGroup {
			o.asked, o.answered = a.asked[:len(o.replicas)], a.answered[:len(o.replicas)]
			if isRead {
				o.recs, o.found = a.recs[:len(o.replicas)], a.found[:len(o.replicas)]
			}
		}
	}
	o.id, o.req, o.need, o.phase = r.nextOp, req, nd, phaseCollect
	slices.SortFunc(o.replicas, func(a, b wire.NodeID) int { return r.rank[a] - r.rank[b] })
	if o.asked == nil {
		o.asked = make([]bool, len(o.replicas))
		o.answered = make([]bool, len(o.replicas))
	}
	if isRead && o.recs == nil {
		o.recs = make([]store.Record, len(o.replicas))
		o.found = make([]bool, len(o.replicas))
	}
	return o
}

// smallGroup is the most replicas, and regions, an opSmall has room for.
const smallGroup = 4

// opSmall is an op with its slices' backing arrays (newOp).
type opSmall struct {
	op
	replicas               [smallGroup]wire.NodeID
	asked, answered, found [smallGroup]bool
	got                    [smallGroup]int
	recs                   [smallGroup]store.Record
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// selfSuffices reports whether this node's own replica of key satisfies nd
// alone (ONE or LOCAL_ONE with a local replica, or a one-replica keyspace).
func (r *Replica) selfSuffices(nd need, key string) bool {
	if nd.total > 1 {
		return false
	}
	for reg, m := range nd.min {
		if m > 0 && (reg != r.region || m > 1) {
			return false
		}
	}
	if r.ownsRegion {
		return true
	}
	r.scratch = r.ks.ring.Replicas(r.scratch[:0], r.region, key, r.ks.cfg.ReplicasPerRegion[r.region])
	return slices.Contains(r.scratch, r.id)
}

// fastPath serves a request its own replica satisfies, with no operation
// state: the same answer the general path gives when the local replica is
// the first to answer. It declines (false) when commit wait would apply.
func (r *Replica) fastPath(e env.Env, req *wire.Request) bool {
	if req.Op == wire.OpGet {
		rec, ok, err := e.Store().Get(req.Key)
		if err != nil {
			return false
		}
		if ok && r.ks.commitWaitNs > 0 && rec.Version.TS.WallNanos+r.commitWait(e) >= e.Wall() {
			return false // a fresh version: the general path waits it out
		}
		rep := r.reps.New()
		*rep = wire.Reply{ID: req.ID, Client: req.Client, Version: rec.Version, Found: ok && !rec.Tombstone}
		if rep.Found {
			rep.Value = rec.Value
		}
		// The reply is the stored record and nothing else: it may leave
		// before the batch's sync if no write to the key awaits one.
		env.ReplyRead(e, rep)
		// Until the key is next written here (which withdraws it), every
		// read of it at this level would take this path and get this
		// record; the commit wait above only ever declines a version
		// younger than 2δ, its cap, so a record past that is answered at
		// once whatever the wait measured later (doc.go, "Published
		// reads").
		if !ok || r.ks.commitWaitNs == 0 || rec.Version.TS.WallNanos+r.ks.commitWaitNs < e.Wall() {
			env.PublishRead(e, req.Key, req.Level, rep, 0)
		}
		return true
	}
	if r.ks.commitWaitNs > 0 || r.ks.query {
		return false // the general path waits, or queries first
	}
	v := wire.Version{TS: r.clock.Now(e.Wall()), Node: r.id}
	rec := store.Record{Version: v, Tombstone: req.Op == wire.OpDelete}
	if !rec.Tombstone {
		rec.Value = req.Value
	}
	if err := r.applyStamped(e, req.Key, rec); err != nil {
		// A failed read: nothing was written or sent. (A failed write
		// fail-stopped the node, and this reply will not leave.)
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrUnavailable, Msg: "quorum: local store failed: " + err.Error()}})
		return true
	}
	// The other replicas get the write too; their acks (op 0) match no
	// operation and are dropped.
	r.scratch = r.ks.Replicas(r.scratch[:0], req.Key)
	for _, n := range r.scratch {
		if n != r.id {
			e.Send(n, &Mutate{Key: req.Key, Rec: rec})
		}
	}
	rep := r.reps.New()
	*rep = wire.Reply{ID: req.ID, Client: req.Client, Version: v}
	e.Reply(rep)
	return true
}

// startWrite starts a write: with query order, by its query round (the
// first phase of an ABD write, Attiya, Bar-Noy, Dolev 1995: the highest
// version of a read-level set of replicas), else at once by sendWrite.
func (r *Replica) startWrite(e env.Env, o *op) {
	if !r.ks.query || o.req.Cond || r.ks.cfg.skipQuery {
		r.sendWrite(e, o)
		return
	}
	o.phase = phaseQuery
	o.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, o.timer(timerTimeout))
	r.ask(e, o, r.queryNeed)
}

// endQuery ends a query-ordered write's query round once its answers
// satisfy the read level: the HLC observed every version they carried, so
// the version sendWrite stamps is above all of them.
func (r *Replica) endQuery(e env.Env, o *op) {
	e.CancelTimer(o.spec)
	for i := range o.replicas {
		o.asked[i], o.answered[i] = false, false
	}
	clear(o.got)
	o.phase = phaseCollect
	r.sendWrite(e, o)
}

// sendWrite stamps the write with the coordinator's HLC and sends it to
// every replica; it succeeds once the level's acks are in (Cassandra write
// path, seed 002 §3.2).
func (r *Replica) sendWrite(e env.Env, o *op) {
	if o.req.Cond {
		// Stamp above the version the write expects, which is then the
		// key's current one if the condition holds.
		r.clock.Observe(e.Wall(), o.req.Expected.TS)
	}
	o.version = wire.Version{TS: r.clock.Now(e.Wall()), Node: r.id}
	if !o.above.Less(o.version) {
		env.Invariant(e, false, "quorum: write of %q stamped %v, not above its query's %v", o.req.Key, o.version, o.above)
		return
	}
	rec := store.Record{Version: o.version}
	if o.req.Op == wire.OpDelete {
		rec.Tombstone = true
	} else {
		rec.Value = o.req.Value
	}
	m := &Mutate{Op: o.id, Key: o.req.Key, Rec: rec, Cond: o.req.Cond, Expected: o.req.Expected}
	local := false
	for i, n := range o.replicas {
		o.asked[i] = true
		if n == r.id {
			local = true
			continue
		}
		e.Send(n, m)
	}
	// The coordinator's own replica is written in place, as Cassandra
	// does, rather than through a message to itself.
	if local {
		if ack := r.mutate(e, m); ack != nil {
			r.onMutateAck(e, r.id, ack)
		}
	}
	if r.ops[o.id] != nil && o.timeout == 0 {
		o.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, o.timer(timerTimeout))
	}
}

// startRead asks the nearest replicas that together satisfy the level.
func (r *Replica) startRead(e env.Env, o *op) {
	if r.ask(e, o, o.need) {
		o.timeout = e.SetTimer(r.ks.cfg.ReadTimeout, o.timer(timerTimeout))
	}
}

// ask sends Read to the nearest replicas that together satisfy nd (a
// read's level, or a query-ordered write's query round), reading the
// coordinator's own replica in place, and arms the speculative retry. It
// reports whether o is still pending.
func (r *Replica) ask(e env.Env, o *op, nd need) bool {
	// First the nearest replicas each region's minimum needs, then the
	// nearest others until the total is reached.
	var buf [smallGroup]int // no allocation in a small world
	perRegion := buf[:min(len(o.got), smallGroup)]
	if len(o.got) > smallGroup {
		perRegion = make([]int, len(o.got))
	}
	n := 0
	for i, id := range o.replicas {
		reg := r.ks.topo.RegionOf(id)
		if perRegion[reg] < nd.min[reg] {
			o.asked[i] = true
			perRegion[reg]++
			n++
		}
	}
	for i := range o.replicas {
		if n >= nd.total {
			break
		}
		if !o.asked[i] {
			o.asked[i] = true
			n++
		}
	}
	var farthest time.Duration
	local := false
	for i, id := range o.replicas {
		if !o.asked[i] {
			continue
		}
		if id == r.id {
			local = true
			continue
		}
		e.Send(id, &Read{Op: o.id, Key: o.req.Key})
		farthest = max(farthest, r.ks.topo.MeanRTT(r.id, id))
	}
	if local {
		// Read the coordinator's own replica in place.
		rec, ok, err := e.Store().Get(o.req.Key)
		if err != nil {
			e.Log().Error("quorum: read failed", "key", o.req.Key, "err", err)
		} else {
			r.onReadResp(e, r.id, &ReadResp{Op: o.id, Key: o.req.Key, Found: ok, Rec: rec})
		}
		if r.ops[o.id] == nil || o.phase != phaseQuery && o.req.Op != wire.OpGet {
			return false // answered, or the query round ended, from the local replica alone
		}
	}
	spec := r.ks.cfg.SpeculativeRetry
	if spec == 0 {
		spec = farthest*3/2 + 5*time.Millisecond
	}
	if n < len(o.replicas) {
		o.spec = e.SetTimer(spec, o.timer(timerSpeculate))
	}
	return true
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *Mutate:
		if ack := r.mutate(e, m); ack != nil {
			e.Send(from, ack)
		}
	case *Read:
		rec, ok, err := e.Store().Get(m.Key)
		if err != nil {
			e.Log().Error("quorum: read failed", "key", m.Key, "err", err)
			return
		}
		e.Send(from, &ReadResp{Op: m.Op, Key: m.Key, Found: ok, Rec: rec})
	case *MutateAck:
		r.onMutateAck(e, from, m)
	case *ReadResp:
		r.onReadResp(e, from, m)
	case *Clock:
		r.onClock(e, from, m)
	}
}

// apply stores rec if it is newer than what the replica has: last writer
// wins, so replicas converge whatever order versions arrive in.
//
// Storage failure (doc.go): a failed read refuses the write — nothing was
// stored, and the caller acknowledges nothing; a failed write fail-stops
// the node, since it may or may not have taken effect.
func (r *Replica) apply(e env.Env, key string, rec store.Record) error {
	r.clock.Observe(e.Wall(), rec.Version.TS)
	return r.applyStamped(e, key, rec)
}

// applyStamped is apply for a record this replica's clock has just
// stamped (Clock.Now): the clock is already at its version, so observing
// it would only read the wall clock again (a clock read per write was 3%
// of SET -P 16's CPU).
func (r *Replica) applyStamped(e env.Env, key string, rec store.Record) error {
	// Last writer wins: the record stays if it is at least as new. A
	// version above the ceiling is newer than any record here, so the
	// read is skipped (doc.go, "Writes without a read").
	if !r.ceiling.Less(rec.Version.TS) {
		cur, ok, err := e.Store().Get(key)
		if err != nil {
			e.Log().Warn("quorum: write refused: the store failed a read", "key", key, "err", err)
			return err
		}
		if ok && !cur.Version.Less(rec.Version) {
			return nil
		}
	}
	return r.put(e, key, rec)
}

// put stores rec under key and raises the ceiling to its version.
func (r *Replica) put(e env.Env, key string, rec store.Record) error {
	if err := e.Store().Put(key, rec); err != nil {
		err = fmt.Errorf("quorum: write %q: %w", key, err)
		e.FailStop(err)
		return err
	}
	if !r.ks.cfg.blindBelowCeiling && r.ceiling.Less(rec.Version.TS) {
		r.ceiling = rec.Version.TS
	}
	return nil
}

// mutate applies m at this replica and returns its acknowledgement, or nil
// if nothing was stored: the coordinator counts acks as durable copies.
// A conditional m (only ever from this node's own coordinator: conditional
// writes run on single-node clusters) is checked against the key's record
// first; its version, from this node's HLC after it observed the expected
// one, is above that record's whenever the condition holds, so last writer
// wins cannot drop it.
func (r *Replica) mutate(e env.Env, m *Mutate) *MutateAck {
	if !m.Cond {
		if r.apply(e, m.Key, m.Rec) != nil {
			return nil
		}
		return &MutateAck{Op: m.Op, Key: m.Key}
	}
	cur, ok, err := e.Store().Get(m.Key)
	if err != nil {
		e.Log().Warn("quorum: conditional write refused: the store failed a read", "key", m.Key, "err", err)
		return nil
	}
	if !m.Expected.Holds(cur.Version, ok, cur.Tombstone) && !r.ks.cfg.ignoreCond {
		return &MutateAck{Op: m.Op, Key: m.Key, Conflict: true, Version: cur.Version}
	}
	if !env.Invariant(e, !ok || cur.Version.Less(m.Rec.Version), "quorum: conditional write of %q stamped %v at or below its record's %v", m.Key, m.Rec.Version, cur.Version) {
		return nil
	}
	if r.apply(e, m.Key, m.Rec) != nil {
		return nil
	}
	return &MutateAck{Op: m.Op, Key: m.Key, Version: m.Rec.Version}
}

func (o *op) index(n wire.NodeID) int { return slices.Index(o.replicas, n) }

func (r *Replica) onMutateAck(e env.Env, from wire.NodeID, m *MutateAck) {
	o := r.ops[m.Op]
	if o == nil || o.req.Key != m.Key {
		return
	}
	i := o.index(from)
	if i < 0 || !o.asked[i] {
		return
	}
	switch {
	case o.req.Op != wire.OpGet && o.phase == phaseCollect:
		if o.answered[i] {
			return // duplicate
		}
		o.answered[i] = true
		o.got[r.ks.topo.RegionOf(from)]++
		if o.req.Cond {
			// The key's one replica decided: the version it wrote, or
			// the one it found instead (an observation, which waits out
			// the commit wait like a read's).
			o.version, o.conflict = m.Version, m.Conflict
			r.finish(e, o)
			return
		}
		if o.need.met(o.got) {
			r.finish(e, o)
		}
	case o.req.Op == wire.OpGet && o.phase == phaseRepair:
		if !o.answered[i] {
			return
		}
		o.answered[i] = false // repair acknowledged
		if o.repairs--; o.repairs == 0 {
			r.finish(e, o)
		}
	}
}

func (r *Replica) onReadResp(e env.Env, from wire.NodeID, m *ReadResp) {
	o := r.ops[m.Op]
	if o == nil || o.req.Key != m.Key {
		return
	}
	if o.req.Op == wire.OpGet && o.phase != phaseCollect || o.req.Op != wire.OpGet && o.phase != phaseQuery {
		return
	}
	i := o.index(from)
	if i < 0 || !o.asked[i] || o.answered[i] {
		return
	}
	if m.Found {
		r.clock.Observe(e.Wall(), m.Rec.Version.TS)
	}
	if o.phase == phaseQuery {
		o.answered[i] = true
		o.got[r.ks.topo.RegionOf(from)]++
		if m.Found && o.above.Less(m.Rec.Version) {
			o.above = m.Rec.Version
		}
		if r.queryNeed.met(o.got) {
			r.endQuery(e, o)
		}
		return
	}
	o.answered[i], o.found[i], o.recs[i] = true, m.Found, m.Rec
	o.got[r.ks.topo.RegionOf(from)]++
	if !o.need.met(o.got) {
		return
	}
	// Resolve: the highest version wins; blocking read repair brings every
	// replica that answered up to it before the read returns, so no later
	// read overlapping this one can return an older value (seed 002 §3.2;
	// Cassandra's blocking read repair).
	for j := range o.replicas {
		if o.answered[j] && o.found[j] && (!o.hasBest || o.best.Version.Less(o.recs[j].Version)) {
			o.best, o.hasBest = o.recs[j], true
		}
	}
	o.phase = phaseRepair
	if o.hasBest {
		selfStale := false
		for j, id := range o.replicas {
			if !o.answered[j] {
				continue
			}
			if o.found[j] && o.recs[j].Version == o.best.Version {
				o.answered[j] = false // up to date: no repair ack expected
				continue
			}
			o.repairs++
			if id == r.id {
				selfStale = true
				continue
			}
			e.Send(id, &Mutate{Op: o.id, Key: o.req.Key, Rec: o.best, Repair: true})
		}
		if selfStale {
			// The coordinator's own replica is stale: repair it in place.
			// Its ack may complete the read.
			if err := r.apply(e, o.req.Key, o.best); err != nil {
				return // the read times out
			}
			r.onMutateAck(e, r.id, &MutateAck{Op: o.id, Key: o.req.Key})
			return
		}
	}
	if o.repairs == 0 {
		r.finish(e, o)
	}
}

// finish answers the client once the commit wait has passed: the clock must
// read beyond the version's wall time plus twice the offset bound (or the
// measured bound), so any operation that starts after the answer arrives
// is stamped, by any coordinator, with a later version (doc.go, "Clock
// assumption", "Measured commit wait"). It re-checks the clock each time
// the wait's timer fires, since the clock may have been stepped, and the
// measured bound may have changed, meanwhile.
func (r *Replica) finish(e env.Env, o *op) {
	var cw int64
	if r.waits(o) {
		cw = r.commitWait(e)
		if wait := o.wall() + cw - e.Wall(); wait >= 0 {
			if o.phase != phaseWait {
				// The answer is decided; only time stands between it and
				// the client, bounded by 2δ plus the HLC's lead.
				o.phase = phaseWait
				e.CancelTimer(o.spec)
				e.CancelTimer(o.timeout)
			}
			// A microsecond past the deadline: the clock must read beyond it,
			// and clock arithmetic may round; and a measured bound ages
			// meanwhile (clocks.go).
			if r.peers != nil {
				wait += aging(wait, r.rho)
			}
			e.SetTimer(time.Duration(wait)+time.Microsecond, o.timer(timerCommitWait))
			return
		}
	}
	r.reply(e, o, cw)
}

// waits reports whether o's answer waits out the commit wait: a write, or
// a read that found a version.
func (r *Replica) waits(o *op) bool {
	return r.ks.commitWaitNs > 0 && (o.hasBest || o.req.Op != wire.OpGet)
}

// wall is the wall time of the version o's answer carries.
func (o *op) wall() int64 {
	if o.req.Op == wire.OpGet {
		return o.best.Version.TS.WallNanos
	}
	return o.version.TS.WallNanos
}

// reply answers o. finish found o's commit wait, cw, over; the invariant
// checks against that same cw, since under commit_wait measured a bound
// read again could have aged by a nanosecond while the wall clock had not
// moved.
func (r *Replica) reply(e env.Env, o *op, cw int64) {
	// Linearizability rests on the commit wait (doc.go, "Clock
	// assumption"): no answer leaves before the clock has passed it. (The
	// test comes before Invariant, whose arguments are boxed even when it
	// holds: two allocations on every read.)
	if r.waits(o) && e.Wall() <= o.wall()+cw {
		env.Invariant(e, false, "quorum: %q answered at %d, within the commit wait of its version's %d", o.req.Key, e.Wall(), o.wall())
		return
	}
	delete(r.ops, o.id)
	e.CancelTimer(o.timeout)
	e.CancelTimer(o.spec)
	rep := &wire.Reply{ID: o.req.ID, Client: o.req.Client, Version: o.version}
	if o.conflict {
		rep.Err = &wire.Error{Code: wire.ErrConflict, Msg: fmt.Sprintf("quorum: %q is at version %v, not the expected %v; nothing was written", o.req.Key, o.version, o.req.Expected)}
	}
	if o.req.Op == wire.OpGet {
		rep.Version = o.best.Version
		rep.Found = o.hasBest && !o.best.Tombstone
		if rep.Found {
			rep.Value = o.best.Value
		}
	}
	e.Reply(rep)
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	if _, ok := payload.(*probeTimer); ok {
		r.probe(e)
		return
	}
	t, ok := payload.(*opTimer)
	if !ok {
		return
	}
	o := r.ops[t.op]
	if o == nil {
		return
	}
	switch t.kind {
	case timerTimeout:
		delete(r.ops, o.id)
		e.CancelTimer(o.spec)
		e.Reply(&wire.Reply{ID: o.req.ID, Client: o.req.Client, Err: &wire.Error{
			Code: wire.ErrTimeout, Msg: "quorum: not enough replicas answered in time"}})
	case timerSpeculate:
		if o.phase != phaseCollect && o.phase != phaseQuery {
			return
		}
		for i, id := range o.replicas {
			if !o.asked[i] {
				o.asked[i] = true
				if id == r.id { // not reached: the coordinator asks itself first
					continue
				}
				e.Send(id, &Read{Op: o.id, Key: o.req.Key})
			}
		}
	case timerCommitWait:
		r.finish(e, o)
	}
}
