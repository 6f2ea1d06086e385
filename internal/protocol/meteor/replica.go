package meteor

import (
	"errors"
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
	return &Keyspace{cfg: cfg, topo: t, ring: ring.New(t)}, nil
}

// Config returns the keyspace's policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// Replicas appends the replicas of key to dst, region by region (the same
// placement as the quorum protocol: MeteorShower runs on top of it).
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	return k.ring.ReplicasEach(dst, key, k.cfg.ReplicasPerRegion)
}

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Theta is θt for a read coordinated by gateway gw of a key whose
// replicas are reps (§4.2.2, "Summary of θt"): the read's view time is
// T_read − θt.
//
//   - M1: 0.
//   - M2: the write level's order statistic of the one-way latencies from
//     the gateway to the replicas (ONE: minimum, QUORUM: median, ALL:
//     maximum), less ε.
//
// θt decides only how long a read waits and how stale its answer may be:
// the read returns the newest committed version at its view time whatever
// θt is (doc.go, "Reads"), so no choice of θt can break the guarantee.
func (k *Keyspace) Theta(lat func(wire.NodeID) time.Duration, reps []wire.NodeID) time.Duration {
	if k.cfg.Mode == M1 {
		return 0
	}
	if k.cfg.Theta > 0 {
		return k.cfg.Theta
	}
	lats := make([]time.Duration, 0, len(reps))
	for _, p := range reps {
		lats = append(lats, lat(p))
	}
	return k.cfg.orderStat(lats) - k.cfg.MaxClockSkew
}

// orderStat is the write level's order statistic of lats (sorted in place).
func (c *Config) orderStat(lats []time.Duration) time.Duration {
	slices.Sort(lats)
	switch c.Write {
	case wire.One:
		return lats[0]
	case wire.All:
		return lats[len(lats)-1]
	}
	return lats[(len(lats)-1)/2]
}

// Lead is how far ahead of its closure gateway gw stamps a write that needs
// need acknowledgements from reps: the need-th smallest one-way latency to
// the replicas live says are up, plus ε and WriteLead, so the write reaches
// that many replicas before their closures pass its timestamp (doc.go,
// "Closure"). Farther replicas refuse it and keep a copy. If fewer than
// need replicas are live, the largest latency.
func (k *Keyspace) Lead(lat func(wire.NodeID) time.Duration, reps []wire.NodeID, need int, live func(wire.NodeID) bool) time.Duration {
	// Sized up front, as in Theta: a few latencies then fit on the stack
	// (grown by append, they were an allocation on every read).
	lats := make([]time.Duration, 0, len(reps))
	var far, farLive time.Duration
	for _, p := range reps {
		l := lat(p)
		far = max(far, l)
		if live == nil || live(p) {
			lats = append(lats, l)
			farLive = max(farLive, l)
		}
	}
	pick := far
	switch {
	case need >= 1 && need == len(lats):
		pick = farLive // the largest: no need to sort (a read's resend wait)
	case need >= 1 && need < len(lats):
		slices.Sort(lats)
		pick = lats[need-1]
	}
	return pick + k.cfg.MaxClockSkew + k.cfg.WriteLead
}

