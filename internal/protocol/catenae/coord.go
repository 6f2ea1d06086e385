package catenae

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// unknown marks a region's epoch not yet known (its start, what it holds).
const unknown = math.MinInt64 / 4

// Store keys of the coordinator's own state, below every user key's
// (doc.go, "Persistence").
const (
	metaPrefix  = "\x00catenae/"
	metaStart   = metaPrefix + "start"
	metaApplied = metaPrefix + "applied"
	metaHave    = metaPrefix + "have" // this region's last closed epoch
	metaRedo    = metaPrefix + "redo" // the last handler's committed records, written before them
)

func payloadKey(r int, eid int64) string { return fmt.Sprintf("%sp/%03d/%020d", metaPrefix, r, eid) }

// compKey names a component: its batch and its first member's position
// in the batch.
type compKey struct {
	batch int64
	comp  uint32
}

// txnKey names a scheduled transaction by its origin: the payload's epoch
// and its position there.
type txnKey struct {
	eid int64
	idx int
}

// member is one transaction of a batch, in canonical order (origin region,
// then position in the origin's payload).
type member struct {
	entry  *Entry
	origin int
	idx    int
}

// comp is a conflicting component of a batch: transactions linked by
// shared keys (doc.go, "Batches and components").
type comp struct {
	key      compKey
	members  []int    // positions in the batch, canonical order
	keys     []string // distinct keys, sorted
	blocked  int      // keys where an earlier component is queued
	executed bool     // this region's chains ran it
	report   *Report  // this region's execution (its order)
	decided  bool
}

// ballot is the regions' reports of one component, kept until every
// region's is in (for the speculation counters) or the batch is long
// applied.
type ballot struct {
	reps    []*Report
	cp      *comp
	b       *batch
	counted bool
}

type batch struct {
	eid     int64
	members []member
	pending int // components not yet decided
}

type stats struct {
	txns, comps, majority, noMajority, specCompared, specAgree, readOnly, epochMsgs uint64
}

// coordinator is a region's coordinator, chain servers and committed copy.
type coordinator struct {
	r    *Replica
	cfg  Config
	n    int
	self int

	startEID   int64   // this region's first epoch
	starts     []int64 // every region's first epoch (unknown until heard)
	open       int64   // the epoch receiving transactions
	openTxns   []Entry
	openReport []Report
	ownEIDs    []int64              // own payloads held, oldest first
	payloads   []map[int64]*Payload // per region, by EID
	byFrom     []map[int64]int64    // per other region: From -> EID, of the payloads beyond have
	held       [][]int64            // per other region: the EIDs of its payloads through have, in order
	have       []int64              // per region: every epoch through have[r] is held
	acked      []int64              // per region x: x's have of this region (its latest word)
	resendFrom []int64              // per region x: the own epoch the next overdue resend starts at
	ownSize    map[int64]int        // own payloads' encoded sizes
	openBytes  int                  // the open payload's keys and values
	appliedAt  []int64              // per region x: x's applied mark (persisted there)
	seen       map[submitKey]bool
	seenQ      []submitKey
	clients    map[txnKey]Entry // this region's scheduled transactions: whom to answer

	// Read-only transactions (doc.go, "Read-only transactions").
	mv          map[string]*mvKey    // keys written by batches above applied
	lastWrite   map[sessionKey]int64 // a session's newest answered write's batch
	lastQ       []sessionKey
	forgotWrite int64         // the newest batch of the sessions lastWrite forgot
	reads       []pendingRead // waiting for applied to reach their batch
	readFloor   int64         // after a restart: reads wait for applied to pass it

	scheduling bool  // every start known and scheduling begun
	next       int64 // next batch to schedule
	applied    int64 // every batch through applied is decided here
	hasApplied bool
	batches    map[int64]*batch
	queues     map[string][]*comp
	comps      map[compKey]*comp
	votes      map[compKey]*ballot
	dirty      []*comp // got a report since decideReady last ran
	ballotsGC  int64   // the applied mark when ballots were last pruned

	// Committed records of this handler, written at its end after the redo
	// record that holds them all (doc.go, "Persistence").
	unsynced     map[string]store.Record
	unsyncedKeys []string

	stats stats
}

// mvKey is a key's committed versions above the applied mark: base is
// its record as of the applied mark, list the writes of later batches.
type mvKey struct {
	base      store.Record
	baseFound bool
	list      []mvEntry
}

type mvEntry struct {
	batch int64
	rec   store.Record
}

type sessionKey struct {
	gw     wire.NodeID
	client wire.ClientID
}

type pendingRead struct {
	from  wire.NodeID
	m     *Submit
	batch int64
}

// maxPayloadBytes bounds the keys and values of the transactions a
// region takes in one epoch, and maxMessageBytes the older payloads an
// epoch message resends: the newest three and the resent ones stay below
// the transport's frame limit (128 MiB).
const (
	maxPayloadBytes = 24 << 20
	maxMessageBytes = 32 << 20
)

// maxBatch bounds a batch's transactions (versions number components
// within a batch in 20 bits); each region takes its share per epoch.
const maxBatch = 1 << 20

// maxRemembered bounds the Submits a coordinator remembers (doc.go,
// "Limits").
const maxRemembered = 1 << 15

