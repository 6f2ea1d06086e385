package dirrc

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Replica is one node of an RC keyspace. Every node is a gateway that
// hands its clients' requests to its region's frontend leader
// (dirgroup.Gateway), and a member of its region's frontend group; the
// directory's replicas each run a member of their directory group (the
// default one, or a directory_shards entry's). Each role keeps its own
// state and handlers.
type Replica struct {
	ks *Keyspace
	id wire.NodeID
	gw *dirgroup.Gateway
	fe *frontend
	// dirs[i] is this node's replica of directory group i (the default
	// one, then each directory_shards entry's), nil where it is none; a
	// node may be a replica of several.
	dirs []*directory
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	r := &Replica{ks: ks, id: id}
	r.fe = newFrontend(ks, id, func(e env.Env, to wire.NodeID, m *dirgroup.FwdReply) { r.gw.Deliver(e, to, m) })
	r.gw = &dirgroup.Gateway{Self: id, Proto: "rc", Timeout: ks.gatewayTimeout(),
		Retry:  ks.cfg.FrontendTick * time.Duration(ks.cfg.FrontendElectionTicks) / 2,
		Leader: r.fe.g.Leader, Local: func(e env.Env, m *dirgroup.Fwd) { r.fe.onFwd(e, id, m) }}
	for i, d := range ks.Layout.Dirs {
		var dir *directory
		if slices.Contains(d.Members, id) {
			dir = newDirectory(ks, id, i)
		}
		r.dirs = append(r.dirs, dir)
	}
	return r
}

// dirFor is this node's replica of key's directory group, or nil.
func (r *Replica) dirFor(key string) *directory { return r.dirs[r.ks.Layout.Index(key)] }

// Start implements env.Replica. What a role must keep is in its group's
// log (the region's copies in the frontend group's, the directory's rows
// in the directory group's); what is only in memory (holds, waiting
// acquires, leases, heartbeat deadlines) is safe to lose (doc.go,
// "Crashes").
func (r *Replica) Start(e env.Env) {
	r.gw.Start(e)
	r.fe.start(e)
	for _, d := range r.dirs {
		if d != nil {
			d.start(e)
		}
	}
}

// Request implements env.Replica: the gateway hands it to the region's
// frontend leader.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	switch req.Op {
	case wire.OpAcquire, wire.OpRelease, wire.OpGet, wire.OpPut, wire.OpDelete:
	default:
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: errReply(wire.ErrInvalid, "rc: unknown operation %s (rc serves acquire, release, get, put, delete)", req.Op)})
		return
	}
	r.gw.Forward(e, req)
	r.settle(e)
}

// settle runs after every input: the frontend member's and the gateway's
// follow-ups.
func (r *Replica) settle(e env.Env) {
	r.fe.settle(e)
	r.gw.Settle(e)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	defer r.settle(e)
	for _, d := range r.dirs {
		if d != nil && d.g.Step(e, from, m) { // rsm messages name their group
			d.settle(e)
			return
		}
	}
	if r.fe.g.Step(e, from, m) {
		return
	}
	switch m := m.(type) {
	case *dirgroup.FwdReply:
		r.gw.OnReply(e, m)
	case *dirgroup.Fwd:
		r.fe.onFwd(e, from, m)
	case *Grant:
		r.fe.onGrant(e, from, m)
	case *HeartbeatAck:
		r.fe.onHeartbeatAck(e, from, m)
	case *SyncReq:
		r.fe.onSyncReq(e, from, m)
	case *SyncResp:
		r.fe.onSyncResp(e, from, m)
	case *FeAcquire:
		if d := r.dirFor(m.Key); d != nil {
			d.onAcquire(e, from, m)
		}
	case *FeRelease:
		if d := r.dirFor(m.Key); d != nil {
			d.onRelease(e, from, m)
		}
	case *Heartbeat:
		// A frontend heartbeats each directory group apart: every hold
		// of one Heartbeat is of the same group's rows.
		if len(m.Holds) > 0 {
			if d := r.dirFor(m.Holds[0].Key); d != nil {
				d.onHeartbeat(e, from, m)
			}
		}
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	defer r.settle(e)
	for _, d := range r.dirs {
		if d != nil && d.g.Timer(e, payload) {
			d.settle(e)
			return
		}
	}
	if r.fe.g.Timer(e, payload) {
		return
	}
	switch p := payload.(type) {
	case dirgroup.GwTimer:
		r.gw.OnTimer(e, p)
	case feTick:
		r.fe.tick(e)
	case dirTick:
		if p.dir < len(r.dirs) && r.dirs[p.dir] != nil {
			r.dirs[p.dir].tick(e)
		}
	}
}

// Store keys: a preloaded record, read by every frontend member when a
// row is first named. The directory's group keeps its log under
// "rsm/rc.dir/", a shard's under "rsm/rc.dir.<escaped prefix>/"
// (dirgroup.Placement.Layout), a region's frontend group under
// "rsm/rc.fe/<region>/".
func loadKey(k string) string { return "rc/load/" + k }

// Counters implements protocol.Counted.
func (r *Replica) Counters(int64) []protocol.Counter {
	// The frontend's counters are this member's, counted while it led
	// its region's group (rule F3).
	cs := []protocol.Counter{
		{Name: "client_evictions_total", Help: "clients released by their frontend after hold_timeout without requests (rule 8)", Value: float64(r.fe.evictions)},
		{Name: "lapses_total", Help: "holds the frontend dropped (lease over or superseded)", Value: float64(r.fe.lapses)},
		{Name: "syncs_total", Help: "rows copied from another frontend at acquire (rule 5)", Value: float64(r.fe.syncs)},
	}
	lead := 0
	if slices.ContainsFunc(r.dirs, func(d *directory) bool { return d != nil }) {
		var forced uint64
		for _, d := range r.dirs {
			if d != nil {
				forced += d.forced
				if d.g.IsLeader() {
					lead++
				}
			}
		}
		cs = append(cs, protocol.Counter{Name: "forced_releases_total", Help: "heads released by the directory leader after hold_lease without heartbeats (rule 7)", Value: float64(forced)})
	}
	feLead := 0
	if r.fe.g.IsLeader() {
		feLead = 1
	}
	return append(cs, protocol.Gauge("directory_leader", "How many directory replica groups this node leads (the default one and directory_shards'; 0 or 1 without shards).", lead),
		protocol.Gauge("frontend_leader", "1 if this node leads its region's frontend group (acts as the region's frontend), else 0.", feLead))
}

// get reads key; a store error fail-stops the node (store.Store), and
// nothing that depends on the failed call leaves it.
func get(e env.Env, key string) (store.Record, bool, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(fmt.Errorf("rc: read %q: %w", key, err))
		return store.Record{}, false, false
	}
	return rec, ok, true
}

func errReply(code wire.ErrorCode, format string, args ...any) *wire.Error {
	return &wire.Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