// maxLead bounds Lead over every key, for a gateway with latencies lat.
func (k *Keyspace) maxLead(lat func(wire.NodeID) time.Duration) time.Duration {
	all := make([]wire.NodeID, len(k.topo.Nodes))
	for i := range all {
		all[i] = wire.NodeID(i)
	}
	return k.Lead(lat, all, len(all), nil)
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
	// finished are the ops finished since the last request (finish).
	finished []*op
	// slabs carve what a request makes that lives about as long as it
	// does (its timers' payloads, a read's messages, the reply) a chunk at
	// a time, rather than in an allocation each (package slab).
	slabs struct {
		replies   slab.Slab[wire.Reply]
		readReqs  slab.Slab[ReadReq]
		readResps slab.Slab[ReadResp]
		opTimers  slab.Slab[opTimer]
		resends   slab.Slab[resendTimer]
	}

	// Gateway: each client's order floor, the largest view time or write
	// timestamp of its completed operations (doc.go, "Program order"), and
	// a floor for every client after a restart.
	floors    map[wire.ClientID]int64
	bootFloor int64
	// stampBound is stored under stampKey before any write stamped beyond
	// it leaves: a restarted gateway's stamps and floors start above it.
	stampBound int64

	// Closure (doc.go): no write stamped at or before closed is applied
	// from now on; durable is the bound stored under closedKey. gcMark is
	// the compaction watermark, closure − Horizon at the last sweep: at or
	// below it, chains and the status map are not exact, and reads are
	// refused. Both only grow, and a restart resumes above them.
	closed, durable, gcMark int64

	// Status dispatcher (status.go).
	epoch   uint64
	genesis bool
	seq     uint64        // the last status sent
	pending []Entry       // applied since the last status
	history []sentPayload // the last Redundant payloads, newest last
	counts  []int         // by node, zero between uses (splitPending)
	// Status map and read subscription map (status.go, read.go).
	peers   []*peerView // by node ID (peer)
	parked  []pread
	reports map[string]*keyReports // the versions peers reported, by key
	pulls   map[pullKey]int64      // outstanding pulls and when they were sent
	dirty   map[string]struct{}    // keys with more than one version somewhere
	// dirtyGen counts removals from dirty (undirty), from 1: a keyInfo
	// whose dirtyGen is still it knows its key is in dirty.
	dirtyGen uint64
	// keys caches each key's replicas and decoded chain (versions.go).
	keys map[string]*keyInfo

	stats Stats
}

// Stats are a replica's counters since it started: as a replica, the
// writes it applied and refused (closure passed: kept as copies) and the
// versions compaction dropped; as a gateway, the writes it restamped after
// enough refusals and the reads it resent to the next replica; the pulls
// it sent; and, as a gauge, the reads waiting in its subscription map.
type Stats struct {
	Applied, Refused, Compacted uint64
	Restamps, ReadFailovers     uint64
	Pulls                       uint64
	ReadsWaiting                int
}

// Stats returns the replica's counters.
func (r *Replica) Stats() Stats {
	s := r.stats
	s.ReadsWaiting = len(r.parked)
	return s
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	t := ks.topo
	rank := t.ProximityRank(id)
	return &Replica{
		ks: ks, id: id, rank: rank, ops: make(map[uint64]*op),
		floors:   make(map[wire.ClientID]int64),
		peers:    make([]*peerView, len(t.Nodes)),
		counts:   make([]int, len(t.Nodes)),
		reports:  make(map[string]*keyReports),
		pulls:    make(map[pullKey]int64),
		dirty:    make(map[string]struct{}),
		dirtyGen: 1,
		keys:     make(map[string]*keyInfo),
	}
}

// op is a request this node coordinates as gateway.
type op struct {
	id       uint64
	req      *wire.Request
	ki       *keyInfo
	replicas []wire.NodeID // nearest first; shared (keyInfo.ranked)
	answered []bool        // write: by replica, whether it answered this attempt
	acks     int           // write: replicas that applied this attempt
	rejs     int           // write: replicas that refused it (closure passed)
	need     int
	attempt  int
	version  wire.Version // write: this attempt's version
	view     int64        // read: the view time
	tries    int          // read: resends so far (each to the next replica)
	timeout  env.TimerID
}

// record is write o's current attempt as a versioned record.
func (o *op) record() store.Record {
	rec := store.Record{Version: o.version, Tombstone: o.req.Op == wire.OpDelete}
	if !rec.Tombstone {
		rec.Value = o.req.Value
	}
	return rec
}

// maxFinished bounds Replica.finished.
const maxFinished = 64

// finish ends operation o: it is no longer found by its ID, and the next
// Request may reuse its memory (newOp). Not before: the handler that
// finished o may read it still (startRead arms o's resend after a read
// this node served has answered it), and nothing else keeps o (timers
// and messages name it by ID), and a request arrives only between
// handlers.
func (r *Replica) finish(o *op) {
	delete(r.ops, o.id)
	if len(r.finished) < maxFinished {
		r.finished = append(r.finished, o)
	}
}

// newOp returns an op to fill: a finished one, or a new one. Reusing them
// spares an allocation per request (ops were a tenth of a run's allocated
// bytes), and the reused memory is warm.
func (r *Replica) newOp() *op {
	if n := len(r.finished); n > 0 {
		o := r.finished[n-1]
		r.finished[n-1] = nil
		r.finished = r.finished[:n-1]
		return o
	}
	return new(op)
}

type opTimer struct{ op uint64 }

