// Package node is the real runtime: one event loop per node owning all of
// its protocol state, fed by the transport, the front ends and timers
// (DESIGN.md, "Real runtime"). The protocol code is the same the simulator
// runs; here Env is backed by the wall clock, real timers, a durable store
// and a network transport.
//
// Persist before send: the loop handles a batch of queued events (up to
// MaxBatch), syncs the store once for the whole batch (group commit), and
// only then releases the batch's messages and replies. A reply a client sees
// therefore never depends on a write a crash could lose (under the store's
// SyncAlways policy). Where that sync holds the loop (sync always with syncs
// on the loop: one core), a batch that wrote first yields a few times and
// handles, in the same batch, what the connections runnable meanwhile
// submitted, so more writes share each fsync (gather; at most MaxBatch
// events in all).
//
// Early reads (Config.EarlyReads; the server turns them on under sync
// always). A reply a protocol gives through env.ReplyRead carries only
// what its handler read from the store. The node tracks which keys have a
// write not yet durable; such a reply, from a handler that wrote nothing
// and read none of those keys, is already durable, and leaves before the
// batch's sync. With a store.AsyncEngine (the disk engine) the loop then
// does not wait for the fsync at all: it starts the batch's sync, holds
// the batch's other output behind it, and goes on with the next batch; a
// goroutine waits for each sync in turn, and the loop releases the output
// of every batch whose sync has completed, in batch order (an output whose
// batch wrote nothing waits for the syncs started before it). So reads
// are neither held by the fsync of the writes handled beside them nor
// queued behind it. Every other reply and message still leaves after every
// write made before it is durable.
//
// Published reads (Config.PublishReads; the server turns them on). A
// protocol may offer a read's reply for the later reads of its key at its
// level (env.PublishRead); the node keeps it once durable (with
// EarlyReads: at once if the handler read no key awaiting a sync, else
// never; without: after the batch's sync succeeds) until a store Put of
// the key withdraws it (inside the writing handler, so before anything
// the write makes visible leaves), the protocol withdraws it
// (env.WithdrawRead), or Now reaches the end it was published with (a
// lease's; checked by CachedRead on the node's clock, as the protocol
// checks its lease), and CachedRead answers those reads on
// the caller's goroutine, without the loop. The loop alone writes
// the published replies, under a lock that excludes CachedRead's readers.
package node

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	ks "github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Transport carries messages to other nodes. Send must not block the event
// loop for long; delivery is best effort, FIFO per destination.
type Transport interface {
	Send(to wire.NodeID, m wire.Msg)
}

// Services carries requests to storage services (internal/svchost's Router
// is one): the loop hands it each message a protocol sent to a service
// address (wire.StorageService), after the handler's writes are durable,
// like any message. Send must not block; the answer comes back through
// Deliver, as a message from the service's address.
type Services interface {
	Send(to wire.NodeID, m wire.Msg)
}

// Observer receives the runtime's measurements; *metrics.Metrics is one.
// (Messages are counted by the transport, fsyncs by the storage engine.)
type Observer interface {
	// RequestN records n finished requests of one operation, level and
	// outcome that took d each (the replies of a pipeline, released
	// together).
	RequestN(op, level string, d time.Duration, code string, n int)
	InflightAdd(delta int)
	LoopBatch(events int, d time.Duration)
}

// Config configures a node.
type Config struct {
	ID        wire.NodeID
	Topology  *topo.Topology
	Factory   env.Factory
	Engine    store.Engine
	Transport Transport // nil: a single-node cluster
	Services  Services  // nil: messages to storage services are dropped
	Observer  Observer  // nil: no measurements
	Log       *slog.Logger
	// InboxSize bounds the events waiting for the loop; senders block when
	// it is full (backpressure). Default 65,536.
	InboxSize int
	// MaxBatch bounds the events handled per group commit. Default 1,024.
	MaxBatch int
	// Seed seeds the node's Rand; 0 draws one from crypto/rand.
	Seed uint64
	// Clock is the node's time source; nil: the system's (a test seam).
	Clock Clock
	// Latency, if set, is the measured minimum one-way delay to a peer
	// (env.Env.Latency); nil: the world's base delays.
	Latency func(to wire.NodeID) time.Duration
	// Admit, if set, is asked on the loop about every client write (put,
	// delete, migrate) before the protocol sees it; a non-nil error
	// answers the write at once, with nothing done (a full disk:
	// wire.ErrNoSpace). It must be cheap. Reads are never asked.
	// Protocols' own writes (replication from peers, lease records) are
	// not client writes and are not asked.
	Admit func(*wire.Request) *wire.Error
	// PublishReads keeps the replies protocols publish (env.PublishRead),
	// so CachedRead answers reads without the loop: a GET of a key the
	// loop has answered, while the answer stands (nobody has written the
	// key since, the protocol has not withdrawn it, its end has not come),
	// costs no hand-off to the loop and back (docs/performance.md, "Reads
	// answered without the loop").
	PublishReads bool
	// Keyspaces names the keyspaces of the replica's keyspace.Mux, the
	// default first, for CachedRead to find a key's store key
	// (keyspace.AppendStoreKey); nil: a replica without a Mux, whose
	// store keys are the keys of the default keyspace.
	Keyspaces []string
	// EarlyReads lets a reply given through env.ReplyRead leave before its
	// batch's sync when its handler wrote nothing and read no key written
	// since the last sync: what it carries is already durable. Worth it
	// when a sync is an fsync (the disk engine under sync always): reads
	// then do not wait for the writes handled beside them. It also tells
	// the loop that a sync is an fsync: where the loop itself waits in it
	// (no AsyncEngine syncing beside it), a batch that wrote gathers the
	// requests submitted meanwhile first (Run).
	EarlyReads bool
	// Procs is the process's GOMAXPROCS, from which New decides whether an
	// AsyncEngine's syncs may run beside the loop (more than one); 0: read
	// at New. A server whose storage engine raises GOMAXPROCS while it
	// compacts (disk.Options.SpareProc) reads it before opening the engine.
	Procs int
}

