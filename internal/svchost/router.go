package svchost

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/lightcone/lightcone/internal/s3svc"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Backend names.
const (
	BackendHosted = "hosted"
	BackendS3     = "s3"
)

// Backend configures one region's storage service (the server YAML's
// storage_services, by region name).
type Backend struct {
	// Backend is "hosted" (default: a durable service on the region's
	// first node, answering after the world's modelled service time; see
	// Disk) or "s3" (the S3 fields below).
	Backend string `yaml:"backend"`
	// Timeout bounds each request to the backend; past it the answer is
	// ErrUnavailable, outcome unknown. Default 10s.
	Timeout      time.Duration `yaml:"timeout"`
	s3svc.Config `yaml:",inline"`
	// Faults, if set, injects storage faults (tests and demos; the server
	// takes it only with fault_injection).
	Faults *Faults `yaml:"faults"`
}

// DefaultTimeout is Backend.Timeout's default.
const DefaultTimeout = 10 * time.Second

// maxInflight bounds the requests a router runs at once (its own and those
// it hosts for other nodes); beyond it a request is answered
// ErrUnavailable at once rather than queued without limit.
const maxInflight = 1024

// pendingTTL is how long a router remembers a request it forwarded to a
// hosting node: an answer later than this is dropped (the protocol's own
// timer has long fired).
const pendingTTL = 5 * time.Minute

// Config configures a Router.
type Config struct {
	Self     wire.NodeID
	Topology *topo.Topology
	// Backends by region name; a region not listed is hosted.
	Backends map[string]Backend
	// Deliver hands a service's answer to this node's event loop, as a
	// message from the service's address (node.Node.Deliver).
	Deliver func(from wire.NodeID, m wire.Msg)
	// Send carries a Call or a Return to another node (the peer
	// transport); nil in a single-node server, where every hosted service
	// is this node's.
	Send func(to wire.NodeID, m wire.Msg)
	Log  *slog.Logger
	// Meter, if set, is told what a cost accountant charges for
	// (cost.Accountant; the server exposes it on /metrics): every request
	// this node's router executes, by the service's region and operation,
	// the bytes of the request and its answer between the caller's region
	// and the service's, and a hosted service's stored bytes. An S3
	// backend's requests are the S3 requests it sends, as "s3:<API>"
	// (s3svc.OnRequest; the catalogues price them), which MinIO's own
	// counters match (s3svc TestMinIORequestCounts).
	Meter Meter
	// Dir, if set, is where the hosted services this node hosts keep
	// their objects (a Disk in Dir/<region>, durable across restarts);
	// empty: in memory (a storagesvc.Mem, lost with the process).
	Dir string
	// WAN emulates the world's delays on requests this node sends straight
	// to another region's endpoint (s3): each is held for a one-way delay
	// drawn from the world going and another coming back, as the peer
	// transport's WAN emulation holds forwarded Calls (wan_emulation), so
	// three local S3 servers stand for three regions' stores.
	WAN bool
}

// Meter observes what a cost accountant charges for (sim.Meter's twin:
// at is the time since the router started).
type Meter interface {
	StorageRequest(region int, op string)
	Stored(region int, at time.Duration, bytes int64)
	Transfer(fromRegion, toRegion int, bytes int64)
}

// Router is the real runtime's route to storage services: the node's event
// loop hands it every message a protocol sends to a service address
// (node.Config.Services), and it runs the request off the loop against the
// region's backend, then delivers the answer back to the loop. A region's
// hosted service lives on its first node (Topology.ByRegion[r][0]): other
// nodes forward requests to it as Calls over the peer transport, and it
// answers with Returns (MessageTypes). If that node is down, the region's
// service is unavailable, as a cloud store's outage would be.
type Router struct {
	cfg      Config
	backends []routeTo
	sem      chan struct{}

	mu      sync.Mutex
	rng     *rand.Rand // service times of hosted services
	seq     uint64
	pending map[uint64]pendingCall
	swept   time.Time
	// replicas are the further replicas (wire.StorageReplica, i > 0) of
	// the services this node hosts or reaches as s3, by address, made on
	// first use: a hosted replica is another Mem (a durable one, the
	// region's Disk under the key prefix "replica-<i>/"), an s3 one the region's
	// bucket under the key prefix "replica-<i>/" (its own objects and
	// ETags; not its own failures or latency: one endpoint serves all).
	replicas map[wire.NodeID]storagesvc.Service
	epoch    uint64 // of hosted Mems
	started  time.Time
	disks    []*Disk
}