// opTimer is the payload of operation id's timeout.
func (r *Replica) opTimer(id uint64) *opTimer {
	t := r.slabs.opTimers.New()
	t.op = id
	return t
}

// resendTimer resends an operation's messages to the replicas that have not
// answered attempt: a lost write copy would otherwise leave the write
// undecided (a far replica refuses it), and a lost read would wait for the
// read timeout.
// restampTimer stamps attempt of an operation again (onWriteAck).
type restampTimer struct {
	op      uint64
	attempt int
}

type resendTimer struct {
	op      uint64
	attempt int
	wait    time.Duration
}

// stampAhead is how far above a write's stamp the stored stamp bound is
// set, so the bound is written a few times a second at most.
const stampAhead = 250 * time.Millisecond

type dispatchTimer struct{}

type sweepTimer struct{}

// Start implements env.Replica.
//
// Operation IDs start at a random point, so an answer meant for a previous
// incarnation matches no new operation; the epoch is random for the same
// reason, and the boot marker tells a first start (Genesis) from a restart.
// The closure resumes from the stored bound. Clients' order floors were
// lost, so every read from here on views at least the stored bound on this
// gateway's stamps (and now + the largest lead), and the HLC resumes above
// it: every write this gateway stamped before it crashed is at or before
// that bound (startWrite).
func (r *Replica) Start(e env.Env) {
	r.nextOp = e.Rand().Uint64()>>1 | 1
	r.epoch = e.Rand().Uint64() | 1
	now := e.Now()
	r.bootFloor = now + int64(r.ks.maxLead(e.Latency))
	// The bounds a previous incarnation stored are promises it made: a
	// read that fails cannot be taken for their absence (fail-stop).
	stamps, hasStamps, err1 := e.Store().Get(stampKey)
	closed, hasClosed, err2 := e.Store().Get(closedKey)
	_, booted, err3 := e.Store().Get(bootKey)
	if err := errors.Join(err1, err2, err3); err != nil {
		e.FailStop(fmt.Errorf("meteor: start: %w", err))
		return
	}
	if hasStamps {
		r.stampBound = stamps.Version.TS.WallNanos
		r.bootFloor = max(r.bootFloor, r.stampBound)
		r.clock.Observe(now, stamps.Version.TS)
	}
	r.closed = now
	if hasClosed {
		r.closed = max(r.closed, closed.Version.TS.WallNanos)
		r.durable = closed.Version.TS.WallNanos
		// Every watermark before the crash was at most the stored bound
		// less Horizon; every view this gateway gave a read was at most
		// its stored closure (startRead).
		r.gcMark = max(0, r.durable-int64(r.ks.cfg.Horizon))
	}
	r.bootFloor = max(r.bootFloor, r.closed)
	if !booted {
		if put(e, bootKey, store.Record{Value: []byte{1}}) != nil {
			return
		}
		r.genesis = true
	}
	e.SetTimer(r.ks.cfg.DispatchInterval, dispatchTimer{})
	e.SetTimer(sweepInterval, sweepTimer{})
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
	ki := r.key(req.Key)
	o := r.newOp()
	*o = op{id: r.nextOp, req: req, ki: ki, replicas: ki.ranked}
	// The read rule is derived from the keyspace's write level, so a
	// request's level can only strengthen a write (more acks keep
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
	r.ops[o.id] = o
	if req.Op == wire.OpGet {
		o.timeout = e.SetTimer(r.ks.cfg.ReadTimeout, r.opTimer(o.id))
		r.startRead(e, o)
	} else {
		o.answered = make([]bool, len(o.replicas))
		o.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, r.opTimer(o.id))
		r.startWrite(e, o)
	}
}

// floor is client c's order floor. Floors below the compaction watermark
// are forgotten (sweep), so the watermark is a floor for every client.
func (r *Replica) floor(c wire.ClientID) int64 { return max(r.floors[c], r.bootFloor, r.gcMark) }

func (r *Replica) raiseFloor(c wire.ClientID, ts int64) {
	if ts > r.floors[c] {
		r.floors[c] = ts
	}
}