// Clock is the real runtime's time source: env.Env.Now is the wall clock
// read at boot plus Mono since, so it never steps; env.Env.Wall is Wall.
type Clock interface {
	// Wall reads the wall clock, ns since the Unix epoch; it may step.
	Wall() int64
	// Mono reads a monotonic clock: it only advances, at the rate of
	// real time (within the oscillator's drift), whatever the wall clock
	// does.
	Mono() time.Duration
}

// SystemClock is the operating system's clocks: time.Now's wall reading
// and its monotonic reading (Go's time.Since uses the monotonic clock).
type SystemClock struct{}

var monoBase = time.Now()

func (SystemClock) Wall() int64         { return time.Now().UnixNano() }
func (SystemClock) Mono() time.Duration { return time.Since(monoBase) }

// SteppableClock is Base with a wall clock that can be stepped, as NTP or
// an operator (`date -s`) steps a machine's: the fault-injection hook
// (/debug/clock) and the nemesis use it. Its monotonic clock is Base's, so
// Env.Now never steps (a running node's leases and timers are unmoved;
// a restarted one reads its boot wall time from the stepped clock).
type SteppableClock struct {
	Base   Clock
	offset atomic.Int64 // ns added to Base's wall clock
}

func (c *SteppableClock) Wall() int64         { return c.Base.Wall() + c.offset.Load() }
func (c *SteppableClock) Mono() time.Duration { return c.Base.Mono() }

// Step moves the wall clock by d and returns its offset from Base's.
func (c *SteppableClock) Step(d time.Duration) time.Duration {
	return time.Duration(c.offset.Add(int64(d)))
}

type eventKind uint8

const (
	evDeliver eventKind = iota + 1
	evRequest
	evTimer
	evFunc
)

type event struct {
	kind  eventKind
	from  wire.NodeID
	msg   wire.Msg
	reqs  []*wire.Request   // evRequest
	done  func(*wire.Reply) // evRequest
	start time.Time         // evRequest: when submitted
	timer env.TimerID
	fn    func()
}

type pendingKey struct {
	client wire.ClientID
	id     wire.RequestID
}

type pending struct {
	done  func(*wire.Reply)
	start time.Time
	op    wire.Op
	level wire.Level
}

type freshReq struct {
	key pendingKey
	p   pending
}

// Node runs one replica.
type Node struct {
	cfg Config
	// bootWall and bootMono are the clocks read at New: Now's origin.
	bootWall int64
	bootMono time.Duration
	replica  env.Replica
	inbox    chan event
	rng      *rand.Rand
	log      *slog.Logger
	obs      Observer

	clients atomic.Int64
	// gate orders entries into the inbox against shutdown: senders hold it
	// shared while they check stopped and send; shutdown closes closing (to
	// free blocked senders), then takes it exclusively and sets stopped, so
	// no event joins the inbox after shutdown has drained it.
	gate    sync.RWMutex
	closing chan struct{}
	stopped atomic.Bool
	failed  bool  // the store failed or the replica fail-stopped: nothing may leave any more
	halt    error // the replica's FailStop cause (owned by the loop)
	// broken is the store failure the node serves on with: every request
	// is refused with it, nothing else is handled (owned by the loop).
	broken *wire.Error

	// Owned by the loop. Timers live in a min-heap by deadline; one
	// time.Timer wakes the loop for the earliest. A cancelled timer's
	// payload is deleted and its heap entry skipped when it surfaces.
	timers  timerHeap
	payload map[env.TimerID]any
	nextTID env.TimerID
	wake    *time.Timer
	reqs    map[pendingKey]pending
	// fresh holds, in order, the requests of the batch being handled
	// from freshNext on: most are answered in the batch that brought them
	// (a local read, a write the node applies alone), in request order,
	// and taking them from here costs no map operation. The rest move to
	// reqs at the end of the batch, or at the first reply out of order
	// (settle).
	fresh     []freshReq
	freshNext int
	self      []event // messages to self, handled before the batch's flush
	outMsgs   []outMsg
	outReps   []*wire.Reply
	run       observation // finished requests not yet given to obs
	// With EarlyReads: early holds the batch's replies that may leave
	// before its sync (ReplyRead); dirty maps each key written to the
	// number of the sync that makes its last write durable (syncs are
	// numbered from 1 as they start: started of them have, durable have
	// completed, and unstarted writes wait for the next); touched says
	// whether the handler running has written, or read a key not yet
	// durable (unsafeCleanReads, for the teeth test, ignores it).
	early            []*wire.Reply
	dirty            map[string]uint64
	started, durable uint64
	unstarted        int
	sweepAt          int // dirty's size that makes Put sweep it
	touched          bool
	earlyLeft        int // replies that left early, for tests
	unsafeCleanReads bool
	// With an AsyncEngine: held is the output of batches waiting for
	// their syncs, oldest first; its head always waits for a sync not yet
	// completed. syncq takes each started sync to the syncer goroutine,
	// which reports each completion, in order, on synced; inflight counts
	// the syncs it has not reported yet (at most maxInflight, so neither
	// channel blocks). spare keeps released holds for reuse.
	async    store.AsyncEngine
	holder   store.ThreadHolder // the engine, if its fsyncs may hold the thread
	asyncOK  bool               // an AsyncEngine's syncs may run beside the loop (New; tests set it)
	held     []*held
	syncq    chan store.Pending
	synced   chan error
	inflight int
	spare    []*held
	// reads holds the replies protocols published (env.PublishRead), by
	// store key, for reads served without the loop (CachedRead); written
	// only on the loop, read by any goroutine, under readsMu. readBytes
	// counts their values' bytes (the bounds: maxPublished*).
	readsMu   sync.RWMutex
	reads     map[string]*published
	readBytes int
	// pubq holds, without EarlyReads, the replies published in the batch
	// being handled, until its sync succeeds (PublishRead); loop-owned.
	pubq []queuedRead
	// unsafeKeepPublished keeps published replies across writes of their
	// keys, for the teeth test.
	unsafeKeepPublished bool
	// unsafeReleaseEarly breaks persist-before-send for the teeth test:
	// flush releases the batch's output before it syncs.
	unsafeReleaseEarly bool
}

