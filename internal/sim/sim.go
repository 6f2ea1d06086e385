package sim

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/slab"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Epoch is the physical clock reading of a perfect clock at the start of
// every run (2027-01-15), so that timestamps look like real ones.
const Epoch int64 = 1_800_000_000 * int64(time.Second)

// ClockConfig draws each node's clock error at the start of a run.
type ClockConfig struct {
	// MaxOffset bounds each node's initial offset from true time; offsets are
	// drawn uniformly from [-MaxOffset, +MaxOffset]. Default 0.
	MaxOffset time.Duration
	// MaxDriftPPM bounds each node's rate error, drawn uniformly from
	// [-MaxDriftPPM, +MaxDriftPPM] parts per million. Default 0.
	MaxDriftPPM float64
}

// NetConfig is the network's fault model beyond the world's latencies.
type NetConfig struct {
	Loss      float64 // probability a message is dropped
	Duplicate float64 // probability a message is delivered twice
	// Reorder is the probability a message gets an extra delay drawn from
	// [0, ReorderDelay] and may overtake earlier messages on its link.
	// Without it links are FIFO, like TCP.
	Reorder      float64
	ReorderDelay time.Duration // default 50ms when Reorder > 0
}

func (c *NetConfig) ensureDefaults() {
	if c.Reorder > 0 && c.ReorderDelay == 0 {
		c.ReorderDelay = 50 * time.Millisecond
	}
}

// maxSameTime bounds how many events may run at one instant of virtual time
// before the simulator declares a livelock (a protocol re-arming a zero
// timer forever) instead of hanging.
const maxSameTime = 10_000_000

// Config configures a simulation.
type Config struct {
	Seed     uint64
	Topology *topo.Topology
	Factory  env.Factory
	Clock    ClockConfig
	Net      NetConfig
	// OnReply receives every reply that reaches its client, at the true time
	// Sim.Now of its arrival.
	OnReply func(*wire.Reply)
	// Trace, if set, receives one line per event (slow; for debugging).
	Trace io.Writer
	// Log is the nodes' logger; nil discards.
	Log *slog.Logger
	// ServiceTime, if set, is each node's cost of handling one client
	// request or message: a node handles them one at a time, in arrival
	// order, each finishing (and its output leaving) ServiceTime after it
	// starts. It models a node's capacity (1/ServiceTime per second), so
	// overload shows as queueing delay. Timers cost nothing. Zero: nodes
	// are infinitely fast.
	ServiceTime time.Duration
	// Codec, if set, carries every message between nodes (to itself too) as
	// its encoding: encoded at send, decoded afresh at each delivery (see
	// Codec). Nil: messages travel as shared pointers. Client requests and
	// replies are never encoded.
	Codec Codec
	// StoreFaults injects storage failures and torn crashes
	// (storefaults.go). Zero: a perfect store.
	StoreFaults StoreFaults
	// OnViolation receives each broken invariant a replica reports
	// (env.Invariant), and the run goes on. Nil: the simulator panics
	// with the seed, so a bug cannot pass unnoticed.
	OnViolation func(Failure)
	// PublishReads answers client reads from the replies protocols
	// publish (env.PublishRead), as the real server does (published.go).
	PublishReads bool
	// Meter, if set, is told what a cost accountant charges for
	// (service.go): every storage request a service executes, the
	// services' stored bytes, and the bytes of every message sent.
	Meter Meter
}

// Sim is a deterministic discrete-event simulation of a cluster: virtual
// time, one seed, the world's latency model, node clocks, and faults.
type Sim struct {
	cfg   Config
	topo  *topo.Topology
	now   int64
	seq   uint64
	q     queue
	nodes []*node
	net   *rand.Rand
	// lastAt[from*n+to] is the latest delivery time scheduled on the link,
	// to keep links FIFO.
	lastAt  []int64
	blocked []uint16 // blocked[from*n+to]: how many partitions cut the link
	clients map[wire.ClientID]int
	hash    uint64 // running FNV-1a of the trace
	steps   uint64
	same    int // events run at the current instant
	counts  map[string]*kindStat
	scratch []byte // encodes messages to count their bytes
	// encSlab and frames are the chunks newEncoded carves messages in
	// flight from; dec decodes every delivery (Config.Codec), interning
	// the strings it decodes (keys, mostly): a decoded key costs no
	// allocation, and a replica's maps find it by its pointer.
	encSlab slab.Slab[encoded]
	frames  []byte
	dec     wire.Decoder
	log     *slog.Logger
	svc     services              // service.go
	owed    map[wire.ClientID]int // published.go
	handled map[handledAt]int     // published.go
}