func newCoordinator(r *Replica) *coordinator {
	n := len(r.coords)
	c := &coordinator{r: r, cfg: r.cfg, n: n, self: r.region,
		starts: make([]int64, n), payloads: make([]map[int64]*Payload, n), byFrom: make([]map[int64]int64, n), held: make([][]int64, n),
		have: make([]int64, n), acked: make([]int64, n), resendFrom: make([]int64, n), ownSize: map[int64]int{}, appliedAt: make([]int64, n), seen: map[submitKey]bool{}, clients: map[txnKey]Entry{}, mv: map[string]*mvKey{}, lastWrite: map[sessionKey]int64{},
		batches: map[int64]*batch{}, queues: map[string][]*comp{}, comps: map[compKey]*comp{}, votes: map[compKey]*ballot{}, unsynced: map[string]store.Record{}}
	for i := range n {
		c.starts[i], c.have[i], c.acked[i], c.appliedAt[i] = unknown, unknown, unknown, unknown
		c.payloads[i], c.byFrom[i] = map[int64]*Payload{}, map[int64]int64{}
	}
	return c
}

// epochOf is the epoch a wall-clock time falls in.
func (c *coordinator) epochOf(wall int64) int64 {
	e := int64(c.cfg.Epoch)
	q := wall / e
	if wall%e < 0 {
		q--
	}
	return q
}

// getMeta reads an int64 the coordinator stored; a store failure stops
// the node.
func getMeta(e env.Env, key string) (int64, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(err)
		return 0, false
	}
	if !ok || rec.Tombstone {
		return 0, false
	}
	v, err := strconv.ParseInt(string(rec.Value), 10, 64)
	if err != nil {
		env.Invariant(e, false, "catenae: %s holds %q", key, rec.Value)
		return 0, false
	}
	return v, true
}

func putMeta(e env.Env, key string, v int64) {
	if err := e.Store().Put(key, store.Record{Value: strconv.AppendInt(nil, v, 10)}); err != nil {
		e.FailStop(err)
	}
}

// start recovers what the store holds (doc.go, "Persistence") and starts
// the epoch clock.
func (c *coordinator) start(e env.Env) {
	cur := c.epochOf(e.Wall())
	c.recoverRedo(e)
	if s, ok := getMeta(e, metaStart); ok {
		c.startEID = s
	} else {
		c.startEID = cur
		putMeta(e, metaStart, cur)
	}
	c.starts[c.self] = c.startEID
	if a, ok := getMeta(e, metaApplied); ok {
		c.applied, c.hasApplied = a, true
		for r := range c.n {
			if r != c.self {
				c.have[r] = a
			}
		}
	}
	// Other regions' payloads are not kept (they resend what this one has
	// not applied); this region's own are.
	if h, ok := getMeta(e, metaHave); ok {
		c.have[c.self] = h
		c.reload(e, c.self)
	} else {
		c.have[c.self] = c.startEID - 1
	}
	c.open = max(cur, c.have[c.self]+1)
	if c.open > c.have[c.self]+1 {
		c.close(e, c.open-1) // the epochs it was down for: one empty payload
	}
	// The store may hold writes of batches above the applied mark, not in
	// mv: reads wait until every batch scheduled before the restart is
	// applied.
	c.readFloor = c.have[c.self]
	c.armTick(e)
}

// reload reads this region's payloads back from the store, newest first,
// down to the oldest some region may still lack (the older ones are
// tombstones: advanceApplied).
func (c *coordinator) reload(e env.Env, r int) {
	var got []*Payload
	for eid := c.have[r]; eid > unknown; {
		rec, ok, err := e.Store().Get(payloadKey(r, eid))
		if err != nil {
			e.FailStop(err)
			return
		}
		if !ok || rec.Tombstone {
			break
		}
		d := wire.NewDecoder(rec.Value)
		p := decodePayload(d)
		if d.Err() != nil || p.EID != eid || p.From > eid {
			env.Invariant(e, false, "catenae: stored payload %d of region %d is corrupt", eid, r)
			return
		}
		got = append(got, &p)
		c.ownSize[p.EID] = len(rec.Value)
		eid = p.From - 1
	}
	slices.Reverse(got)
	for _, p := range got {
		c.hold(r, p)
		if r == c.self {
			c.ownEIDs = append(c.ownEIDs, p.EID)
			for i := range p.Txns {
				k := submitKey{p.Txns[i].Gateway, p.Txns[i].Seq}
				c.remember(k)
				if !c.hasApplied || p.EID > c.applied {
					c.clients[txnKey{p.EID, i}] = p.Txns[i]
				}
			}
		}
	}
}

// hold keeps a payload in memory and counts its reports' votes.
func (c *coordinator) hold(r int, p *Payload) {
	c.payloads[r][p.EID] = p
	if r != c.self {
		c.byFrom[r][p.From] = p.EID
	}
	for i := range p.Reports {
		c.addVote(r, &p.Reports[i])
	}
}

func (c *coordinator) remember(k submitKey) {
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	c.seenQ = append(c.seenQ, k)
	if len(c.seenQ) > maxRemembered {
		delete(c.seen, c.seenQ[0])
		c.seenQ = slices.Delete(c.seenQ, 0, 1)
	}
}

func (c *coordinator) armTick(e env.Env) {
	next := (c.open + 1) * int64(c.cfg.Epoch)
	e.SetTimer(time.Duration(max(next-e.Wall(), int64(100*time.Microsecond))), epochTick{})
}

