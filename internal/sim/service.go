package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Storage services. Every region has one, a storagesvc.Mem, at address
// wire.StorageService(region), and any replica of it a protocol addresses
// (wire.StorageReplica(region, i): another Mem, created on first use, with
// its own objects and service-time draws from the region's model). A request a node sends it travels the
// network like any message (the world's delay from the node's region to
// the service's, loss, duplication, reordering; not partitions, and links
// to services are not FIFO), waits the service time drawn from the
// world's model for the region (topo.StorageService: reads and writes
// apart), is applied at the end of that wait, and the answer travels back
// the same way. So a duplicated request is applied twice, a lost answer
// leaves its outcome unknown to the sender, and concurrent requests take
// effect in the order their service times end, as on a real cloud store.

// services is the simulator's storage services.
type services struct {
	mems [][]*storagesvc.Mem // by region, then replica
	down []bool              // by region: an outage takes every replica
	rng  *rand.Rand          // service times
}

func (v *services) init(seed uint64, regions int) {
	v.rng = rand.New(rand.NewPCG(seed, 0x737663)) // "svc"
	v.down = make([]bool, regions)
	for range regions {
		// Epoch 0: a simulated service never restarts.
		v.mems = append(v.mems, []*storagesvc.Mem{storagesvc.NewMem(0)})
	}
}

// Service returns region's storage service (to load objects before a run
// and to inspect them after; calling it during a run bypasses the network
// and the service time).
func (s *Sim) Service(region int) *storagesvc.Mem { return s.svc.mems[region][0] }

// ServiceReplicas returns region's service replicas that exist so far
// (replica 0 always), to inspect them after a run.
func (s *Sim) ServiceReplicas(region int) []*storagesvc.Mem { return s.svc.mems[region] }

// ServiceAt returns the service (replica) at a storage address
// (wire.StorageReplica), creating it if no request has reached it yet, or
// nil if addr is no storage service of the world.
func (s *Sim) ServiceAt(addr wire.NodeID) *storagesvc.Mem {
	region, replica, ok := addr.StorageReplicaOf()
	if !ok || region >= len(s.svc.mems) {
		return nil
	}
	for len(s.svc.mems[region]) <= replica {
		// Epoch 0 like replica 0: ETags are per object, and a simulated
		// service never restarts.
		s.svc.mems[region] = append(s.svc.mems[region], storagesvc.NewMem(0))
	}
	return s.svc.mems[region][replica]
}

// SetServiceDown starts (down) or ends an outage of region's storage
// service, every replica of it: requests that reach it meanwhile get no answer. Requests it
// had already taken are still applied and answered.
func (s *Sim) SetServiceDown(region int, down bool) {
	s.svc.down[region] = down
	what := "service-up"
	if down {
		what = "service-down"
	}
	s.traceEvent(&event{at: s.now, node: wire.StorageService(region)}, what)
}

// serviceStep handles a request's arrival at a service (evService) and its
// completion (evServiceDone).
func (s *Sim) serviceStep(e *event) {
	region, _ := e.node.StorageRegion()
	switch e.kind {
	case evService:
		if s.svc.down[region] {
			s.traceEvent(e, "service-dropped")
			return
		}
		m := s.delivered(e)
		req, _, ok := storagesvc.Unwrap(m)
		if !ok {
			panic(fmt.Sprintf("sim: n%d sent %s to the storage service of region %d, which takes only storagesvc.Request (seed %d)", e.from, m.Kind(), region, s.cfg.Seed))
		}
		s.traceEvent(e, "service:"+req.Op.String())
		model := s.topo.World.Storage(region)
		lat := model.Read
		if req.Op.IsWrite() {
			lat = model.Write
		}
		d := lat.Sample(s.svc.rng)
		s.schedule(event{at: s.now + int64(max(d, 0)), kind: evServiceDone, node: e.node, from: e.from, msg: m})
	case evServiceDone:
		req, wrap, _ := storagesvc.Unwrap(e.msg)
		s.traceEvent(e, "service-done:"+req.Op.String())
		resp := storagesvc.Exec(context.Background(), s.ServiceAt(e.node), req)
		if m := s.cfg.Meter; m != nil {
			m.StorageRequest(region, req.Op.String())
			if req.Op.IsWrite() {
				m.Stored(region, time.Duration(s.now), s.storedBytes(region))
			}
		}
		s.send(s.now, e.node, e.from, wrap(resp))
	}
}

// Meter observes what a cost accountant charges for (cost.Accountant
// implements it). The simulator calls it from its one goroutine.
type Meter interface {
	// StorageRequest: region's storage service (any replica) executed a
	// request of op (storagesvc.Op's name). A request lost on its way, or
	// dropped by an outage, is not executed and not counted; one whose
	// answer is lost is.
	StorageRequest(region int, op string)
	// Stored: region's services (all replicas) hold bytes as of at.
	Stored(region int, at time.Duration, bytes int64)
	// Transfer: a message of bytes (its encoding) left fromRegion for
	// toRegion, between nodes or to or from a storage service; counted
	// once when sent, whether or not the network then loses or
	// duplicates it.
	Transfer(fromRegion, toRegion int, bytes int64)
}

// storedBytes is what region's service replicas hold.
func (s *Sim) storedBytes(region int) int64 {
	var n int64
	for _, m := range s.svc.mems[region] {
		n += m.Stats().StoredBytes
	}
	return n
}

// MeterStored tells the Meter every region's stored bytes now: call it
// after loading objects into the services directly (Sim.ServiceAt), which
// the Meter does not see.
func (s *Sim) MeterStored() {
	if s.cfg.Meter == nil {
		return
	}
	for r := range s.svc.mems {
		s.cfg.Meter.Stored(r, time.Duration(s.now), s.storedBytes(r))
	}
}
