package dirsc

import (
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k, id) }
}

// Replica is one node of an SC keyspace. Every node is a gateway that hands
// its clients' requests to its region's frontend; a region's first node is
// also the frontend, and the directory's replicas each run a member of
// their directory group (the default one, or a directory_shards entry's). Each role keeps its own
// state and handlers.
type Replica struct {
	ks *Keyspace
	id wire.NodeID
	gw *gateway
	fe *frontend // nil unless this node is its region's frontend
	// dirs[i] is this node's replica of directory group i (the default
	// one, then each directory_shards entry's), nil where it is none; a
	// node may be a replica of several.
	dirs []*directory
}

func newReplica(ks *Keyspace, id wire.NodeID) *Replica {
	r := &Replica{ks: ks, id: id, gw: newGateway(ks, id)}
	if ks.Frontend(id) == id {
		r.fe = newFrontend(ks, id)
	}
	for _, d := range ks.layout.Dirs {
		var dir *directory
		if slices.Contains(d.Members, id) {
			dir = newDirectory(ks, id, d.Group)
		}
		r.dirs = append(r.dirs, dir)
	}
	return r
}

// dirFor is this node's replica of key's directory group, or nil.
func (r *Replica) dirFor(key string) *directory { return r.dirs[r.ks.layout.Index(key)] }

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

// Start implements env.Replica. Everything a role must keep is in the store
// (the directory's in its group's log); what is only in memory (queued
// client operations, leases, the leader's progress on Processing rows) is
// safe to lose (doc.go, rules D4, D7 and "Guarantee").
func (r *Replica) Start(e env.Env) {
	r.gw.start(e)
	if r.fe != nil {
		r.fe.start(e)
	}
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
	if r.fe != nil {
		r.fe.submit(e, &clientOp{req: req})
		return
	}
	r.gw.forward(e, req)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	if r.stepGroups(e, from, m) {
		return
	}
	switch m := m.(type) {
	case *FwdReply:
		r.gw.onReply(e, m)
	case *Request:
		if d := r.dirFor(m.Key); d != nil {
			d.onRequest(e, from, m)
		}
	case *InvalAck:
		if d := r.dirFor(m.Key); d != nil {
			d.onAck(e, from, m)
		}
	case *Sync:
		// Any frontend serves its copy, whatever its state: the
		// requester checks the data's epoch (doc.go, rule F5).
		if r.fe != nil {
			r.fe.onSync(e, from, m)
		}
	default:
		if r.fe != nil {
			r.fe.step(e, from, m)
		}
	}
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	if r.timerGroups(e, payload) {
		return
	}
	switch p := payload.(type) {
	case gwTimer:
		r.gw.onTimer(e, p)
	case dirTimer:
		if d := r.dirFor(p.key); d != nil {
			d.onTimer(e, p)
		}
	default:
		if r.fe != nil {
			r.fe.onTimer(e, payload)
		}
	}
}

// Storage failure is fail-stop, as in lease (storage.go there): every store
// access goes through get and put, which stop the node on an error, so
// nothing that depends on the failed call leaves the node.

func get(e env.Env, key string) (store.Record, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(fmt.Errorf("sc: read %q: %w", key, err))
		return store.Record{}, false
	}
	return rec, ok
}

func put(e env.Env, key string, rec store.Record) bool {
	if err := e.Store().Put(key, rec); err != nil {
		e.FailStop(fmt.Errorf("sc: write %q: %w", key, err))
		return false
	}
	return true
}

// Store keys: a frontend's row and a preloaded record (read by the loader
// frontend until it writes its own, and by every directory replica). The
// directory's group keeps its log under "rsm/sc.dir/", a shard's under
// "rsm/sc.dir.<escaped prefix>/" (dirgroup.Placement.Layout).
func feKey(k string) string   { return "sc/f/" + k }
func loadKey(k string) string { return "sc/load/" + k }

// loadEpoch is the epoch of preloaded data: the loader holds it Modified
// under epoch 1, and the directory's first grant is epoch 2.
const loadEpoch = 1

// loaded reads key's preloaded record, if any.
func loaded(e env.Env, key string) (rowData, bool) {
	rec, ok := get(e, loadKey(key))
	if !ok {
		return rowData{}, false
	}
	return rowData{Epoch: loadEpoch, Found: true, Rec: rec}, true
}

// gateway forwards requests from a node that is not its region's frontend
// and relays the answers.
type gateway struct {
	ks      *Keyspace
	id      wire.NodeID
	next    uint64
	pending map[uint64]gwPending
}

type gwPending struct {
	req   *wire.Request
	timer env.TimerID
}

type gwTimer struct{ id uint64 }

func newGateway(ks *Keyspace, id wire.NodeID) *gateway {
	return &gateway{ks: ks, id: id, pending: make(map[uint64]gwPending)}
}

// start draws a random first ID, so answers meant for a previous
// incarnation match nothing.
func (g *gateway) start(e env.Env) { g.next = e.Rand().Uint64() >> 1 }

func (g *gateway) forward(e env.Env, req *wire.Request) {
	g.next++
	id := g.next
	// The frontend answers within OpTimeout or refuses; a lost message
	// leaves the outcome unknown.
	t := e.SetTimer(g.ks.cfg.OpTimeout+2*g.ks.cfg.ResendInterval, gwTimer{id})
	g.pending[id] = gwPending{req: req, timer: t}
	e.Send(g.ks.Frontend(g.id), &Fwd{ID: id, Op: req.Op, Key: req.Key, Value: req.Value})
}

func (g *gateway) onReply(e env.Env, m *FwdReply) {
	p, ok := g.pending[m.ID]
	if !ok {
		return // a duplicate, or for a previous incarnation
	}
	delete(g.pending, m.ID)
	e.CancelTimer(p.timer)
	rep := &wire.Reply{ID: p.req.ID, Client: p.req.Client, Found: m.Found, Value: m.Value, Version: m.Version}
	if m.Code != 0 {
		rep = &wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: m.Code, Msg: m.Msg}}
	}
	e.Reply(rep)
}

func (g *gateway) onTimer(e env.Env, t gwTimer) {
	p, ok := g.pending[t.id]
	if !ok {
		return
	}
	delete(g.pending, t.id)
	e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "sc: no answer from the region's frontend"}})
}