// onSubmit takes a transaction: a read-only one is answered from the
// committed copy at once (doc.go, "Read-only transactions"); a read-write
// one joins the open epoch.
func (c *coordinator) onSubmit(e env.Env, from wire.NodeID, m *Submit) {
	k := submitKey{from, m.Seq}
	if c.seen[k] {
		return // a network duplicate: the first copy answers
	}
	if err := m.Txn.Check(); err != nil {
		c.r.send(e, from, &Result{txngw.Result{Seq: m.Seq, Code: wire.ErrInvalid, Msg: "catenae: " + err.Error()}})
		return
	}
	c.remember(k)
	if readOnly(&m.Txn) {
		need := max(c.readFloor, c.forgotWrite, c.lastWrite[sessionKey{from, m.Client}])
		if !c.scheduling || c.applied < need {
			if len(c.reads) >= maxRemembered {
				c.r.send(e, from, &Result{txngw.Result{Seq: m.Seq, Code: wire.ErrUnavailable, Msg: "catenae: too many read-only transactions waiting for their region to apply earlier writes; retry"}})
				return
			}
			c.reads = append(c.reads, pendingRead{from: from, m: m, batch: need})
			return
		}
		c.serveRead(e, from, m)
		return
	}
	size := 0
	for _, op := range m.Txn.Ops {
		size += len(op.Key) + len(op.Value) + 16
	}
	if len(c.openTxns) >= maxBatch/c.n || len(c.openTxns) > 0 && c.openBytes+size > maxPayloadBytes {
		c.r.send(e, from, &Result{txngw.Result{Seq: m.Seq, Code: wire.ErrUnavailable, Msg: "catenae: this epoch's batch is full; retry"}})
		return
	}
	off := e.Wall() - c.open*int64(c.cfg.Epoch)
	off = min(max(off, 0), int64(c.cfg.Epoch)-1)
	c.openTxns = append(c.openTxns, Entry{Gateway: from, Seq: m.Seq, Client: m.Client, Offset: off, Txn: m.Txn})
	c.openBytes += size
}

// serveRead answers a read-only transaction from the committed copy as of
// the applied mark: every batch through it, none after (doc.go,
// "Read-only transactions").
func (c *coordinator) serveRead(e env.Env, from wire.NodeID, m *Submit) {
	c.stats.readOnly++
	res := make([]wire.TxnResult, len(m.Txn.Ops))
	for i, op := range m.Txn.Ops {
		rec, ok, err := c.snapshot(e, op.Key)
		if err != nil {
			// A read that fails is refused; nothing depends on it.
			c.r.send(e, from, &Result{txngw.Result{Seq: m.Seq, Code: wire.ErrUnavailable, Msg: "catenae: store read failed: " + err.Error()}})
			return
		}
		if ok {
			res[i] = wire.TxnResult{Found: true, Value: rec.Value, Version: rec.Version}
		} else {
			res[i] = wire.TxnResult{Version: rec.Version}
		}
	}
	c.r.send(e, from, &Result{txngw.Result{Seq: m.Seq, Results: res}})
}

// snapshot is key's record as of the applied mark, and whether it is live.
func (c *coordinator) snapshot(e env.Env, key string) (store.Record, bool, error) {
	if v := c.mv[key]; v != nil {
		for i := len(v.list) - 1; i >= 0; i-- {
			if v.list[i].batch <= c.applied {
				return v.list[i].rec, !v.list[i].rec.Tombstone, nil
			}
		}
		return v.base, v.baseFound, nil
	}
	rec, ok, err := c.stored(e, key)
	return rec, ok && !rec.Tombstone, err
}

func readOnly(t *wire.Txn) bool {
	for _, op := range t.Ops {
		if op.Kind != wire.TxnRead {
			return false
		}
	}
	return true
}

// stored is a user key's record in the committed copy: this handler's
// unsynced records first, then the store.
func (c *coordinator) stored(e env.Env, key string) (store.Record, bool, error) {
	if rec, ok := c.unsynced[key]; ok {
		return rec, true, nil
	}
	return e.Store().Get(key)
}

// get is stored; a store failure stops the node.
func (c *coordinator) get(e env.Env, key string) (store.Record, bool) {
	rec, ok, err := c.stored(e, key)
	if err != nil {
		e.FailStop(err)
		return store.Record{}, false
	}
	return rec, ok
}

// onTick closes the epochs that ended, sends the epoch messages and
// schedules what became complete.
func (c *coordinator) onTick(e env.Env) {
	if cur := c.epochOf(e.Wall()); cur > c.open {
		c.close(e, cur-1)
		c.open = cur
		c.sendEpochs(e)
		c.schedule(e)
		c.decideReady(e)
	}
	c.armTick(e)
}

// close makes a payload of the epochs have[self]+1..through: the open
// epoch's transactions (in epoch through) and the reports finished since
// the last one, persisted before anything about it is sent.
func (c *coordinator) close(e env.Env, through int64) {
	p := &Payload{From: c.have[c.self] + 1, EID: through, Txns: c.openTxns, Reports: c.openReport}
	c.openTxns, c.openReport, c.openBytes = nil, nil, 0
	c.persistPayload(e, p)
	for i := range p.Txns {
		c.clients[txnKey{p.EID, i}] = p.Txns[i]
	}
	c.ownEIDs = append(c.ownEIDs, p.EID)
	c.hold(c.self, p) // its reports count from now on
	c.have[c.self] = through
	putMeta(e, metaHave, through)
}

// persistPayload stores one of this region's payloads (the only ones
// kept: others resend theirs) and notes its size for resends.
func (c *coordinator) persistPayload(e env.Env, p *Payload) {
	b := appendPayload(nil, *p)
	c.ownSize[p.EID] = len(b)
	if err := e.Store().Put(payloadKey(c.self, p.EID), store.Record{Value: b}); err != nil {
		e.FailStop(err)
	}
}