// startWrite stamps the write ahead of the gateway's closure by the key's
// lead, and after its client's floor, and sends the write notification to
// every replica (Fig. 4.15b). Writes are totally ordered by (timestamp,
// gateway ID) (Lemma 1); a client's write is ordered after everything it
// read or wrote before (doc.go, "Program order").
func (r *Replica) startWrite(e env.Env, o *op) {
	need := o.need
	if r.ks.cfg.LeadAll {
		need = len(o.replicas)
	}
	lead := r.ks.Lead(e.Latency, o.replicas, need, func(p wire.NodeID) bool { return r.live(e, p) }) << min(o.attempt, 6)
	// From the local closure, not the clock: a clock stepped back must not
	// make this replica refuse its own stamp forever. The closure runs up
	// to ClosureLead ahead of the clock (promise), and the lead exceeds
	// ClosureLead (Config.Validate), so the stamp passes the closure.
	phys := max(e.Now(), r.closed-int64(r.ks.cfg.closureLead())) + int64(lead)
	if fl := r.floor(o.req.Client); phys <= fl {
		phys = fl + 1
	}
	o.version = wire.Version{TS: r.clock.Now(phys), Node: r.id}
	if ts := o.version.TS.WallNanos; ts > r.stampBound {
		bound := ts + int64(stampAhead)
		if put(e, stampKey, store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: bound}}}) != nil {
			return
		}
		r.stampBound = bound
	}
	o.acks, o.rejs = 0, 0
	clear(o.answered)
	rec := o.record()
	local := false
	for _, n := range o.replicas {
		if n == r.id {
			local = true
			continue
		}
		e.Send(n, &Write{Op: o.id, Key: o.req.Key, Rec: rec})
	}
	r.armResend(e, o, 2*lead)
	if local {
		out, err := r.applyWrite(e, o.req.Key, rec)
		if err != nil {
			return // no local ack; the others may still commit it
		}
		if out != forgotten {
			r.onWriteAck(e, r.id, &WriteAck{Op: o.id, Key: o.req.Key, Rej: out == refused, Version: rec.Version})
		}
	}
}

// live reports whether peer p seems up: a status from it arrived within
// the last few dispatch intervals (or none was ever expected yet).
func (r *Replica) live(e env.Env, p wire.NodeID) bool {
	if p == r.id {
		return true
	}
	pv := r.peer(p)
	if pv == nil {
		return true
	}
	return e.Now()-pv.heardAt <= int64(5*r.ks.cfg.DispatchInterval+20*time.Millisecond)+2*int64(e.Latency(p))
}

// closure is the closure this replica promises from now on: its clock, or
// a later closure it promised, and never more than the bound stored under
// closedKey. The bound is raised (stored) when the clock passes it; the
// handler's messages leave after the store syncs, so every promise that
// leaves — in a status, in a read this replica counted itself in — survives
// a restart whose clock reads earlier. If the store fails, the node
// fail-stops and the closure stays where it was.
func (r *Replica) closure(e env.Env) int64 { return r.promise(e, e.Now()) }

// promise raises the closure to t (if later than both the closure and the
// clock) and returns it: from now on no write stamped at or before it is
// applied. A status promises its clock plus ClosureLead (dispatch), and a
// read this replica serves may raise its own closure as far (tryRead). The
// bound is stored first, as in closure.
func (r *Replica) promise(e env.Env, t int64) int64 {
	next := max(r.closed, e.Now(), t)
	if next > r.durable {
		bound := next + int64(durableAhead)
		if put(e, closedKey, store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: bound}}}) != nil {
			return r.closed
		}
		r.durable = bound
	}
	r.closed = next
	return r.closed
}

// writeOutcome is a replica's answer to a write copy.
type writeOutcome uint8

const (
	accepted  writeOutcome = iota + 1
	refused                // the closure had passed it: kept as a copy
	forgotten              // compacted: whether it was applied is unknown here
)