type outMsg struct {
	to  wire.NodeID
	msg wire.Msg
}

// held is a batch's output waiting for its sync (wait), or, with wait nil,
// only for the output held before it.
type held struct {
	wait store.Pending
	msgs []outMsg
	reps []*wire.Reply
}

// maxInflight bounds the syncs started and not yet completed; the loop
// waits for the oldest when it would start one more (backpressure: the
// disk sets the pace).
const maxInflight = 64

var errStopped = &wire.Error{Code: wire.ErrUnavailable, Msg: "node: shutting down"}

// New builds a node; Run starts it.
func New(cfg Config) (*Node, error) {
	if cfg.Topology == nil || cfg.Factory == nil || cfg.Engine == nil {
		return nil, errors.New("node: Topology, Factory and Engine are required")
	}
	if int(cfg.ID) < 0 || int(cfg.ID) >= len(cfg.Topology.Nodes) {
		return nil, fmt.Errorf("node: id %d outside the topology's %d nodes", cfg.ID, len(cfg.Topology.Nodes))
	}
	if cfg.InboxSize == 0 {
		cfg.InboxSize = 1 << 16
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = 1024
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	n := &Node{
		cfg:      cfg,
		bootWall: cfg.Clock.Wall(),
		bootMono: cfg.Clock.Mono(),
		inbox:    make(chan event, cfg.InboxSize),
		rng:      rand.New(rand.NewPCG(seed, uint64(cfg.ID))),
		log:      cfg.Log,
		obs:      cfg.Observer,
		payload:  make(map[env.TimerID]any),
		wake:     time.NewTimer(time.Hour),
		reqs:     make(map[pendingKey]pending),
		closing:  make(chan struct{}),
	}
	procs := cfg.Procs
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	n.asyncOK = procs > 1
	n.holder, _ = cfg.Engine.(store.ThreadHolder)
	if cfg.PublishReads {
		n.reads = make(map[string]*published)
	}
	if cfg.EarlyReads {
		n.dirty = make(map[string]uint64)
		n.sweepAt = minSweep
	}
	return n, nil
}

// NewClientID implements api.Backend.
func (n *Node) NewClientID() wire.ClientID { return wire.ClientID(n.clients.Add(1)) }

// enqueue hands an event to the loop; false if the node has stopped.
func (n *Node) enqueue(ev event) bool {
	n.gate.RLock()
	defer n.gate.RUnlock()
	if n.stopped.Load() {
		return false
	}
	select {
	case n.inbox <- ev:
		return true
	case <-n.closing:
		return false
	}
}

// Submit implements api.Backend: the request joins the loop's inbox; done
// runs on the loop when the protocol replies.
func (n *Node) Submit(req *wire.Request, done func(*wire.Reply)) {
	n.SubmitBatch([]*wire.Request{req}, done)
}

// SubmitBatch implements api.BatchSubmitter: the requests join the inbox
// as one event, in order.
func (n *Node) SubmitBatch(reqs []*wire.Request, done func(*wire.Reply)) {
	if n.obs != nil {
		n.obs.InflightAdd(len(reqs))
	}
	if !n.enqueue(event{kind: evRequest, reqs: reqs, done: done, start: time.Now()}) {
		n.refuse(reqs, done)
	}
}

// refuse answers requests that never reached the protocol.
func (n *Node) refuse(reqs []*wire.Request, done func(*wire.Reply)) {
	n.refuseWith(reqs, done, errStopped)
}

func (n *Node) refuseWith(reqs []*wire.Request, done func(*wire.Reply), e *wire.Error) {
	if n.obs != nil {
		n.obs.InflightAdd(-len(reqs))
	}
	for _, req := range reqs {
		done(&wire.Reply{ID: req.ID, Client: req.Client, Err: e})
	}
}

// Deliver hands a message from another node to the loop (the transport
// calls it). It returns at once once the node has stopped.
func (n *Node) Deliver(from wire.NodeID, m wire.Msg) {
	n.enqueue(event{kind: evDeliver, from: from, msg: m})
}

// Do runs fn on the loop and waits for it (status queries, tests).
func (n *Node) Do(ctx context.Context, fn func()) error {
	done := make(chan struct{})
	ok := make(chan bool, 1)
	go func() { ok <- n.enqueue(event{kind: evFunc, fn: func() { fn(); close(done) }}) }()
	select {
	case sent := <-ok:
		if !sent {
			return errors.New("node: stopped")
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Inspect runs fn on the loop with the node's replica and its clock's
// reading, and waits for it: the way to read protocol state (counters for
// /metrics and /status) without racing the loop. fn must not keep the
// replica.
func (n *Node) Inspect(ctx context.Context, fn func(r env.Replica, now int64)) error {
	return n.Do(ctx, func() { fn(n.replica, n.Now()) })
}

// Run starts the replica and runs the event loop until ctx is cancelled
// or the replica fail-stops (Env.FailStop). Requests still queued then get
// ErrUnavailable, and those the protocol had taken ErrTimeout (their
// outcome is unknown).
//
// A store that fails to sync (a commit Pebble could not write: see package
// disk) does not end the loop, so the process does not exit on it: nothing
// that depended on the failed writes leaves, the requests the protocol had
// taken get ErrTimeout, and from then on the node refuses every request
// with ErrUnavailable naming the failure, until it is restarted. Its
// /readyz says why (the engine's Writable).
func (n *Node) Run(ctx context.Context) error {
	defer n.shutdown()
	if a, ok := n.cfg.Engine.(store.AsyncEngine); ok && n.dirty != nil && n.asyncOK {
		// Syncs run beside the loop only where reads may leave early
		// (with writes alone it measured no faster), and where the
		// goroutine that waits for them has a core of its own: on one,
		// its hand-offs cost more than the overlap gains
		// (docs/performance.md, "Syncs beside the loop").
		n.async = a
		n.syncq = make(chan store.Pending, maxInflight)
		n.synced = make(chan error, maxInflight)
		go syncer(n.syncq, n.synced)
	}
	n.replica = n.cfg.Factory(n.cfg.ID)
	n.replica.Start(n)
	n.handleSelf()
	if n.halt != nil {
		return n.stop()
	}
	if err := n.flush(); err != nil {
		n.breakDown(err)
	}
	batch := make([]event, 0, n.cfg.MaxBatch)
	for {
		if ctx.Err() != nil {
			return nil
		}
		if n.inflight > 0 {
			n.pollSynced()
		}
		batch = n.dueTimers(batch[:0], time.Now())
		if len(batch) == 0 {
			n.armWake()
			select {
			case <-ctx.Done():
				return nil
			case ev := <-n.inbox:
				batch = append(batch, ev)
			case <-n.wake.C:
				continue
			case err := <-n.synced:
				n.onSynced(err)
				continue
			}
		}
		// A lone request woke the loop: the sender readied it, so it runs
		// as soon as that one connection parks, and without a yield it
		// would take one connection's requests per turn (98% of turns
		// under redis-benchmark -c 50 -P 16). One yield lets the other
		// connections that are runnable submit first, so one turn (and
		// one flush) serves many of them: CPU per GET 1.40 -> 1.24 µs.
		// It only delays when the batch starts; what a batch does with
		// its events, and persist before send, are unchanged.
		if len(batch) == 1 && len(n.inbox) == 0 && batch[0].kind == evRequest {
			runtime.Gosched()
		}
		batch = n.fill(batch, n.cfg.MaxBatch)
		start := time.Now()
		handled := n.handleAll(batch)
		// Before an fsync on the loop, gather: the connections that are
		// runnable now would otherwise submit while the fsync runs and wait
		// for the next one. Yielding lets them submit first, and what they
		// submitted joins this batch and its fsync, until a yield brings
		// nothing (at most maxGather yields). Only writes pay the wait, and
		// only where the fsync holds the loop (sync always, one core: with
		// more, syncs run beside the loop and it goes on meanwhile).
		// redis-benchmark SET --sync always, GOMAXPROCS=1, medians of 3
		// pairs: 24 -> 30 SETs per fsync and +3% SETs/s at -P 1 (p99 1.36
		// -> 1.25 ms), +6% at -P 16 (docs/performance.md, "Gather before
		// the fsync").
		for range maxGather {
			if n.unstarted == 0 || !n.syncHoldsLoop() || n.halt != nil || n.broken != nil || handled >= n.cfg.MaxBatch {
				break
			}
			runtime.Gosched()
			batch = n.fill(batch[:0], n.cfg.MaxBatch-handled)
			if len(batch) == 0 {
				break
			}
			handled += n.handleAll(batch)
		}
		n.handleSelf()
		if n.halt != nil {
			return n.stop()
		}
		if err := n.flush(); err != nil {
			n.breakDown(err)
		}
		if n.obs != nil {
			n.obs.LoopBatch(handled, time.Since(start))
		}
	}
}

// syncHoldsLoop reports whether the batch's sync is an fsync the loop
// waits in: EarlyReads is set where a sync is an fsync (Config), and with
// no AsyncEngine running beside the loop, the loop makes it.
func (n *Node) syncHoldsLoop() bool { return n.dirty != nil && n.async == nil }

// maxGather bounds the yields a batch of writes makes before its fsync to
// let runnable connections join it (Run).
const maxGather = 4

// fill appends to batch the events waiting in the inbox, until it holds
// limit.
func (n *Node) fill(batch []event, limit int) []event {
	for len(batch) < limit {
		select {
		case ev := <-n.inbox:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// handleAll handles a batch's events (drops them once the replica has
// halted or the store has failed) and returns how many there were.
func (n *Node) handleAll(batch []event) int {
	for i := range batch {
		if n.halt == nil && n.broken == nil {
			n.handle(&batch[i])
		} else {
			n.drop(&batch[i])
		}
		batch[i] = event{}
	}
	return len(batch)
}

// handleSelf handles the messages the node sent itself, and what they send
// in turn: they never leave the node, so they need not wait for the sync.
func (n *Node) handleSelf() {
	for i := 0; i < len(n.self) && n.halt == nil; i++ {
		n.handle(&n.self[i])
		n.self[i] = event{}
	}
	n.self = n.self[:0]
}

// dueTimers appends an event for every live timer due by now.
func (n *Node) dueTimers(batch []event, now time.Time) []event {
	for len(n.timers) > 0 && !n.timers[0].at.After(now) {
		t := n.timers.pop()
		if _, live := n.payload[t.id]; live {
			batch = append(batch, event{kind: evTimer, timer: t.id})
		}
	}
	return batch
}

// armWake sets the wake timer for the earliest live timer.
func (n *Node) armWake() {
	for len(n.timers) > 0 {
		if _, live := n.payload[n.timers[0].id]; live {
			n.wake.Reset(time.Until(n.timers[0].at))
			return
		}
		n.timers.pop()
	}
	n.wake.Stop()
}

func (n *Node) handle(ev *event) {
	n.touched = false
	switch ev.kind {
	case evDeliver:
		n.replica.Step(n, ev.from, ev.msg)
	case evTimer:
		p, ok := n.payload[ev.timer]
		if !ok {
			return // cancelled
		}
		delete(n.payload, ev.timer)
		n.replica.Timer(n, p)
	case evRequest:
		for i, req := range ev.reqs {
			if n.halt != nil {
				n.refuse(ev.reqs[i:], ev.done)
				return
			}
			n.touched = false
			n.fresh = append(n.fresh, freshReq{pendingKey{req.Client, req.ID}, pending{done: ev.done, start: ev.start, op: req.Op, level: req.Level}})
			if n.cfg.Admit != nil && req.Op != wire.OpGet {
				if e := n.cfg.Admit(req); e != nil {
					n.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: e})
					continue
				}
			}
			n.replica.Request(n, req)
		}
	case evFunc:
		ev.fn()
	}
}

// drop disposes of an event the replica will never see: a request is
// refused (it never reached the protocol), a function still runs.
func (n *Node) drop(ev *event) {
	switch ev.kind {
	case evRequest:
		if n.broken != nil {
			n.refuseWith(ev.reqs, ev.done, n.broken)
			return
		}
		n.refuse(ev.reqs, ev.done)
	case evFunc:
		ev.fn()
	}
}

// stop ends the loop after the replica fail-stopped: nothing the batch
// produced leaves, and nothing is synced any more.
func (n *Node) stop() error {
	n.forgetReads()
	n.failed = true
	n.dropOut()
	clear(n.early)
	n.early = n.early[:0]
	clear(n.self)
	n.self = n.self[:0]
	return fmt.Errorf("node: fail-stop: %w", n.halt)
}

// flush persists the batch's writes, then releases its messages and
// replies (persist before send).
func (n *Node) flush() error {
	defer n.settle()
	if len(n.outMsgs) == 0 && len(n.outReps) == 0 && len(n.early) == 0 {
		// Nothing leaves: the writes can wait for the next sync.
		return nil
	}
	if n.failed {
		return errors.New("node: store failed earlier")
	}
	early := len(n.early)
	if early > 0 {
		// Durable already: they leave first, and answer while the disk
		// syncs the rest.
		n.earlyLeft += early
		n.early = n.complete(n.early)
	}
	if len(n.outMsgs) == 0 && len(n.outReps) == 0 {
		return nil
	}
	if n.unsafeReleaseEarly {
		n.release()
	}
	if n.async != nil {
		return n.flushAsync()
	}
	if n.holder != nil {
		// Where every reply of the batch waits for this fsync, its
		// connections have nothing to do until it ends: the fsync may
		// keep the scheduler's slot (store.ThreadHolder). Replies that
		// left early free their connections to run meanwhile (a
		// read-mostly load: holding it there measured 15% fewer YCSB B
		// operations per second, docs/performance.md).
		n.holder.HoldThread(early == 0)
	}
	if err := n.cfg.Engine.Sync(); err != nil {
		// Nothing that depends on the unsynced writes may leave, now or
		// during shutdown: drop it all.
		n.failed = true
		n.dropOut()
		return fmt.Errorf("node: sync: %w", err)
	}
	n.syncedNow()
	n.publishQueued()
	n.release()
	return nil
}

// startSync counts a sync started: it covers every write so far.
func (n *Node) startSync() {
	n.started++
	n.unstarted = 0
}

// syncedNow counts a sync started and completed at once (on the loop, or a
// commit without fsync).
func (n *Node) syncedNow() {
	n.startSync()
	n.synced1()
}

// synced1 counts a completed sync, and forgets the written keys once
// every write is durable.
func (n *Node) synced1() {
	n.durable++
	if n.durable == n.started && n.unstarted == 0 {
		clear(n.dirty)
	}
}

// flushAsync starts the batch's sync and holds its output behind it (and
// behind the output already held); with nothing to wait for, it releases
// the output at once.
func (n *Node) flushAsync() error {
	p, err := n.async.SyncStart()
	if err != nil {
		n.dropHeld()
		n.failed = true
		return fmt.Errorf("node: sync: %w", err)
	}
	switch {
	case p != nil:
		n.startSync()
	case n.unstarted > 0:
		// A policy without fsync: SyncStart committed them, as Sync does
		// (no sync is then ever in flight).
		n.syncedNow()
	}
	if p == nil && len(n.held) == 0 {
		n.release()
		return nil
	}
	if p != nil && n.inflight == maxInflight {
		// The disk is maxInflight syncs behind: wait for the oldest.
		if !n.onSynced(<-n.synced) {
			return errBroken // onSynced broke the node down
		}
	}
	h := n.newHeld()
	h.wait = p
	h.msgs, n.outMsgs = n.outMsgs, h.msgs
	h.reps, n.outReps = n.outReps, h.reps
	n.held = append(n.held, h)
	if p != nil {
		n.inflight++
		n.syncq <- p
	}
	return nil
}

// syncer waits for each sync the loop started, in order, and reports it.
func syncer(in <-chan store.Pending, out chan<- error) {
	for p := range in {
		out <- p.Wait()
	}
}

// pollSynced handles the syncs completed so far, without blocking.
func (n *Node) pollSynced() {
	for n.inflight > 0 {
		select {
		case err := <-n.synced:
			n.onSynced(err)
		default:
			return
		}
	}
}

// errBroken is flush's error when the node has already broken down.
var errBroken = errors.New("node: store failed")

// onSynced handles the completion of the oldest sync in flight: on
// success it releases the output held behind it, and the output after
// that which waits for no later sync; on failure nothing held may leave,
// and the node breaks down. It reports success.
func (n *Node) onSynced(err error) bool {
	n.inflight--
	if n.failed {
		return false // broken earlier: the rest was dropped then
	}
	if err != nil {
		n.dropHeld()
		n.failed = true
		n.breakDown(fmt.Errorf("node: sync: %w", err))
		return false
	}
	n.synced1()
	// The head waits for the oldest sync in flight: it is done.
	n.releaseHeld()
	for len(n.held) > 0 && n.held[0].wait == nil {
		n.releaseHeld()
	}
	return true
}

// releaseHeld releases the oldest held output.
func (n *Node) releaseHeld() {
	h := n.held[0]
	n.held[0] = nil
	n.held = n.held[1:]
	if len(n.held) == 0 {
		n.held = n.held[:0:0]
	}
	h.wait = nil
	h.msgs, h.reps = n.releaseOut(h.msgs, h.reps)
	n.spare = append(n.spare, h)
}

func (n *Node) newHeld() *held {
	if k := len(n.spare); k > 0 {
		h := n.spare[k-1]
		n.spare = n.spare[:k-1]
		return h
	}
	return new(held)
}

// dropHeld drops every held output, and this batch's: a sync failed, so
// nothing that may depend on the lost writes may leave. The replies'
// requests stay pending; breakDown answers them with ErrTimeout.
func (n *Node) dropHeld() {
	for i, h := range n.held {
		clear(h.msgs)
		clear(h.reps)
		n.held[i] = nil
	}
	n.held = n.held[:0]
	n.dropOut()
}

// dropOut drops the batch's messages and replies.
func (n *Node) dropOut() {
	clear(n.pubq) // what the batch read is not known durable either
	n.pubq = n.pubq[:0]
	clear(n.outMsgs)
	n.outMsgs = n.outMsgs[:0]
	clear(n.outReps)
	n.outReps = n.outReps[:0]
}

// drainHeld waits for every sync in flight and releases what it held (at
// shutdown; after a failed sync, or a fail-stop, it releases nothing), and
// stops the syncer: no sync runs once the engine may be closed.
func (n *Node) drainHeld() {
	for n.inflight > 0 {
		n.onSynced(<-n.synced)
	}
	if n.syncq != nil {
		close(n.syncq)
		n.syncq = nil
	}
}

// release sends the batch's messages and completes its replies.
func (n *Node) release() {
	n.outMsgs, n.outReps = n.releaseOut(n.outMsgs, n.outReps)
}

// releaseOut sends msgs, completes reps, and returns both emptied.
func (n *Node) releaseOut(msgs []outMsg, reps []*wire.Reply) ([]outMsg, []*wire.Reply) {
	for i, o := range msgs {
		n.send(o)
		msgs[i] = outMsg{}
	}
	return msgs[:0], n.complete(reps)
}

// send hands o to the transport, or to the storage services.
func (n *Node) send(o outMsg) {
	if _, svc := o.to.StorageRegion(); svc {
		if n.cfg.Services != nil {
			n.cfg.Services.Send(o.to, o.msg)
		}
	} else if n.cfg.Transport != nil {
		n.cfg.Transport.Send(o.to, o.msg)
	}
}

// complete answers the requests reps reply to and returns reps emptied.
func (n *Node) complete(reps []*wire.Reply) []*wire.Reply {
	now := time.Now() // one clock read for the batch's latencies
	done := 0
	for i, r := range reps {
		if n.completeAt(r, now) {
			done++
		}
		reps[i] = nil
	}
	n.observed()
	if n.obs != nil && done > 0 {
		// One update of the gauge for the batch: it is an atomic
		// read-modify-write loop, 3% of the CPU of pipelined GETs when
		// made per reply.
		n.obs.InflightAdd(-done)
	}
	return reps[:0]
}

// breakDown turns the node into one that refuses every request with the
// store's failure: the requests the protocol had taken get ErrTimeout
// (their replies were dropped with the unsynced writes, and what reached
// peers earlier may still take effect), timers stop, and from now on
// requests are refused and messages dropped. The loop keeps running, so
// status queries still answer and the process stays up.
func (n *Node) breakDown(err error) {
	n.forgetReads()
	n.broken = &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("node: the store failed; this node takes no requests until it is restarted: %v", err)}
	n.log.Error("node: store sync failed; nothing unpersisted was acknowledged, every request is refused until the node is restarted", "err", err)
	n.timers = nil
	clear(n.payload)
	n.wake.Stop()
	n.timeoutPending("node: the store failed before answering; the outcome is unknown")
}

// timeoutPending answers every request the protocol took and has not
// answered with ErrTimeout: it may have taken effect.
func (n *Node) timeoutPending(msg string) {
	n.settle()
	keys := make([]pendingKey, 0, len(n.reqs))
	for k := range n.reqs {
		keys = append(keys, k)
	}
	for _, k := range keys {
		n.completeOne(&wire.Reply{ID: k.id, Client: k.client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: msg}})
	}
}

func (n *Node) completeOne(r *wire.Reply) {
	if n.completeAt(r, time.Now()) && n.obs != nil {
		n.observed()
		n.obs.InflightAdd(-1)
	}
}

// completeAt answers the pending request r replies to, if any, and
// reports whether it did; the caller updates the in-flight gauge.
func (n *Node) completeAt(r *wire.Reply, now time.Time) bool {
	p, ok := n.take(pendingKey{r.Client, r.ID})
	if !ok {
		return false // already answered
	}
	if n.obs != nil {
		code := "ok"
		if r.Err != nil {
			code = r.Err.Code.String()
		}
		n.observe(p, code, now)
	}
	p.done(r)
	return true
}

// observation is a run of finished requests alike in what the observer
// records: the replies of a pipeline (one SubmitBatch: one start), released
// in one batch (one end).
type observation struct {
	op         wire.Op
	level      wire.Level
	code       string
	start, end time.Time
	n          int
}

// observe adds a finished request to the run it continues, or records the
// run and starts another.
func (n *Node) observe(p pending, code string, end time.Time) {
	o := &n.run
	if o.n > 0 && o.op == p.op && o.level == p.level && o.code == code && o.start.Equal(p.start) && o.end.Equal(end) {
		o.n++
		return
	}
	n.observed()
	*o = observation{op: p.op, level: p.level, code: code, start: p.start, end: end, n: 1}
}

// observed records the run of requests observe gathered.
func (n *Node) observed() {
	if o := &n.run; o.n > 0 {
		n.obs.RequestN(o.op.String(), o.level.String(), o.end.Sub(o.start), o.code, o.n)
		o.n = 0
	}
}

// take removes and returns the pending request k: the next fresh one if
// it is k, else one of an earlier batch from reqs, else (a reply out of
// order) from reqs after settling the fresh ones.
func (n *Node) take(k pendingKey) (pending, bool) {
	if n.freshNext < len(n.fresh) && n.fresh[n.freshNext].key == k {
		p := n.fresh[n.freshNext].p
		n.fresh[n.freshNext] = freshReq{}
		n.freshNext++
		return p, true
	}
	if len(n.reqs) > 0 {
		if p, ok := n.reqs[k]; ok {
			delete(n.reqs, k)
			return p, true
		}
	}
	if n.freshNext == len(n.fresh) {
		return pending{}, false
	}
	n.settle()
	p, ok := n.reqs[k]
	if ok {
		delete(n.reqs, k)
	}
	return p, ok
}

// settle moves the fresh requests not yet answered to reqs (those before
// freshNext were taken and cleared).
func (n *Node) settle() {
	for i := n.freshNext; i < len(n.fresh); i++ {
		f := &n.fresh[i]
		n.reqs[f.key] = f.p
		n.fresh[i] = freshReq{}
	}
	n.fresh, n.freshNext = n.fresh[:0], 0
}

// shutdown stops the node: no event enters the inbox any more; requests
// still queued are refused (they never reached the protocol: ErrUnavailable),
// and requests the protocol had taken but not answered get ErrTimeout (they
// may have taken effect). After a store failure nothing more leaves.
func (n *Node) shutdown() {
	close(n.closing)
	n.gate.Lock()
	n.stopped.Store(true)
	n.gate.Unlock()
	n.forgetReads()
	n.wake.Stop()
	n.timers = nil
	clear(n.payload)
	if !n.failed {
		_ = n.flush() // answers the protocol already produced
	}
	n.drainHeld()
	for {
		select {
		case ev := <-n.inbox:
			n.drop(&ev)
			continue
		default:
		}
		break
	}
	n.timeoutPending("node: stopped before answering; the outcome is unknown")
}

// Env implementation: valid only on the loop.

func (n *Node) Self() wire.NodeID { return n.cfg.ID }

// Now is the wall clock at boot plus monotonic time since: it never steps
// (env.Env.Now).
func (n *Node) Now() int64 { return n.bootWall + int64(n.cfg.Clock.Mono()-n.bootMono) }

// Latency is env.Env.Latency: the measured delay, or the world's base one.
func (n *Node) Latency(to wire.NodeID) time.Duration {
	if n.cfg.Latency != nil {
		return n.cfg.Latency(to)
	}
	return n.cfg.Topology.BaseDelay(n.cfg.ID, to)
}

// Wall is the wall clock (env.Env.Wall).
func (n *Node) Wall() int64 { return n.cfg.Clock.Wall() }

func (n *Node) Send(to wire.NodeID, m wire.Msg) {
	if to == n.cfg.ID {
		n.self = append(n.self, event{kind: evDeliver, from: to, msg: m})
		return
	}
	n.outMsgs = append(n.outMsgs, outMsg{to, m})
}

func (n *Node) Reply(r *wire.Reply) { n.outReps = append(n.outReps, r) }

// published is a reply a read of a key at a level may be given.
type published struct {
	level wire.Level
	until int64 // Now from which it is not given; 0: no end
	rep   wire.Reply
}

// Bounds of the published replies: past either, the next publication
// forgets them all and starts again (the hot keys come back at their next
// read through the loop); keys' and values' bytes count. A value larger
// than maxPublishedValueBytes is not published.
const (
	maxPublished           = 1 << 16
	maxPublishedBytes      = 32 << 20
	maxPublishedValueBytes = env.MaxPublishedValue
)

// PublishRead implements env.ReadPublisher: r answers later reads of key
// at level, until the key is next written (trackingStore), WithdrawRead,
// Now reaches until (if not 0), or the node stops or breaks down, provided
// what it carries is durable and small. With EarlyReads it is durable if
// the handler read no key awaiting a sync (else it is not published);
// without, nothing is known durable before the batch's sync, so it is
// published once that sync has succeeded (flush), unless the key is
// written or withdrawn first.
func (n *Node) PublishRead(key string, level wire.Level, r *wire.Reply, until int64) bool {
	if n.reads == nil {
		return false
	}
	if (n.dirty != nil && n.touched) || r.Err != nil || len(r.Value) > maxPublishedValueBytes {
		return true
	}
	if old := n.reads[key]; old != nil && old.level == level && old.until == until && old.rep.Found == r.Found && old.rep.Version == r.Version {
		return true // published already (the loop reads its own map without the lock)
	}
	p := &published{level: level, until: until, rep: *r}
	p.rep.ID, p.rep.Client = 0, 0
	if n.dirty == nil {
		n.pubq = append(n.pubq, queuedRead{key, p})
		return true
	}
	n.publish(key, p)
	return true
}

// WithdrawRead implements env.ReadPublisher.
func (n *Node) WithdrawRead(key string) { n.withdraw(key) }

// queuedRead is a reply to publish once its batch's sync succeeds.
type queuedRead struct {
	key string
	p   *published
}

// publish makes p key's published reply, within the bounds (the keys'
// bytes count with the values').
func (n *Node) publish(key string, p *published) {
	size := len(key) + len(p.rep.Value)
	n.readsMu.Lock()
	if old := n.reads[key]; old != nil {
		n.readBytes -= len(key) + len(old.rep.Value)
	} else if len(n.reads) >= maxPublished || n.readBytes+size > maxPublishedBytes {
		clear(n.reads)
		n.readBytes = 0
	}
	n.reads[key] = p
	n.readBytes += size
	n.readsMu.Unlock()
}

// publishQueued publishes the replies queued for the sync that has just
// succeeded.
func (n *Node) publishQueued() {
	for i, q := range n.pubq {
		n.publish(q.key, q.p)
		n.pubq[i] = queuedRead{}
	}
	n.pubq = n.pubq[:0]
}

// withdraw forgets key's published reply, and any queued for it: its
// record is being written. It runs before the write's handler returns, so
// before anything the write makes visible leaves the node.
func (n *Node) withdraw(key string) {
	if n.unsafeKeepPublished {
		return
	}
	for i := 0; i < len(n.pubq); i++ {
		if n.pubq[i].key == key {
			n.pubq = slices.Delete(n.pubq, i, i+1)
			i--
		}
	}
	// The loop is the map's only writer: it reads it without the lock.
	old := n.reads[key]
	if old == nil {
		return
	}
	n.readsMu.Lock()
	n.readBytes -= len(key) + len(old.rep.Value)
	delete(n.reads, key)
	n.readsMu.Unlock()
}

// forgetReads forgets every published reply (the node stops or breaks
// down: its reads must go through the loop, which refuses them).
func (n *Node) forgetReads() {
	if n.reads == nil {
		return
	}
	clear(n.pubq)
	n.pubq = n.pubq[:0]
	n.readsMu.Lock()
	clear(n.reads)
	n.readBytes = 0
	n.readsMu.Unlock()
}

// CachedRead implements api.CachedReader: the reply published for a read
// of key in keyspace at level, if any. Safe for concurrent use; the reply
// is shared and must not be modified. A caller uses it only for a read
// that follows nothing of its own still in flight (a client's earlier
// write must be answered before a later read may skip the loop).
func (n *Node) CachedRead(keyspace string, key []byte, level wire.Level) (*wire.Reply, bool) {
	if n.reads == nil {
		return nil, false
	}
	var buf [128]byte
	sk := key
	if n.cfg.Keyspaces != nil {
		var ok bool
		if sk, ok = ks.AppendStoreKey(buf[:0], n.cfg.Keyspaces, keyspace, key); !ok {
			return nil, false
		}
	} else if keyspace != "" {
		return nil, false
	}
	n.readsMu.RLock()
	p := n.reads[string(sk)]
	n.readsMu.RUnlock()
	if p == nil || p.level != level || (p.until != 0 && n.Now() >= p.until) {
		return nil, false
	}
	return &p.rep, true
}

// PublishedStats reports the published replies kept and their keys' and
// values' bytes (for metrics). Safe for concurrent use.
func (n *Node) PublishedStats() (keys, bytes int) {
	if n.reads == nil {
		return 0, 0
	}
	n.readsMu.RLock()
	defer n.readsMu.RUnlock()
	return len(n.reads), n.readBytes
}

// CachedReadsServed implements api.CachedReader: n reads at level were
// answered by CachedRead (for the request metrics; they took no time in
// the node).
func (n *Node) CachedReadsServed(level wire.Level, count int) {
	if n.obs != nil && count > 0 {
		n.obs.RequestN(wire.OpGet.String(), level.String(), 0, "ok", count)
	}
}

// ReplyRead implements env.ReadReplier: with EarlyReads, a reply whose
// handler wrote nothing and read no key written since the last sync
// leaves before the batch's sync (Config.EarlyReads); else it is Reply.
func (n *Node) ReplyRead(r *wire.Reply) {
	if n.dirty == nil || (n.touched && !n.unsafeCleanReads) {
		n.Reply(r)
		return
	}
	n.early = append(n.early, r)
}

func (n *Node) SetTimer(d time.Duration, payload any) env.TimerID {
	n.nextTID++
	id := n.nextTID
	n.payload[id] = payload
	n.timers.push(timerEntry{at: time.Now().Add(d), id: id})
	return id
}

func (n *Node) CancelTimer(id env.TimerID) { delete(n.payload, id) }

func (n *Node) Rand() *rand.Rand { return n.rng }

// Store is the engine until the replica fail-stops; then every call fails,
// so nothing written after the failure can reach the disk.
func (n *Node) Store() store.Store {
	if n.halt != nil {
		return stoppedStore{}
	}
	if n.dirty != nil || n.reads != nil {
		return trackingStore{n}
	}
	return n.cfg.Engine
}

// trackingStore is the engine as handlers see it with EarlyReads or
// published reads: with EarlyReads it keeps the keys written since the
// last sync, and whether the handler running has written or read one of
// them; with published reads a Put withdraws its key's published reply.
type trackingStore struct{ n *Node }

func (s trackingStore) Get(key string) (store.Record, bool, error) {
	if len(s.n.dirty) > 0 {
		if sync, ok := s.n.dirty[key]; ok && sync > s.n.durable {
			s.n.touched = true
		}
	}
	return s.n.cfg.Engine.Get(key)
}

func (s trackingStore) Put(key string, rec store.Record) error {
	n := s.n
	if n.reads != nil {
		n.withdraw(key)
	}
	if n.dirty == nil {
		return n.cfg.Engine.Put(key, rec)
	}
	n.touched = true
	n.unstarted++
	n.dirty[key] = n.started + 1
	if len(n.dirty) >= n.sweepAt {
		// Writes keep syncs in flight: forget the keys already durable.
		for k, sync := range n.dirty { // lint:order-independent (deletes)
			if sync <= n.durable {
				delete(n.dirty, k)
			}
		}
		n.sweepAt = max(minSweep, 2*len(n.dirty))
	}
	return n.cfg.Engine.Put(key, rec)
}

// minSweep is the least size at which the written keys are swept of those
// already durable.
const minSweep = 1 << 16

// FailStop implements env.Env: the loop stops after the current handler,
// and nothing the handler (or its batch) produced leaves.
func (n *Node) FailStop(cause error) {
	if n.halt != nil {
		return
	}
	n.halt = cause
	n.log.Error("node: the replica fail-stopped; the node stops serving", "err", cause)
}

var errFailStopped = errors.New("node: the replica has fail-stopped")

// stoppedStore is the store of a node whose replica fail-stopped.
type stoppedStore struct{}

func (stoppedStore) Get(string) (store.Record, bool, error) {
	return store.Record{}, false, errFailStopped
}
func (stoppedStore) Put(string, store.Record) error { return errFailStopped }

func (n *Node) Topology() *topo.Topology { return n.cfg.Topology }

func (n *Node) Log() *slog.Logger { return n.log }

var _ env.Env = (*Node)(nil)

type timerEntry struct {
	at time.Time
	id env.TimerID
}

// timerHeap is a binary min-heap by deadline (then ID, for a stable order).
type timerHeap []timerEntry

func (h timerHeap) less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}

func (h *timerHeap) push(t timerEntry) {
	*h = append(*h, t)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(a) {
			break
		}
		m := l
		if r := l + 1; r < len(a) && a.less(r, l) {
			m = r
		}
		if !a.less(m, i) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