// sendEpochs sends every other region its epoch message: the newest three
// payloads it lacks (§4.3.2) and, once its acknowledgement is overdue, up
// to `resend` older ones it lacks, going on each epoch from where the last
// resend stopped (and from its acknowledgement again once through), with
// runs of empty payloads sent as one, so a long partition drains in a few
// round trips. A message holds at most maxMessageBytes of payloads beyond
// the newest three.
func (c *coordinator) sendEpochs(e env.Env) {
	for x := range c.n {
		if x == c.self {
			continue
		}
		i, _ := slices.BinarySearch(c.ownEIDs, c.acked[x]+1)
		lack := c.ownEIDs[i:]
		m := &Epoch{From: c.self, Start: c.startEID, Have: slices.Clone(c.have), Applied: c.appliedMark()}
		newest := lack[max(len(lack)-3, 0):]
		older := lack[:len(lack)-len(newest)]
		overdue := (2*e.Latency(c.r.coords[x]) + 3*c.cfg.Epoch) / c.cfg.Epoch
		if len(older) > 0 && c.acked[x] < c.have[c.self]-int64(overdue) {
			j, _ := slices.BinarySearch(older, c.resendFrom[x])
			if j >= len(older) {
				j = 0
			}
			size, sent := 0, 0
			var run *Payload                 // empty payloads, merged
			c.resendFrom[x] = c.acked[x] + 1 // through all of them: next time from the start
			for _, eid := range older[j:] {
				p := c.payloads[c.self][eid]
				if len(p.Txns) == 0 && len(p.Reports) == 0 {
					if run == nil {
						run = &Payload{From: p.From}
					}
					run.EID = eid
					continue
				}
				if run != nil {
					m.Payloads, run = append(m.Payloads, *run), nil
					sent++
				}
				if sent >= c.cfg.Resend || size+c.ownSize[eid] > maxMessageBytes {
					c.resendFrom[x] = eid // not through: next time from here
					break
				}
				m.Payloads = append(m.Payloads, *p)
				size += c.ownSize[eid]
				sent++
			}
			if run != nil {
				m.Payloads = append(m.Payloads, *run)
			}
		}
		for _, eid := range newest {
			m.Payloads = append(m.Payloads, *c.payloads[c.self][eid])
		}
		c.stats.epochMsgs++
		e.Send(c.r.coords[x], m)
	}
}

// appliedMark is the applied mark other regions may free payloads by.
func (c *coordinator) appliedMark() int64 {
	if !c.hasApplied {
		return unknown
	}
	return c.applied
}

// onEpoch takes another region's epoch message.
func (c *coordinator) onEpoch(e env.Env, m *Epoch) {
	x := m.From
	if x < 0 || x >= c.n || x == c.self || len(m.Have) != c.n {
		return
	}
	if c.starts[x] == unknown {
		c.starts[x] = m.Start
		c.have[x] = max(c.have[x], m.Start-1)
	}
	// Its latest word, not the largest: after a restart it holds less.
	c.acked[x] = m.Have[c.self]
	c.appliedAt[x] = max(c.appliedAt[x], m.Applied)
	for i := range m.Payloads {
		p := &m.Payloads[i]
		if p.EID <= c.have[x] || p.From > p.EID {
			continue
		}
		// A payload is keyed by the first epoch it covers beyond have:
		// after a restart this region holds x's epochs through its applied
		// mark, which may fall inside one of x's payloads.
		if old := c.payloads[x][p.EID]; old != nil {
			if old.From <= p.From {
				continue // a duplicate
			}
			// The same empty epochs, merged with earlier ones (sendEpochs).
			delete(c.byFrom[x], max(old.From, c.have[x]+1))
		}
		c.hold(x, p)
		delete(c.byFrom[x], p.From)
		c.byFrom[x][max(p.From, c.have[x]+1)] = p.EID
	}
	for {
		eid, ok := c.byFrom[x][c.have[x]+1]
		if !ok {
			// Payloads a merged run of empty epochs overtook
			// (sendEpochs): forget those now behind have, and key one
			// that reaches past it at have+1.
			for from, e := range c.byFrom[x] { // lint:order-independent: the largest reach wins
				if from <= c.have[x] {
					delete(c.byFrom[x], from)
					if e > c.have[x] && e > c.byFrom[x][c.have[x]+1] {
						c.byFrom[x][c.have[x]+1] = e
					} else if p := c.payloads[x][e]; e <= c.have[x] && p != nil && len(p.Txns) == 0 && !slices.Contains(c.held[x], e) {
						delete(c.payloads[x], e) // empty: its batch reads none
					}
				}
			}
			if eid, ok = c.byFrom[x][c.have[x]+1]; !ok {
				break
			}
		}
		delete(c.byFrom[x], c.have[x]+1)
		c.held[x] = append(c.held[x], eid)
		c.have[x] = eid
	}
	c.schedule(e)
	c.decideReady(e)
	c.gcBallots()
}

// gcBallots drops, now and then, the ballots of components long applied
// whose last report never came (a region that re-ran them after a
// restart reports them again; these only feed the counters).
func (c *coordinator) gcBallots() {
	if !c.hasApplied || c.applied < c.ballotsGC+1024 {
		return
	}
	c.ballotsGC = c.applied
	for k := range c.votes { // lint:order-independent: deletes only
		if k.batch < c.applied-4096 {
			delete(c.votes, k)
		}
	}
}

// schedule forms every batch whose payloads every region has sent
// (§4.3.3, "Receive Transactions"), lowest epoch first.
func (c *coordinator) schedule(e env.Env) {
	if !c.scheduling {
		lo := int64(math.MaxInt64)
		for _, s := range c.starts {
			if s == unknown {
				return
			}
			lo = min(lo, s)
		}
		c.next = lo
		if c.hasApplied {
			c.next = c.applied + 1
		} else {
			c.applied, c.hasApplied = lo-1, true
		}
		c.scheduling = true
	}
	built := false
	defer func() {
		if built {
			c.decideReady(e)
		}
	}()
	for {
		for _, h := range c.have {
			if h < c.next {
				return
			}
		}
		c.buildBatch(e, c.next)
		c.next++
		built = true
	}
}