// applyWrite is writeLocal (Fig. 4.14b) over a multi-version chain: add rec
// to key's versions and register it for the next status message, unless
// the closure has passed its timestamp — the replica has then told its
// peers it holds nothing stamped that early beyond what it reported, so it
// refuses the write (doc.go, "Closure") and keeps the record only as a copy
// that a read here may serve if the write commits elsewhere. A duplicate
// gets the first answer again; a duplicate of a version at or below the
// compaction watermark may have been compacted away, and gets no answer
// (answering "refused" for a version this replica applied would let the
// gateway restamp a committed write).
func (r *Replica) applyWrite(e env.Env, key string, rec store.Record) (writeOutcome, error) {
	ki := r.key(key)
	chain, err := r.readChain(e.Store(), key, ki)
	if err != nil {
		e.Log().Warn("meteor: write copy refused: the store failed a read", "key", key, "err", err)
		return 0, err
	}
	if i := chainIndex(chain, rec.Version); i >= 0 {
		if chain[i].Applied {
			return accepted, nil
		}
		return refused, nil
	}
	if rec.Version.TS.WallNanos <= r.gcMark {
		return forgotten, nil
	}
	closed := r.closure(e)
	if r.ks.cfg.clockOnly {
		closed = e.Now() // teeth: the promise ahead of the clock is not kept
	}
	ok := rec.Version.TS.WallNanos > closed || r.ks.cfg.acceptLate
	chain, err = r.storeInsert(e, ki, chain, link{Record: rec, Applied: ok})
	if err != nil {
		return 0, err
	}
	if len(chain) > 1 {
		r.dirty[key] = struct{}{}
	}
	if !ok {
		r.stats.Refused++
		return refused, nil
	}
	r.pending = append(r.pending, Entry{key, rec.Version})
	r.stats.Applied++
	return accepted, nil
}

func (r *Replica) onWriteAck(e env.Env, from wire.NodeID, m *WriteAck) {
	o := r.ops[m.Op]
	if o == nil || o.req.Op == wire.OpGet || o.req.Key != m.Key || m.Version != o.version {
		return
	}
	i := slices.Index(o.replicas, from)
	if i < 0 || o.answered[i] {
		return
	}
	o.answered[i] = true
	w := r.ks.cfg.writeAcks(len(o.replicas))
	if m.Rej {
		o.rejs++
		if o.rejs > len(o.replicas)-w {
			// Enough replicas closed past the timestamp that this version
			// can never be committed (doc.go, "Commit"): no read will
			// return it, so the write can be stamped again, further ahead.
			o.attempt++
			r.stats.Restamps++
			// From a timer, not recursively: a local refusal would
			// otherwise restamp within this handler.
			e.SetTimer(time.Millisecond, restampTimer{op: o.id, attempt: o.attempt})
			return
		}
	} else {
		o.acks++
	}
	// Committed once w replicas applied it. A level above the keyspace's
	// asks that more replicas hold it durably; a replica that refused the
	// write holds it as a copy, which serves its reads.
	if o.acks >= w && o.acks+o.rejs >= o.need {
		r.finish(o)
		e.CancelTimer(o.timeout)
		r.raiseFloor(o.req.Client, o.version.TS.WallNanos)
		rep := r.slabs.replies.New()
		*rep = wire.Reply{ID: o.req.ID, Client: o.req.Client, Version: o.version}
		e.Reply(rep)
	}
}

// startRead sends the read to the nearest replica of the key (Fig. 4.15a)
// with its view time: T_read − θt, or the client's floor if that is later.
func (r *Replica) startRead(e env.Env, o *op) {
	srv := o.replicas[0]
	// The closure's stored bound covers now, and so the view unless the
	// client's floor is later (stored by then already): a restarted gateway
	// starts every client's floor above the views it gave (Start).
	r.closure(e)
	o.view = max(e.Now()-int64(r.ks.Theta(e.Latency, o.replicas)), r.floor(o.req.Client))
	r.sendRead(e, o, srv)
	r.armResend(e, o, 4*e.Latency(srv)+4*r.ks.cfg.DispatchInterval+r.ks.Lead(e.Latency, o.replicas, len(o.replicas), nil))
}

// sendRead asks replica srv (this node or a peer) to serve read o.
func (r *Replica) sendRead(e env.Env, o *op, srv wire.NodeID) {
	m := r.slabs.readReqs.New()
	*m = ReadReq{Op: o.id, Key: o.req.Key, ViewTs: o.view}
	if srv == r.id {
		r.parkKey(e, r.id, m, o.ki)
		return
	}
	e.Send(srv, m)
}

func (r *Replica) armResend(e env.Env, o *op, wait time.Duration) {
	t := r.slabs.resends.New()
	*t = resendTimer{op: o.id, attempt: o.attempt, wait: wait}
	e.SetTimer(wait, t)
}

