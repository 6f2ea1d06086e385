package dirrc

import (
	"fmt"
	"slices"

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
// forwards its clients' requests to its region's frontend; a region's first
// node is also the frontend, and the directory's replicas each run a
// member of their directory group (the default one, or a directory_shards
// entry's). Each
// role keeps its own state and handlers.
type Replica struct {
	ks *Keyspace
	id wire.NodeID
	fe *frontend // nil unless this node is its region's frontend
	// dirs[i] is this node's replica of directory group i (the default
	// one, then each directory_shards entry's), nil where it is none; a
	// node may be a replica of several.
	dirs []*directory
	// fwds are the forwarded requests the frontend took: a duplicated Fwd
	// is dropped, or a late copy of a put would write its value again
	// inside a later hold of the same client (TestSwarmSharded seed 223).
	fwds dirgroup.SeenBy[fwdKey]
}

// fwdKey identifies a forwarded request: its gateway, client and ID.
type fwdKey struct {
	gw     wire.NodeID
	client wire.ClientID
	id     wire.RequestID
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	r := &Replica{ks: ks, id: id}
	if ks.Frontend(id) == id {
		r.fe = newFrontend(ks, id)
	}
	for i, d := range ks.layout.Dirs {
		var dir *directory
		if slices.Contains(d.Members, id) {
			dir = newDirectory(ks, id, i)
		}
		r.dirs = append(r.dirs, dir)
	}
	return r
}

// dirFor is this node's replica of key's directory group, or nil.
func (r *Replica) dirFor(key string) *directory { return r.dirs[r.ks.layout.Index(key)] }

// Start implements env.Replica. What a role must keep is in the store;
// what is only in memory (client holds, waiting acquires, heartbeat
// deadlines) is safe to lose (doc.go, "Crashes").
func (r *Replica) Start(e env.Env) {
	if r.fe != nil {
		r.fe.start(e)
	}
	for _, d := range r.dirs {
		if d != nil {
			d.start(e)
		}
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
	for _, d := range r.dirs {
		if d != nil && d.g.Step(e, from, m) { // rsm messages name their group
			d.settle(e)
			return
		}
	}
	switch m := m.(type) {
	case *FwdReply:
		rep := &wire.Reply{ID: m.ID, Client: m.Client, Found: m.Found, Value: m.Value, Version: m.Version}
		if m.Code != 0 {
			rep.Err = &wire.Error{Code: m.Code, Msg: m.Msg}
		}
		e.Reply(rep)
	case *Fwd:
		// A copy arrives within a network delay of the original; the
		// horizon is far longer.
		horizon := int64(4 * (r.ks.cfg.AcquireTimeout + r.ks.cfg.HoldTimeout))
		if r.fe != nil && r.fwds.First(fwdKey{from, m.Client, m.ID}, e.Now(), horizon) {
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
	for _, d := range r.dirs {
		if d != nil && d.g.Timer(e, payload) {
			d.settle(e)
			return
		}
	}
	switch p := payload.(type) {
	case feTick:
		if r.fe != nil {
			r.fe.tick(e)
		}
	case dirTick:
		if p.dir < len(r.dirs) && r.dirs[p.dir] != nil {
			r.dirs[p.dir].tick(e)
		}
	}
}

// Storage keys: a frontend's copy of a row and the epoch its copy is
// current as of. The directory's group keeps its log under "rsm/rc.dir/", a
// shard's under "rsm/rc.dir.<escaped prefix>/" (dirgroup.Placement.Layout).
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
	return append(cs, protocol.Gauge("directory_leader", "How many directory replica groups this node leads (the default one and directory_shards'; 0 or 1 without shards).", lead))
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