// buildBatch schedules batch eid: its transactions in canonical order,
// split into components by shared keys, each queued behind the earlier
// components on its keys and run on this region's chains.
func (c *coordinator) buildBatch(e env.Env, eid int64) {
	b := &batch{eid: eid}
	for r := range c.n {
		if p := c.payloads[r][eid]; p != nil {
			for i := range p.Txns {
				b.members = append(b.members, member{entry: &p.Txns[i], origin: r, idx: i})
			}
		}
	}
	c.batches[eid] = b
	c.stats.txns += uint64(len(b.members))
	// Union-find over keys, in canonical order: a component's root is its
	// first member.
	parent := make([]int, len(b.members))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[string]int{}
	for i, m := range b.members {
		for _, op := range m.entry.Txn.Ops {
			if j, ok := owner[op.Key]; ok {
				a, b := find(i), find(j)
				parent[max(a, b)] = min(a, b)
			} else {
				owner[op.Key] = i
			}
		}
	}
	byRoot := map[int]*comp{}
	var order []*comp
	for i, m := range b.members {
		root := find(i)
		cp := byRoot[root]
		if cp == nil {
			cp = &comp{key: compKey{eid, uint32(root)}}
			byRoot[root] = cp
			order = append(order, cp)
		}
		cp.members = append(cp.members, i)
		for _, op := range m.entry.Txn.Ops {
			cp.keys = append(cp.keys, op.Key)
		}
	}
	for _, cp := range order {
		slices.Sort(cp.keys)
		cp.keys = slices.Compact(cp.keys)
		for _, k := range cp.keys {
			if len(c.queues[k]) > 0 {
				cp.blocked++
			}
			c.queues[k] = append(c.queues[k], cp)
		}
		c.comps[cp.key] = cp
		b.pending++
		if len(cp.members) > 1 {
			v := c.votes[cp.key]
			if v == nil {
				v = &ballot{reps: make([]*Report, c.n)}
				c.votes[cp.key] = v
			}
			v.cp, v.b = cp, b
			c.countSpeculation(cp.key)
			c.dirty = append(c.dirty, cp)
		}
	}
	for _, cp := range order {
		c.execute(e, b, cp)
	}
}

// execute runs a component on this region's chains (doc.go,
// "Execution"): each transaction visits its keys in declared order, one
// chain server each, with an exponential service time; conflicting
// transactions are ordered by when they reach the end of their chains.
// The result is this region's report, ready when the slowest chain ends.
func (c *coordinator) execute(e env.Env, b *batch, cp *comp) {
	if v := c.votes[cp.key]; v != nil && v.reps[c.self] != nil {
		// Reported before a restart: the report is in a payload of its own.
		cp.executed, cp.report = true, v.reps[c.self]
		c.dirty = append(c.dirty, cp)
		return
	}
	type run struct {
		pos    uint32
		end    int64   // reaches its chain's end
		arrive []int64 // reaches each of its keys
	}
	runs := make([]run, len(cp.members))
	rnd := e.Rand()
	if c.cfg.unsafeReorderChain {
		// Every region the same speeds, so they agree on the reordered
		// chains and the vote passes them.
		rnd = rand.New(rand.NewPCG(uint64(cp.key.batch), uint64(cp.key.comp)))
	}
	minOff := int64(math.MaxInt64)
	var done int64
	for i, mi := range cp.members {
		m := b.members[mi]
		t := m.entry.Offset
		minOff = min(minOff, t)
		arrive := make([]int64, len(m.entry.Txn.Ops))
		for j := range m.entry.Txn.Ops {
			t += int64(c.cfg.ChainHop) + int64(rnd.ExpFloat64()*float64(c.cfg.ChainService))
			arrive[j] = t
		}
		runs[i] = run{pos: uint32(i), end: t, arrive: arrive}
	}
	for i, mi := range cp.members {
		// The forward pass from its start, then the backward pass back.
		done = max(done, 2*runs[i].end-b.members[mi].entry.Offset)
	}
	done -= minOff
	if len(cp.members) > 1 && c.cfg.Order == OrderSpeed {
		sorted := slices.Clone(runs)
		slices.SortStableFunc(sorted, func(a, b run) int { return cmp.Compare(a.end, b.end) })
		rep := &Report{Batch: cp.key.batch, Comp: cp.key.comp}
		for _, r := range sorted {
			rep.Order = append(rep.Order, r.pos)
		}
		if c.cfg.unsafeReorderChain {
			for _, k := range cp.keys {
				var at []run
				for i, mi := range cp.members {
					for j, op := range b.members[mi].entry.Txn.Ops {
						if op.Key == k {
							at = append(at, run{pos: uint32(i), end: runs[i].arrive[j]})
						}
					}
				}
				slices.SortStableFunc(at, func(a, b run) int { return cmp.Compare(a.end, b.end) })
				var o []uint32
				for _, r := range at {
					o = append(o, r.pos)
				}
				rep.KeyOrders = append(rep.KeyOrders, o)
			}
		}
		cp.report = rep
	}
	e.SetTimer(time.Duration(max(done, 0)), executed{cp.key})
}

// onExecuted: this region's chains finished a component. Its report
// joins the open payload: it counts, here as elsewhere, once that payload
// is closed and persisted (persist before send), so a crash loses only a
// report no region has seen, and a restart runs the component again.
func (c *coordinator) onExecuted(e env.Env, k compKey) {
	cp := c.comps[k]
	if cp == nil || cp.executed {
		return
	}
	cp.executed = true
	if cp.report != nil {
		c.openReport = append(c.openReport, *cp.report)
	}
	c.decideFrom(e, cp)
}