type routeTo struct {
	svc     storagesvc.Service // this node runs the requests (s3, or hosted here)
	host    wire.NodeID        // else: the node hosting the region's service
	latency topo.StorageService
	timeout time.Duration
	hosted  bool
	durable bool // a Disk: its further replicas are prefixed views of it
	region  int
}

type pendingCall struct {
	to   wire.NodeID // the service's address
	wrap func(wire.Msg) wire.Msg
	at   time.Time
}

// New builds a router. Each hosted service this node hosts opens its store
// in Config.Dir (or starts empty in memory without one), with a fresh ETag
// epoch.
func New(cfg Config) (*Router, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	w := cfg.Topology.World
	for name := range cfg.Backends { // lint:order-independent: a check
		if w.RegionIndex(name) < 0 {
			return nil, fmt.Errorf("storage_services: %q is not a region of world %q", name, w.Name)
		}
	}
	var seed [16]byte
	_, _ = crand.Read(seed[:])
	r := &Router{cfg: cfg, sem: make(chan struct{}, maxInflight), pending: map[uint64]pendingCall{},
		replicas: map[wire.NodeID]storagesvc.Service{}, epoch: binary.LittleEndian.Uint64(seed[8:]) ^ uint64(time.Now().UnixNano()),
		rng: rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))), started: time.Now()}
	for i, reg := range w.Regions {
		b := cfg.Backends[reg.Name]
		to := routeTo{latency: w.Storage(i), timeout: b.Timeout, region: i}
		if to.timeout == 0 {
			to.timeout = DefaultTimeout
		}
		switch b.Backend {
		case "", BackendHosted:
			to.hosted = true
			to.host = cfg.Topology.ByRegion[i][0]
			if to.host == cfg.Self {
				if cfg.Dir == "" {
					to.svc = NewSerial(storagesvc.NewMem(r.epoch))
					break
				}
				d, err := OpenDisk(filepath.Join(cfg.Dir, reg.Name), cfg.Log)
				if err != nil {
					r.Close()
					return nil, err
				}
				r.disks = append(r.disks, d)
				to.svc, to.durable = d, true
			}
		case BackendS3:
			s, err := s3svc.New(b.Config)
			if err != nil {
				return nil, fmt.Errorf("storage_services.%s: %w", reg.Name, err)
			}
			if m := cfg.Meter; m != nil {
				// Billed by the S3 requests it sends ("s3:GetObject"...):
				// one operation is one to three of them (s3svc's doc).
				region := i
				s.OnRequest(func(api string) { m.StorageRequest(region, "s3:"+api) })
			}
			to.svc = s
		default:
			return nil, fmt.Errorf("storage_services.%s.backend: %q (valid: hosted, s3)", reg.Name, b.Backend)
		}
		if b.Faults != nil {
			if err := b.Faults.Validate(); err != nil {
				r.Close()
				return nil, fmt.Errorf("storage_services.%s.%w", reg.Name, err)
			}
		}
		if b.Faults != nil && to.svc != nil {
			to.svc = &faulty{svc: to.svc, f: *b.Faults, rng: rand.New(rand.NewPCG(r.rng.Uint64(), r.rng.Uint64()))}
		}
		r.backends = append(r.backends, to)
	}
	return r, nil
}

// Close closes the stores of the durable hosted services; requests still
// running fail (their answers are Unavailable or never delivered).
func (r *Router) Close() error {
	var err error
	for _, d := range r.disks {
		err = errors.Join(err, d.Close())
	}
	r.disks = nil
	return err
}

// Send implements node.Services: it takes a message a protocol sent to a
// service address, on the event loop, and returns at once.
func (r *Router) Send(to wire.NodeID, m wire.Msg) {
	region, _, ok := to.StorageReplicaOf()
	req, wrap, isReq := storagesvc.Unwrap(m)
	if !ok || region >= len(r.backends) || !isReq {
		r.cfg.Log.Warn("svchost: dropping a message for no storage service", "to", int64(to), "kind", m.Kind())
		return
	}
	b := r.backends[region]
	if b.svc == nil {
		r.forward(to, b.host, req, wrap)
		return
	}
	b.svc = r.service(to, b)
	r.run(func() {
		resp := r.exec(b, region, r.cfg.Self, req)
		r.cfg.Deliver(to, wrap(resp))
	}, func() { r.cfg.Deliver(to, wrap(busy(req))) })
}

