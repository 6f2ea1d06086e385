package dirsc

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Replica is one node of an SC keyspace. Every node is a gateway that hands
// its clients' requests to its region's frontend leader, and a member of its
// region's frontend group; the directory's replicas each run a member of
// their directory group (the default one, or a directory_shards entry's).
// Each role keeps its own state and handlers.
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
	r.gw = &dirgroup.Gateway{Self: id, Proto: "sc", Timeout: ks.cfg.OpTimeout + 2*ks.cfg.ResendInterval,
		Retry:  ks.cfg.FrontendTick * time.Duration(ks.cfg.FrontendElectionTicks) / 2,
		Leader: r.fe.g.Leader, Local: func(e env.Env, m *dirgroup.Fwd) { r.fe.onFwd(e, id, m) }}
	for _, d := range ks.Layout.Dirs {
		var dir *directory
		if slices.Contains(d.Members, id) {
			dir = newDirectory(ks, id, d.Group)
		}
		r.dirs = append(r.dirs, dir)
	}
	return r
}

// dirFor is this node's replica of key's directory group, or nil.
func (r *Replica) dirFor(key string) *directory { return r.dirs[r.ks.Layout.Index(key)] }

// stepGroups gives m to the directory group it is addressed to (rsm
// messages name their group), reporting whether one took it.
func (r *Replica) stepGroups(e env.Env, from wire.NodeID, m wire.Msg) bool {
	for _, d := range r.dirs {
		if d != nil && d.g.Step(e, from, m) {
			d.settle(e)
			return true
		}
	}
	return false
}

// timerGroups gives a timer to the directory group that set it.
func (r *Replica) timerGroups(e env.Env, payload any) bool {
	for _, d := range r.dirs {
		if d != nil && d.g.Timer(e, payload) {
			d.settle(e)
			return true
		}
	}
	return false
}

// Start implements env.Replica. Everything a role must keep is in its
// group's log (the region's rows in the frontend group's, the directory's
// in the directory group's); what is only in memory (queued client
// operations, leases, the leaders' progress) is safe to lose (doc.go,
// rules D4, D7, F9 and "Guarantee").
func (r *Replica) Start(e env.Env) {
	r.gw.Start(e)
	r.fe.start(e)
	for _, d := range r.dirs {
		if d != nil {
			d.start(e)
		}
	}
}

// Request implements env.Replica.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	if req.Op != wire.OpGet && req.Op != wire.OpPut && req.Op != wire.OpDelete {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("sc: unknown operation %s", req.Op)}})
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
	if r.stepGroups(e, from, m) {
		return
	}
	if r.fe.g.Step(e, from, m) {
		return
	}
	switch m := m.(type) {
	case *dirgroup.FwdReply:
		r.gw.OnReply(e, m)
	case *Request:
		if d := r.dirFor(m.Key); d != nil {
			d.onRequest(e, from, m)
		}
	case *InvalAck:
		if d := r.dirFor(m.Key); d != nil {
			d.onAck(e, from, m)
		}
	default:
		r.fe.step(e, from, m)
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	defer r.settle(e)
	if r.timerGroups(e, payload) {
		return
	}
	if r.fe.g.Timer(e, payload) {
		return
	}
	switch p := payload.(type) {
	case dirgroup.GwTimer:
		r.gw.OnTimer(e, p)
	case dirTimer:
		if d := r.dirFor(p.key); d != nil {
			d.onTimer(e, p)
		}
	default:
		r.fe.onTimer(e, payload)
	}
}

// Storage failure is fail-stop, as in lease (storage.go there): every store
// access outside the groups (which fail-stop likewise) goes through get,
// which stops the node on an error, so nothing that depends on the failed
// call leaves the node.

func get(e env.Env, key string) (store.Record, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(fmt.Errorf("sc: read %q: %w", key, err))
		return store.Record{}, false
	}
	return rec, ok
}

// Store keys: a preloaded record (read by every member of the loader's
// region until a command changes the row, and by every directory
// replica). The directory's group keeps its log under "rsm/sc.dir/", a
// shard's under "rsm/sc.dir.<escaped prefix>/" (dirgroup.Placement.Layout),
// a region's frontend group under "rsm/sc.fe/<region>/".
func loadKey(k string) string { return "sc/load/" + k }

// loadEpoch is the epoch of preloaded data: the loader's region holds it
// Modified under epoch 1, and the directory's first grant is epoch 2.
const loadEpoch = 1

// loaded reads key's preloaded record, if any.
func loaded(e env.Env, key string) (rowData, bool) {
	rec, ok := get(e, loadKey(key))
	if !ok {
		return rowData{}, false
	}
	return rowData{Epoch: loadEpoch, Found: true, Rec: rec}, true
}