// New builds a simulation and boots every node at time 0.
func New(cfg Config) *Sim {
	cfg.Net.ensureDefaults()
	n := len(cfg.Topology.Nodes)
	s := &Sim{
		cfg:     cfg,
		topo:    cfg.Topology,
		net:     rand.New(rand.NewPCG(cfg.Seed, 0x6e6574)), // "net"
		lastAt:  make([]int64, n*n),
		blocked: make([]uint16, n*n),
		clients: make(map[wire.ClientID]int),
		hash:    14695981039346656037,
		counts:  make(map[string]*kindStat),
		log:     cfg.Log,
		encSlab: slab.Slab[encoded]{Chunk: 256},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.dec.Intern(make(map[string]string)) // strings are immutable: sharing one is safe
	s.svc.init(cfg.Seed, len(cfg.Topology.World.Regions))
	clk := rand.New(rand.NewPCG(cfg.Seed, 0x636c6b)) // "clk"
	for i := 0; i < n; i++ {
		id := wire.NodeID(i)
		nd := &node{
			sim:    s,
			id:     id,
			engine: store.NewMem(),
			rng:    rand.New(rand.NewPCG(cfg.Seed, 0x6e6f6465<<16|uint64(i))),
			log:    s.log.With("node", cfg.Topology.Nodes[i].Name),
		}
		if cfg.Clock.MaxOffset > 0 {
			nd.offset = int64((clk.Float64()*2 - 1) * float64(cfg.Clock.MaxOffset))
		}
		if cfg.Clock.MaxDriftPPM > 0 {
			nd.driftPPM = (clk.Float64()*2 - 1) * cfg.Clock.MaxDriftPPM
		}
		if cfg.PublishReads {
			nd.pub.reads = make(map[string]pubRead)
		}
		s.nodes = append(s.nodes, nd)
	}
	if cfg.PublishReads {
		s.owed = make(map[wire.ClientID]int)
		s.handled = make(map[handledAt]int)
	}
	for _, nd := range s.nodes {
		nd.boot()
	}
	return s
}

// Now is the true (simulated) time since the start of the run, in ns.
// Every int64 time in this package is such a true time in nanoseconds.
func (s *Sim) Now() int64 { return s.now }

// Steps is the number of events processed so far.
func (s *Sim) Steps() uint64 { return s.steps }

// TraceHash is a hash of every event processed so far: two runs with equal
// hashes took the same steps.
func (s *Sim) TraceHash() uint64 { return s.hash }

// Topology returns the simulated cluster's layout.
func (s *Sim) Topology() *topo.Topology { return s.topo }

// Engine returns node id's storage engine (for loading data and inspection).
func (s *Sim) Engine(id wire.NodeID) *store.Mem { return s.nodes[id].engine }

// MessageCounts returns how many messages of each kind were sent, sorted by kind.
func (s *Sim) MessageCounts() []KindCount {
	out := make([]KindCount, 0, len(s.counts))
	for _, c := range s.counts { // sorted below
		out = append(out, c.KindCount)
	}
	slices.SortFunc(out, func(a, b KindCount) int {
		if a.Kind < b.Kind {
			return -1
		}
		if a.Kind > b.Kind {
			return 1
		}
		return 0
	})
	return out
}

// kindStat is a kind's count and what the simulator learnt of it.
type kindStat struct {
	KindCount
	// t: a *wire.Codec has encoded a message of this kind, registered as
	// t, so later ones skip the codec's lookups (encoding and decoding).
	t *wire.MsgType
}

// KindCount is the messages of one kind sent: how many, and their size on
// the wire in the real runtime's encoding (0 for messages it cannot encode).
// Sizes are of the values the run actually writes: the scenario runner's
// clients write short unique tags, not value_size bytes.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// At schedules fn at true time t (or now, if t is in the past). Clients and
// fault schedules use it.
func (s *Sim) At(t int64, fn func()) {
	s.schedule(event{at: max(t, s.now), kind: evFunc, fn: fn})
}

// After schedules fn d from now (now, if d is negative).
func (s *Sim) After(d time.Duration, fn func()) {
	s.scheduleAfter(event{kind: evFunc, fn: fn}, int64(max(d, 0)))
}

// Run processes events until the queue is empty or the next event is after
// until; time then stands at until.
func (s *Sim) Run(until int64) {
	for s.q.len() > 0 && s.q.next() <= until {
		at := s.q.next()
		slot, dropped := s.q.pop()
		if dropped {
			// A cancelled timer (node.CancelTimer): it would find no
			// payload and do nothing but count as a step.
			s.advance(at)
			continue
		}
		s.step(s.q.slot(slot))
		s.q.release(slot)
	}
	s.now = max(s.now, until)
}

// Submit sends a client request from a client in region clientRegion to the
// gateway node; the reply comes back through Config.OnReply. A request to a
// crashed gateway is lost, as is a reply to a client behind a dead gateway.
func (s *Sim) Submit(clientRegion int, gateway wire.NodeID, req *wire.Request) {
	s.clients[req.Client] = clientRegion
	s.owe(req.Client)
	d := s.topo.World.Delay(clientRegion, s.topo.RegionOf(gateway), s.net)
	s.schedule(event{at: s.now + int64(d), kind: evRequest, node: gateway, req: req})
}

func (s *Sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	s.q.push(e)
}

// scheduleAfter schedules e wait from now: a fixed wait (a timer's, a
// client's timeout), which the queue keeps in a lane of its own. It
// returns e's slot.
func (s *Sim) scheduleAfter(e event, wait int64) uint32 {
	s.seq++
	e.seq, e.at = s.seq, s.now+wait
	return s.q.pushAfter(e, wait)
}

// advance moves time to at, where the next event runs, and counts the
// event as a step.
func (s *Sim) advance(at int64) {
	if at == s.now {
		if s.same++; s.same > maxSameTime {
			panic(fmt.Sprintf("sim: livelock: %d events at t=%s without time advancing (seed %d)", s.same, time.Duration(s.now), s.cfg.Seed))
		}
	} else {
		s.same = 0
	}
	s.now = at
	s.steps++
}

// step runs e, which stays in its slot of the queue's slab meanwhile
// (events the step schedules take other slots).
func (s *Sim) step(e *event) {
	s.advance(e.at)
	if e.kind == evService || e.kind == evServiceDone {
		s.serviceStep(e)
		return
	}
	nd := s.nodes[e.node]
	if (e.kind == evDeliver || e.kind == evRequest) && s.cfg.ServiceTime > 0 && nd.up {
		if !e.served {
			// Queue for the node: it runs when its service completes.
			done := max(s.now, nd.busyUntil) + int64(s.cfg.ServiceTime)
			nd.busyUntil = done
			e.served, e.gen, e.at = true, nd.gen, done
			s.schedule(*e)
			return
		}
		if e.gen != nd.gen {
			if e.kind == evRequest {
				s.lost(e.req.Client)
			}
			return // the node crashed while this waited
		}
	}
	switch e.kind {
	case evFunc:
		s.traceEvent(e, "func")
		e.fn()
	case evDeliver:
		if !nd.up {
			return
		}
		m := s.delivered(e)
		s.traceEvent(e, m.Kind())
		nd.run(func(r env.Replica) { r.Step(nd, e.from, m) })
	case evRequest:
		if !nd.up {
			s.lost(e.req.Client)
			return
		}
		s.traceEvent(e, "request")
		s.handling(e.req.Client, nd.id)
		if s.cachedRead(nd, e.req) {
			s.traceEvent(e, "published")
			return
		}
		nd.run(func(r env.Replica) { r.Request(nd, e.req) })
	case evReply:
		s.traceEvent(e, "reply")
		if s.cfg.OnReply != nil {
			s.cfg.OnReply(e.rep)
		}
	case evTimer:
		if !nd.up || nd.gen != e.gen {
			return
		}
		t, ok := nd.timers.take(e.timer)
		if !ok {
			return // cancelled while the node was down, or a stale incarnation's
		}
		s.traceEvent(e, "timer")
		nd.run(func(r env.Replica) { r.Timer(nd, t.payload) })
	}
}

func (s *Sim) traceEvent(e *event, what string) {
	// A word at a time (multiply by an odd constant, fold the high half
	// down), then the label's bytes: FNV-1a's byte loop over the four
	// words cost 7% of a quorum run.
	h := s.hash
	for _, v := range [...]uint64{uint64(e.at), uint64(e.kind), uint64(e.node), uint64(e.from)} {
		h = (h ^ v) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	for i := 0; i < len(what); i++ {
		h ^= uint64(what[i])
		h *= 1099511628211
	}
	s.hash = h
	if s.cfg.Trace != nil {
		fmt.Fprintf(s.cfg.Trace, "%12.6f n%d<-n%d %s\n", float64(e.at)/1e9, e.node, e.from, what)
	}
}

// send routes a message through the network model, leaving at time at.
// Either end may be a region's storage service (service.go): such links
// are not FIFO (each request is its own connection) and partitions do not
// cut them (Sim.SetServiceDown models an outage).
func (s *Sim) send(at int64, from, to wire.NodeID, m wire.Msg) {
	c := s.counts[m.Kind()]
	if c == nil {
		c = &kindStat{KindCount: KindCount{Kind: m.Kind()}}
		s.counts[m.Kind()] = c
	}
	c.Count++
	m, size := s.onWire(from, to, m, c)
	c.Bytes += int64(size)
	fromRegion, fromSvc := s.regionOf(from)
	toRegion, toSvc := s.regionOf(to)
	if s.cfg.Meter != nil {
		s.cfg.Meter.Transfer(fromRegion, toRegion, int64(size))
	}
	if toSvc && toRegion >= len(s.topo.World.Regions) {
		panic(fmt.Sprintf("sim: n%d sent %s to the storage service of region %d; the world has %d regions (seed %d)", from, m.Kind(), toRegion, len(s.topo.World.Regions), s.cfg.Seed))
	}
	n := len(s.nodes)
	link := int(from)*n + int(to)
	svc := fromSvc || toSvc
	if !svc && s.blocked[link] > 0 {
		return
	}
	if s.cfg.Net.Loss > 0 && s.net.Float64() < s.cfg.Net.Loss {
		return
	}
	copies := 1
	if s.cfg.Net.Duplicate > 0 && s.net.Float64() < s.cfg.Net.Duplicate {
		copies = 2
	}
	kind := evDeliver
	if toSvc {
		kind = evService
	}
	for ; copies > 0; copies-- {
		d := int64(s.topo.World.Delay(fromRegion, toRegion, s.net))
		if from == to {
			d = 0
		}
		arrive := at + d
		switch {
		case s.cfg.Net.Reorder > 0 && s.net.Float64() < s.cfg.Net.Reorder:
			arrive += s.net.Int64N(int64(s.cfg.Net.ReorderDelay) + 1)
		case !svc:
			arrive = max(arrive, s.lastAt[link])
			s.lastAt[link] = arrive
		}
		s.schedule(event{at: arrive, kind: kind, node: to, from: from, msg: m})
	}
}

// regionOf is the region of a node or of a storage service's address.
func (s *Sim) regionOf(id wire.NodeID) (region int, service bool) {
	if r, ok := id.StorageRegion(); ok {
		return r, true
	}
	return s.topo.RegionOf(id), false
}

func (s *Sim) reply(at int64, from wire.NodeID, r *wire.Reply) {
	region, ok := s.clients[r.Client]
	if !ok {
		return
	}
	s.paid(r.Client, from)
	d := s.topo.World.Delay(s.topo.RegionOf(from), region, s.net)
	s.schedule(event{at: at + int64(d), kind: evReply, node: from, from: from, rep: r})
}