// addVote records region r's report of a component.
func (c *coordinator) addVote(r int, rep *Report) {
	k := compKey{rep.Batch, rep.Comp}
	v := c.votes[k]
	if v == nil {
		if c.hasApplied && k.batch <= c.applied {
			return // decided and forgotten
		}
		v = &ballot{reps: make([]*Report, c.n)}
		c.votes[k] = v
	}
	if v.reps[r] == nil {
		v.reps[r] = rep
		c.countSpeculation(k)
		if v.cp != nil && !v.cp.decided {
			c.dirty = append(c.dirty, v.cp)
		}
	}
}

// countSpeculation counts, for Fig. 4.24, once every region reported a
// component, the transactions whose dependencies (the members before
// them in the order that share a key with them) are the same in every
// region's report; then the ballot is dropped if the component is
// decided.
func (c *coordinator) countSpeculation(k compKey) {
	v := c.votes[k]
	if v == nil || v.cp == nil || v.counted || slices.Contains(v.reps, nil) {
		return
	}
	v.counted = true
	b, cp := v.b, v.cp
	// A transaction's dependencies are the same in every report iff, for
	// every transaction it shares a key with, every report puts the two in
	// the same order.
	ranks := make([][]int, len(v.reps))
	for i, rep := range v.reps {
		ranks[i] = make([]int, len(cp.members))
		for r, pos := range rep.Order {
			if int(pos) < len(cp.members) {
				ranks[i][pos] = r
			}
		}
	}
	onKey := map[string][]int{}
	for pos, mi := range cp.members {
		for _, op := range b.members[mi].entry.Txn.Ops {
			if l := onKey[op.Key]; len(l) == 0 || l[len(l)-1] != pos {
				onKey[op.Key] = append(l, pos)
			}
		}
	}
	differ := make([]bool, len(cp.members))
	for _, key := range cp.keys {
		l := onKey[key]
		for i, p := range l {
			for _, q := range l[i+1:] {
				first := ranks[0][p] < ranks[0][q]
				for _, rk := range ranks[1:] {
					if (rk[p] < rk[q]) != first {
						differ[p], differ[q] = true, true
						break
					}
				}
			}
		}
	}
	for _, d := range differ {
		c.stats.specCompared++
		if !d {
			c.stats.specAgree++
		}
	}
	if cp.decided {
		delete(c.votes, k)
	}
}

func sameReport(a, b *Report) bool {
	if !slices.Equal(a.Order, b.Order) || len(a.KeyOrders) != len(b.KeyOrders) {
		return false
	}
	for i := range a.KeyOrders {
		if !slices.Equal(a.KeyOrders[i], b.KeyOrders[i]) {
			return false
		}
	}
	return true
}

// vote is the validated order of a conflicting component (§4.3.3,
// "Conflicting Transactions"): the report a majority of regions made
// alike; or, once every region reported and no majority agrees, the
// canonical order (the thesis aborts here: doc.go, "Validation"). Every
// region computes the same from the same reports, and a region's report
// never changes once it counts.
func (c *coordinator) vote(k compKey) (*Report, bool) {
	bl := c.votes[k]
	if bl == nil {
		return nil, false
	}
	v := bl.reps
	all := true
	for i, a := range v {
		if a == nil {
			all = false
			continue
		}
		same := 0
		for _, b := range v[i:] {
			if b != nil && sameReport(a, b) {
				same++
			}
		}
		if same >= c.n/2+1 {
			c.stats.majority++
			return a, true
		}
	}
	if all {
		c.stats.noMajority++
		return nil, true
	}
	return nil, false
}

// decideReady tries the components that may have become decidable since
// the last call: those that got a report, or a report of their own back
// after a restart. (Those whose predecessors were decided, or whose
// chains finished, are tried by decideFrom directly.)
func (c *coordinator) decideReady(e env.Env) {
	for len(c.dirty) > 0 {
		d := c.dirty
		c.dirty = nil
		for _, cp := range d {
			c.decideFrom(e, cp)
		}
	}
}

// decideFrom decides cp if it can, then every component that becomes
// decidable behind it.
func (c *coordinator) decideFrom(e env.Env, cp *comp) {
	work := []*comp{cp}
	for len(work) > 0 {
		x := work[0]
		work = work[1:]
		if x.decided || !c.ready(x) {
			continue
		}
		order, keyOrders, ok := c.decision(x)
		if !ok {
			continue
		}
		c.apply(e, x, order, keyOrders)
		for _, k := range x.keys {
			q := c.queues[k][1:]
			if len(q) == 0 {
				delete(c.queues, k)
				continue
			}
			c.queues[k] = q
			q[0].blocked--
			work = append(work, q[0])
		}
	}
}

// ready: every earlier component on cp's keys is decided (§4.3.3,
// "Commit Conflicting Transactions": a transaction waits for the
// transactions it depends on).
func (c *coordinator) ready(cp *comp) bool { return cp.blocked == 0 }

// decision is the order cp commits in, if it is decided.
func (c *coordinator) decision(cp *comp) ([]uint32, [][]uint32, bool) {
	identity := func() []uint32 {
		o := make([]uint32, len(cp.members))
		for i := range o {
			o[i] = uint32(i)
		}
		return o
	}
	switch {
	case len(cp.members) == 1 || c.cfg.Order == OrderCanonical:
		// Nothing to validate: every region runs it the same way.
		return identity(), nil, cp.executed
	case c.cfg.unsafeNoValidation:
		if !cp.executed {
			return nil, nil, false
		}
		return cp.report.Order, cp.report.KeyOrders, true
	}
	rep, ok := c.vote(cp.key)
	if !ok {
		return nil, nil, false
	}
	if rep == nil {
		return identity(), nil, true
	}
	return rep.Order, rep.KeyOrders, true
}

