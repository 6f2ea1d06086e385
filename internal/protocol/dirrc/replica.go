package dirrc

import (
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Replica is one node of an RC keyspace. Every node is a gateway that
// forwards its clients' requests to its region's frontend; a region's first
// node is also the frontend, and the directory's replicas
// (Keyspace.Directories) each run a member of the directory's group. Each
// role keeps its own state and handlers.
type Replica struct {
	ks  *Keyspace
	id  wire.NodeID
	fe  *frontend  // nil unless this node is its region's frontend
	dir *directory // nil unless this node is a directory replica
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	r := &Replica{ks: ks, id: id}
	if ks.Frontend(id) == id {
		r.fe = newFrontend(ks, id)
	}
	if slices.Contains(ks.directories, id) {
		r.dir = newDirectory(ks, id)
	}
	return r
}

// Start implements env.Replica. What a role must keep is in the store;
// what is only in memory (client holds, waiting acquires, heartbeat
// deadlines) is safe to lose (doc.go, "Crashes").
func (r *Replica) Start(e env.Env) {
	if r.fe != nil {
		r.fe.start(e)
	}
	if r.dir != nil {
		r.dir.start(e)
	}
}

// Request implements env.Replica: the frontend serves it, or the gateway
// forwards it to the frontend, which answers the gateway (FwdReply).
func (r *Replica) Request(e env.Env, req *wire.Request) {
	if r.fe != nil {
		r.fe.request(e, client{gw: 0, id: req.Client}, req.ID, req.Op, req.Key, req.Value)
		return
	}
	e.Send(r.ks.Frontend(r.id), &Fwd{ID: req.ID, Client: req.Client, Op: req.Op, Key: req.Key, Value: req.Value})
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	if r.dir != nil && r.dir.g.Step(e, from, m) {
		r.dir.settle(e)
		return
	}
	switch m := m.(type) {
	case *FwdReply:
		rep := &wire.Reply{ID: m.ID, Client: m.Client, Found: m.Found, Value: m.Value, Version: m.Version}
		if m.Code != 0 {
			rep.Err = &wire.Error{Code: m.Code, Msg: m.Msg}
		}
		e.Reply(rep)
	case *Fwd:
		if r.fe != nil {
			r.fe.request(e, client{gw: from, id: m.Client}, m.ID, m.Op, m.Key, m.Value)
		}
	case *Grant:
		if r.fe != nil {
			r.fe.onGrant(e, from, m)
		}
	case *HeartbeatAck:
		if r.fe != nil {
			r.fe.onHeartbeatAck(e, from, m)
		}
	case *SyncReq:
		if r.fe != nil {
			r.fe.onSyncReq(e, from, m)
		}
	case *SyncResp:
		if r.fe != nil {
			r.fe.onSyncResp(e, from, m)
		}
	case *FeAcquire:
		if r.dir != nil {
			r.dir.onAcquire(e, from, m)
		}
	case *FeRelease:
		if r.dir != nil {
			r.dir.onRelease(e, from, m)
		}
	case *Heartbeat:
		if r.dir != nil {
			r.dir.onHeartbeat(e, from, m)
		}
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	if r.dir != nil && r.dir.g.Timer(e, payload) {
		r.dir.settle(e)
		return
	}
	switch payload.(type) {
	case feTick:
		if r.fe != nil {
			r.fe.tick(e)
		}
	case dirTick:
		if r.dir != nil {
			r.dir.tick(e)
		}
	}
}

// Storage keys: a frontend's copy of a row and the epoch its copy is
// current as of. The directory's group keeps its log under "rsm/rc.dir/".
func rowKey(k string) string  { return "rc/row/" + k }
func metaKey(k string) string { return "rc/cur/" + k }

// Counters implements protocol.Counted.
func (r *Replica) Counters(int64) []protocol.Counter {
	var cs []protocol.Counter
	if r.fe != nil {
		cs = append(cs,
			protocol.Counter{Name: "client_evictions_total", Help: "clients released by their frontend after hold_timeout without requests (rule 8)", Value: float64(r.fe.evictions)},
			protocol.Counter{Name: "lapses_total", Help: "holds the frontend dropped (lease over or superseded)", Value: float64(r.fe.lapses)},
			protocol.Counter{Name: "syncs_total", Help: "rows copied from another frontend at acquire (rule 5)", Value: float64(r.fe.syncs)})
	}
	lead := 0
	if r.dir != nil {
		cs = append(cs, protocol.Counter{Name: "forced_releases_total", Help: "heads released by the directory leader after hold_lease without heartbeats (rule 7)", Value: float64(r.dir.forced)})
		if r.dir.g.IsLeader() {
			lead = 1
		}
	}
	return append(cs, protocol.Gauge("directory_leader", "1 if this node leads the directory's replica group, else 0.", lead))
}

// get reads key; a store error fail-stops the node (store.Store).
func get(e env.Env, key string) (store.Record, bool, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(fmt.Errorf("rc: read %q: %w", key, err))
		return store.Record{}, false, false
	}
	return rec, ok, true
}

// put writes key; a store error fail-stops the node.
func put(e env.Env, key string, rec store.Record) bool {
	if err := e.Store().Put(key, rec); err != nil {
		e.FailStop(fmt.Errorf("rc: write %q: %w", key, err))
		return false
	}
	return true
}

func errReply(code wire.ErrorCode, format string, args ...any) *wire.Error {
	return &wire.Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