// resend repeats o's messages to the replicas that have not answered its
// current attempt. A replica answers a duplicate as it answered the first
// copy (applyWrite), and a duplicate read is answered twice, the second
// answer ignored.
func (r *Replica) resend(e env.Env, t resendTimer) {
	o := r.ops[t.op]
	if o == nil || o.attempt != t.attempt {
		return
	}
	if o.req.Op == wire.OpGet {
		// Every replica answers a view time with the same version (the
		// newest committed one at or before it), so the read may move on
		// to the next-nearest replica if the nearest is down.
		o.tries++
		r.stats.ReadFailovers++
		r.sendRead(e, o, o.replicas[o.tries%len(o.replicas)])
	} else {
		rec := o.record()
		for i, n := range o.replicas {
			if n != r.id && !o.answered[i] {
				e.Send(n, &Write{Op: o.id, Key: o.req.Key, Rec: rec})
			}
		}
	}
	r.armResend(e, o, min(2*t.wait, time.Second))
}

func (r *Replica) onReadResp(e env.Env, from wire.NodeID, m *ReadResp) {
	o := r.ops[m.Op]
	if o == nil || o.req.Op != wire.OpGet || o.req.Key != m.Key || !slices.Contains(o.replicas, from) {
		return
	}
	r.finish(o)
	e.CancelTimer(o.timeout)
	if m.TooOld {
		e.Reply(errReply(o.req, wire.ErrUnavailable, "meteor: the read's view time is older than the versions the replica keeps; retry"))
		return
	}
	// Every replica answers a view with the newest committed version
	// stamped at or before it (doc.go, "Reads"). Checked before Invariant
	// is called: its arguments would be boxed on every read.
	if m.Found && m.Rec.Version.TS.WallNanos > o.view {
		env.Invariant(e, false, "meteor: n%d answered a read of %q at view %d with %v", from, m.Key, o.view, m.Rec.Version)
		return
	}
	// The client's later operations are ordered after this read.
	r.raiseFloor(o.req.Client, o.view)
	rep := r.slabs.replies.New()
	*rep = wire.Reply{ID: o.req.ID, Client: o.req.Client, Version: m.Rec.Version, Found: m.Found && !m.Rec.Tombstone, ReadAt: o.view}
	if rep.Found {
		rep.Value = m.Rec.Value
	}
	e.Reply(rep)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *Write:
		out, err := r.applyWrite(e, m.Key, m.Rec)
		if err != nil {
			return // no answer unless the write is stored
		}
		if out == forgotten {
			return
		}
		e.Send(from, &WriteAck{Op: m.Op, Key: m.Key, Rej: out == refused, Version: m.Rec.Version})
		if out == accepted {
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
	case sweepTimer:
		r.sweep(e)
		e.SetTimer(sweepInterval, sweepTimer{})
	case *resendTimer:
		r.resend(e, *t)
	case restampTimer:
		if o := r.ops[t.op]; o != nil && o.attempt == t.attempt {
			r.startWrite(e, o)
		}
	case *opTimer:
		o := r.ops[t.op]
		if o == nil {
			return
		}
		r.finish(o)
		msg := "meteor: not enough replicas acknowledged the write in time"
		if o.req.Op == wire.OpGet {
			msg = "meteor: the nearest replica did not answer the read in time"
		} else {
			// The write may still commit: order the client's later
			// operations after it either way.
			r.raiseFloor(o.req.Client, o.version.TS.WallNanos)
		}
		e.Reply(errReply(o.req, wire.ErrTimeout, msg))
	}
}

// ReadFloor is the network time a read from a client in region local
// cannot avoid, for a keyspace with perRegion replicas per region: the
// serving replica is the nearest, and it needs n − w + 1 − 1 peer statuses
// whose closure has passed the view time T − θt, so it waits for the
// slowest of the nearest such peers' statuses, less θt, less ClosureLead
// (a status sent at s promises s + ClosureLead; the dispatch interval's
// phase comes on top). cfg has its defaults filled. oneWay is the
// region-to-region one-way delay.
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
	var theta time.Duration
	if cfg.Mode == M2 {
		lats := make([]time.Duration, 0, n)
		for _, p := range reps {
			lats = append(lats, p.d)
		}
		theta = cfg.orderStat(lats) - cfg.MaxClockSkew
		if cfg.Theta > 0 {
			theta = cfg.Theta
		}
	}
	return max(0, wait-theta-cfg.closureLead())
}