// version is the version a transaction's writes install: its batch and
// component, then its place in the decided order, so each key's versions
// follow its writes' order.
func version(k compKey, rank int, origin wire.NodeID) wire.Version {
	return wire.Version{TS: hlc.Timestamp{WallNanos: k.batch<<20 | int64(k.comp), Logical: uint32(rank)}, Node: origin}
}

// apply commits a decided component on the committed copy (doc.go,
// "Commit"): its transactions run in the decided order on the committed
// state, so every region computes the same writes (the thesis's catch-up,
// without cascading aborts); the origin answers its clients.
func (c *coordinator) apply(e env.Env, cp *comp, order []uint32, keyOrders [][]uint32) {
	cp.decided = true
	if len(cp.members) > 1 {
		c.stats.comps++
	}
	b := c.batches[cp.key.batch]
	delete(c.comps, cp.key)
	if v := c.votes[cp.key]; v != nil && v.counted {
		delete(c.votes, cp.key)
	}
	b.pending--
	state := map[string]store.Record{}
	found := map[string]bool{}
	dirty := map[string]bool{}
	base := version(cp.key, 0, 0)
	for _, k := range cp.keys {
		rec, ok := c.get(e, k)
		if ok && !rec.Version.Less(base) {
			c.answerLost(e, b, cp) // applied before a restart (doc.go, "Persistence")
			return
		}
		state[k], found[k] = rec, ok && !rec.Tombstone
	}
	orig, origFound := maps.Clone(state), maps.Clone(found)
	type outcome struct {
		res []wire.TxnResult
		err string
		ver wire.Version
	}
	outs := make([]outcome, len(cp.members))
	runOp := func(pos uint32, j int, rank int) (wire.TxnResult, *store.Record, error) {
		m := b.members[cp.members[pos]]
		op := m.entry.Txn.Ops[j]
		cur, live := state[op.Key], found[op.Key]
		read := wire.TxnResult{Found: live, Version: cur.Version}
		if live {
			read.Value = cur.Value
		}
		v := version(cp.key, rank, c.r.coords[m.origin])
		switch op.Kind {
		case wire.TxnRead:
			return read, nil, nil
		case wire.TxnAdd:
			n := int64(0)
			if live {
				x, err := strconv.ParseInt(string(cur.Value), 10, 64)
				if err != nil {
					return read, nil, fmt.Errorf("add to %q: its value %q is not an integer", op.Key, cur.Value)
				}
				n = x
			}
			return read, &store.Record{Value: strconv.AppendInt(nil, n+op.Delta, 10), Version: v}, nil
		default:
			if op.Delete {
				return wire.TxnResult{}, &store.Record{Tombstone: true, Version: v}, nil
			}
			return wire.TxnResult{}, &store.Record{Value: op.Value, Version: v}, nil
		}
	}
	if keyOrders == nil {
		for rank, pos := range order {
			m := b.members[cp.members[pos]]
			res := make([]wire.TxnResult, len(m.entry.Txn.Ops))
			writes := make([]*store.Record, len(res))
			var failed error
			for j := range res {
				r, w, err := runOp(pos, j, rank)
				if err != nil {
					failed = err
					break
				}
				res[j], writes[j] = r, w
			}
			outs[pos].ver = version(cp.key, rank, c.r.coords[m.origin])
			if failed != nil {
				outs[pos].err = failed.Error()
				continue
			}
			for j, w := range writes {
				if w != nil {
					k := m.entry.Txn.Ops[j].Key
					state[k], found[k], dirty[k] = *w, !w.Tombstone, true
				}
			}
			outs[pos].res = res
		}
	} else {
		// The reorder-chain teeth: each key in its own order.
		rank := map[uint32]int{}
		for i, pos := range order {
			rank[pos] = i
			m := b.members[cp.members[pos]]
			outs[pos].res = make([]wire.TxnResult, len(m.entry.Txn.Ops))
			outs[pos].ver = version(cp.key, i, c.r.coords[m.origin])
		}
		for ki, k := range cp.keys {
			for _, pos := range keyOrders[ki] {
				m := b.members[cp.members[pos]]
				for j, op := range m.entry.Txn.Ops {
					if op.Key != k {
						continue
					}
					r, w, _ := runOp(pos, j, rank[pos])
					outs[pos].res[j] = r
					if w != nil {
						state[k], found[k], dirty[k] = *w, !w.Tombstone, true
					}
				}
			}
		}
	}
	for _, k := range cp.keys {
		if !dirty[k] {
			continue
		}
		if _, ok := c.unsynced[k]; !ok {
			c.unsyncedKeys = append(c.unsyncedKeys, k)
		}
		c.unsynced[k] = state[k]
		v := c.mv[k]
		if v == nil {
			v = &mvKey{base: orig[k], baseFound: origFound[k]}
			c.mv[k] = v
		}
		v.list = append(v.list, mvEntry{batch: cp.key.batch, rec: state[k]})
	}
	for pos, mi := range cp.members {
		m := b.members[mi]
		if m.origin != c.self {
			continue
		}
		tk := txnKey{b.eid, m.idx}
		w, ok := c.clients[tk]
		if !ok {
			continue
		}
		delete(c.clients, tk)
		res := &Result{txngw.Result{Seq: w.Seq, Version: outs[pos].ver, Results: outs[pos].res}}
		if outs[pos].err != "" {
			res = &Result{txngw.Result{Seq: w.Seq, Code: wire.ErrInvalid, Msg: "catenae: aborted: " + outs[pos].err}}
		}
		c.noteWrite(sessionKey{w.Gateway, w.Client}, b.eid)
		c.r.send(e, w.Gateway, res)
	}
}