// service is the service at address to, which b's region routes here:
// b's own for replica 0, else the replica's (Router.replicas).
func (r *Router) service(to wire.NodeID, b routeTo) storagesvc.Service {
	_, replica, _ := to.StorageReplicaOf()
	if replica == 0 {
		return b.svc
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	svc := r.replicas[to]
	if svc == nil {
		if b.hosted && !b.durable {
			svc = NewSerial(storagesvc.NewMem(r.epoch + uint64(replica)))
		} else {
			svc = &prefixed{svc: b.svc, prefix: fmt.Sprintf("replica-%d/", replica)}
		}
		r.replicas[to] = svc
	}
	return svc
}

// run runs f on its own goroutine, or overloaded if maxInflight are running.
func (r *Router) run(f, overloaded func()) {
	select {
	case r.sem <- struct{}{}:
		go func() {
			defer func() { <-r.sem }()
			f()
		}()
	default:
		overloaded()
	}
}

func busy(req *storagesvc.Request) *storagesvc.Response {
	return &storagesvc.Response{ID: req.ID, Op: req.Op, Code: storagesvc.Unavailable, Msg: "svchost: too many requests in flight"}
}

// exec runs req on b's service: a hosted one waits its modelled service
// time first (the operation takes effect at its end, as in the simulator).
func (r *Router) exec(b routeTo, region int, from wire.NodeID, req *storagesvc.Request) *storagesvc.Response {
	if b.hosted {
		lat := b.latency.Read
		if req.Op.IsWrite() {
			lat = b.latency.Write
		}
		r.mu.Lock()
		d := lat.Sample(r.rng)
		r.mu.Unlock()
		time.Sleep(d)
	}
	wan := !b.hosted && r.cfg.WAN && b.region != r.cfg.Topology.RegionOf(r.cfg.Self)
	if wan {
		time.Sleep(r.wanDelay(b.region))
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	resp := storagesvc.Exec(ctx, b.svc, req)
	if m := r.cfg.Meter; m != nil {
		r.meter(m, b, region, from, req, resp)
	}
	if wan {
		time.Sleep(r.wanDelay(b.region))
	}
	return resp
}

// meter reports an executed request to the Meter.
func (r *Router) meter(m Meter, b routeTo, region int, from wire.NodeID, req *storagesvc.Request, resp *storagesvc.Response) {
	caller := r.cfg.Topology.RegionOf(from)
	if b.hosted {
		m.StorageRequest(region, req.Op.String()) // an s3 backend's are its S3 requests (New)
	}
	m.Transfer(caller, region, int64(len(req.AppendPayload(nil))))
	m.Transfer(region, caller, int64(len(resp.AppendPayload(nil))))
	if b.hosted && req.Op.IsWrite() {
		m.Stored(region, time.Since(r.started), r.storedBytes(region))
	}
}

// storedBytes is what the hosted services of region on this node store:
// the data and metadata of every replica's objects, as the simulator
// counts them (an s3 backend's are billed by its provider, not here).
func (r *Router) storedBytes(region int) int64 {
	svcs := []storagesvc.Service{r.backends[region].svc}
	r.mu.Lock()
	for to, s := range r.replicas {
		if reg, _, _ := to.StorageReplicaOf(); reg == region {
			svcs = append(svcs, s)
		}
	}
	r.mu.Unlock()
	var n int64
	for _, s := range svcs {
		n += storedIn(s)
	}
	return n
}

// storedIn is the bytes svc stores itself: a prefixed view's are its
// Disk's, counted there.
func storedIn(svc storagesvc.Service) (n int64) {
	switch s := svc.(type) {
	case *faulty:
		return storedIn(s.svc)
	case *Serial:
		s.Do(func(v storagesvc.Service) { n = storedIn(v) })
	case *storagesvc.Mem:
		n = s.Stats().StoredBytes
	case *Disk:
		n = s.StoredBytes()
	}
	return n
}

// wanDelay draws a one-way delay between this node's region and region.
func (r *Router) wanDelay(region int) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.Topology.World.Delay(r.cfg.Topology.RegionOf(r.cfg.Self), region, r.rng)
}

// forward sends req to the node hosting the service at address to.
func (r *Router) forward(to, host wire.NodeID, req *storagesvc.Request, wrap func(wire.Msg) wire.Msg) {
	region, replica, _ := to.StorageReplicaOf()
	if r.cfg.Send == nil {
		r.cfg.Log.Warn("svchost: no transport to the node hosting a storage service", "region", region)
		return
	}
	now := time.Now()
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.pending[seq] = pendingCall{to: to, wrap: wrap, at: now}
	if now.Sub(r.swept) > pendingTTL {
		r.swept = now
		for k, p := range r.pending { // lint:order-independent: deletes
			if now.Sub(p.at) > pendingTTL {
				delete(r.pending, k)
			}
		}
	}
	r.mu.Unlock()
	r.cfg.Send(host, &Call{Seq: seq, Region: int32(region), Replica: int32(replica), Req: req})
}

// HandlePeer takes the router's own messages from the peer transport (Calls
// to a service this node hosts, Returns of its forwarded requests) and
// reports whether m was one.
func (r *Router) HandlePeer(from wire.NodeID, m wire.Msg) bool {
	switch m := m.(type) {
	case *Call:
		r.call(from, m)
	case *Return:
		r.mu.Lock()
		p, ok := r.pending[m.Seq]
		delete(r.pending, m.Seq)
		r.mu.Unlock()
		if ok {
			r.cfg.Deliver(p.to, p.wrap(m.Resp))
		}
	default:
		return false
	}
	return true
}

func (r *Router) call(from wire.NodeID, c *Call) {
	reply := func(resp *storagesvc.Response) { r.cfg.Send(from, &Return{Seq: c.Seq, Resp: resp}) }
	region, replica := int(c.Region), int(c.Replica)
	if region < 0 || region >= len(r.backends) || !r.backends[region].hosted || r.backends[region].svc == nil ||
		replica < 0 || replica >= wire.MaxStorageReplicas {
		reply(&storagesvc.Response{ID: c.Req.ID, Op: c.Req.Op, Code: storagesvc.Unavailable,
			Msg: fmt.Sprintf("svchost: node %d does not host replica %d of region %d's storage service", r.cfg.Self, replica, region)})
		return
	}
	b := r.backends[region]
	b.svc = r.service(wire.StorageReplica(region, replica), b)
	r.run(func() { reply(r.exec(b, region, from, c.Req)) }, func() { reply(busy(c.Req)) })
}

// Call is a request forwarded to the node hosting a region's service.
type Call struct {
	Seq     uint64
	Region  int32
	Replica int32 // of the region's service (wire.StorageReplica)
	Req     *storagesvc.Request
}

// Kind implements wire.Msg.
func (*Call) Kind() string { return "svchost.call" }

// Return is a hosted service's answer to a Call.
type Return struct {
	Seq  uint64
	Resp *storagesvc.Response
}

// Kind implements wire.Msg.
func (*Return) Kind() string { return "svchost.return" }

// MessageTypes are Call and Return, for the peer transport's codec (beside
// the keyspace envelope: they are the runtime's, not a keyspace's).
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "svchost.call", New: func() wire.Encodable { return &Call{Req: &storagesvc.Request{}} }},
		{Kind: "svchost.return", New: func() wire.Encodable { return &Return{Resp: &storagesvc.Response{}} }},
	}
}

// AppendPayload implements wire.Encodable.
func (c *Call) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, c.Seq)
	b = wire.AppendVarint(b, int64(c.Region))
	b = wire.AppendVarint(b, int64(c.Replica))
	return c.Req.AppendPayload(b)
}

// DecodePayload implements wire.Encodable.
func (c *Call) DecodePayload(d *wire.Decoder) {
	c.Seq = d.Uvarint()
	region := d.Varint()
	if region < 0 || region > 1<<20 {
		d.Fail(errors.New("svchost: call for region out of range"))
		return
	}
	c.Region = int32(region)
	replica := d.Varint()
	if replica < 0 || replica >= wire.MaxStorageReplicas {
		d.Fail(errors.New("svchost: call for a service replica out of range"))
		return
	}
	c.Replica = int32(replica)
	c.Req = &storagesvc.Request{}
	c.Req.DecodePayload(d)
}

// AppendPayload implements wire.Encodable.
func (r *Return) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, r.Seq)
	return r.Resp.AppendPayload(b)
}

// DecodePayload implements wire.Encodable.
func (r *Return) DecodePayload(d *wire.Decoder) {
	r.Seq = d.Uvarint()
	r.Resp = &storagesvc.Response{}
	r.Resp.DecodePayload(d)
}