// answerLost answers this region's clients of a component applied before
// a restart: it committed, but its results were not kept.
func (c *coordinator) answerLost(e env.Env, b *batch, cp *comp) {
	for _, mi := range cp.members {
		m := b.members[mi]
		tk := txnKey{b.eid, m.idx}
		w, ok := c.clients[tk]
		if m.origin != c.self || !ok {
			continue
		}
		delete(c.clients, tk)
		c.noteWrite(sessionKey{w.Gateway, w.Client}, b.eid)
		c.r.send(e, w.Gateway, &Result{txngw.Result{Seq: w.Seq, Code: wire.ErrTimeout,
			Msg: "catenae: the transaction committed before its region's coordinator restarted, and its results were not kept"}})
	}
}

// noteWrite records that a session was answered a write of batch eid:
// its later reads wait for the applied mark to reach it.
func (c *coordinator) noteWrite(s sessionKey, eid int64) {
	if _, ok := c.lastWrite[s]; !ok {
		c.lastQ = append(c.lastQ, s)
		if len(c.lastQ) > maxRemembered {
			// A forgotten session's reads wait as if its write were the
			// newest of all forgotten ones.
			c.forgotWrite = max(c.forgotWrite, c.lastWrite[c.lastQ[0]])
			delete(c.lastWrite, c.lastQ[0])
			c.lastQ = slices.Delete(c.lastQ, 0, 1)
		}
	}
	c.lastWrite[s] = max(c.lastWrite[s], eid)
}

// finish ends every coordinator handler: the applied mark moves past the
// batches now decided (once per handler, however many), then the
// handler's committed records are written.
func (c *coordinator) finish(e env.Env) {
	c.advanceApplied(e)
	c.flush(e)
}

// flush writes this handler's committed records: first one redo record
// holding them all, then each. A crash keeps a prefix of a handler's
// unsynced writes (a torn crash), so a restart finds either no record of
// the handler, or its redo record and completes it (recoverRedo).
func (c *coordinator) flush(e env.Env) {
	if len(c.unsyncedKeys) == 0 {
		return
	}
	redo := wire.AppendList(nil, c.unsyncedKeys, func(b []byte, k string) []byte {
		return store.AppendWire(wire.AppendString(b, k), c.unsynced[k])
	})
	if err := e.Store().Put(metaRedo, store.Record{Value: redo}); err != nil {
		e.FailStop(err)
		return
	}
	for _, k := range c.unsyncedKeys {
		if err := e.Store().Put(k, c.unsynced[k]); err != nil {
			e.FailStop(err)
			return
		}
	}
	clear(c.unsynced)
	c.unsyncedKeys = c.unsyncedKeys[:0]
}

// recoverRedo completes the last handler's committed records, if a crash
// tore them.
func (c *coordinator) recoverRedo(e env.Env) {
	rec, ok, err := e.Store().Get(metaRedo)
	if err != nil {
		e.FailStop(err)
		return
	}
	if !ok || rec.Tombstone {
		return
	}
	type kv struct {
		k string
		r store.Record
	}
	d := wire.NewDecoder(rec.Value)
	list := wire.DecodeList(d, func(d *wire.Decoder) kv { return kv{d.String(), store.DecodeWire(d)} })
	if d.Err() != nil {
		env.Invariant(e, false, "catenae: the redo record is corrupt")
		return
	}
	for _, x := range list {
		cur, ok, err := e.Store().Get(x.k)
		if err != nil {
			e.FailStop(err)
			return
		}
		if ok && !cur.Version.Less(x.r.Version) {
			continue
		}
		if err := e.Store().Put(x.k, x.r); err != nil {
			e.FailStop(err)
			return
		}
	}
}

// advanceApplied moves the applied mark past every fully decided batch,
// persists it, and forgets what no region needs any more.
func (c *coordinator) advanceApplied(e env.Env) {
	moved := false
	for c.scheduling {
		b := c.batches[c.applied+1]
		if b == nil || b.pending > 0 {
			break
		}
		delete(c.batches, b.eid)
		c.applied++
		moved = true
	}
	if !moved {
		return
	}
	c.flush(e) // the records before the mark that says they are there
	putMeta(e, metaApplied, c.applied)
	for k, v := range c.mv { // lint:order-independent: each key on its own, no output
		i := 0
		for i < len(v.list) && v.list[i].batch <= c.applied {
			i++
		}
		if i == len(v.list) {
			delete(c.mv, k)
			continue
		}
		if i > 0 {
			v.base, v.baseFound = v.list[i-1].rec, !v.list[i-1].rec.Tombstone
			v.list = v.list[i:]
		}
	}
	rest := c.reads[:0]
	for _, rd := range c.reads {
		if rd.batch <= c.applied {
			c.serveRead(e, rd.from, rd.m)
		} else {
			rest = append(rest, rd)
		}
	}
	c.reads = rest
	// Payloads of applied epochs are no longer needed here; this region's
	// own are kept until every region has them.
	for r := range c.n {
		for len(c.held[r]) > 0 && c.held[r][0] <= c.applied {
			delete(c.payloads[r], c.held[r][0])
			c.held[r] = c.held[r][1:]
		}
	}
	lo := c.applied
	for x, a := range c.appliedAt {
		if x != c.self {
			lo = min(lo, a)
		}
	}
	for len(c.ownEIDs) > 3 && c.ownEIDs[0] <= lo {
		eid := c.ownEIDs[0]
		delete(c.payloads[c.self], eid)
		delete(c.ownSize, eid)
		c.ownEIDs = c.ownEIDs[1:]
		if err := e.Store().Put(payloadKey(c.self, eid), store.Record{Tombstone: true}); err != nil {
			e.FailStop(err)
			return
		}
	}
}
