package lease_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// script drives one simulation by hand: requests at chosen times, faults
// in between, and the history of what clients saw.
type script struct {
	t       testing.TB
	s       *sim.Sim
	tp      *topo.Topology
	ks      *lease.Keyspace
	hist    check.History
	calls   map[wire.RequestID]check.Op
	replies map[wire.RequestID]*wire.Reply
	thens   map[wire.RequestID]func()
	took    map[wire.RequestID]time.Duration
	nextID  wire.RequestID
}

func newScript(t testing.TB, worldYAML string, cfg lease.Config, opts ...func(*sim.Config)) *script {
	w, err := topo.Parse([]byte(worldYAML))
	if err != nil {
		t.Fatal(err)
	}
	sc := &script{t: t, tp: topo.NewTopology(w), calls: map[wire.RequestID]check.Op{}, replies: map[wire.RequestID]*wire.Reply{}, thens: map[wire.RequestID]func(){}, took: map[wire.RequestID]time.Duration{}}
	if sc.ks, err = lease.NewKeyspace(sc.tp, cfg); err != nil {
		t.Fatal(err)
	}
	scfg := sim.Config{Seed: 1, Topology: sc.tp, Factory: sc.ks.Factory(), OnReply: sc.onReply, Codec: sim.MustCodec(lease.MessageTypes())}
	for _, o := range opts {
		o(&scfg)
	}
	sc.s = sim.New(scfg)
	return sc
}

func (sc *script) onReply(r *wire.Reply) {
	sc.replies[r.ID] = r
	if f := sc.thens[r.ID]; f != nil {
		defer f()
	}
	op, ok := sc.calls[r.ID]
	if !ok {
		return
	}
	op.Return, op.Outcome = sc.s.Now(), check.OK
	sc.took[r.ID] = time.Duration(op.Return - op.Call)
	if r.Err != nil {
		op.Outcome = check.Failed
		if op.Kind == check.Write {
			op.Outcome, op.Return = check.Unknown, check.Never
		}
	}
	if op.Kind == check.Read {
		op.Value, op.Found = string(r.Value), r.Found
	}
	sc.hist.Ops = append(sc.hist.Ops, op)
}

// submit sends a request from client (in the gateway's region) at time at
// and returns its ID; reads and writes enter the history.
func (sc *script) submit(at time.Duration, client int64, gateway wire.NodeID, op wire.Op, key, v string) wire.RequestID {
	return sc.submitMode(at, client, gateway, op, key, v, wire.UpdateDefault)
}

// submitMode is submit with a write's update mode.
func (sc *script) submitMode(at time.Duration, client int64, gateway wire.NodeID, op wire.Op, key, v string, mode wire.UpdateMode) wire.RequestID {
	sc.nextID++
	id := sc.nextID
	sc.s.At(int64(at), func() {
		switch op {
		case wire.OpGet:
			sc.calls[id] = check.Op{Client: client, Key: key, Kind: check.Read, Call: sc.s.Now()}
		case wire.OpPut:
			sc.calls[id] = check.Op{Client: client, Key: key, Kind: check.Write, Value: v, Found: true, Call: sc.s.Now()}
		}
		sc.s.Submit(sc.tp.RegionOf(gateway), gateway, &wire.Request{ID: id, Client: wire.ClientID(client), Op: op, Key: key, Value: []byte(v), Update: mode})
	})
	return id
}

// then runs f when request id is answered (a client's next step).
func (sc *script) then(id wire.RequestID, f func()) { sc.thens[id] = f }

// reply is the answer to request id, failing the test if there was none.
func (sc *script) reply(id wire.RequestID) *wire.Reply {
	r := sc.replies[id]
	if r == nil {
		sc.t.Fatalf("request %d: no reply", id)
	}
	return r
}

// replica is key's replica in region reg; other is the other node there.
func (sc *script) replica(key string, reg int) wire.NodeID {
	for _, n := range sc.ks.Replicas(nil, key) {
		if sc.tp.RegionOf(n) == reg {
			return n
		}
	}
	sc.t.Fatalf("no replica of %q in region %d", key, reg)
	return 0
}

func (sc *script) other(n wire.NodeID) wire.NodeID {
	for _, m := range sc.tp.ByRegion[sc.tp.RegionOf(n)] {
		if m != n {
			return m
		}
	}
	sc.t.Fatalf("node %d is alone in its region", n)
	return 0
}

// keyMasteredIn is a key whose initial master is in region reg.
func (sc *script) keyMasteredIn(reg int) string {
	for i := range 10000 {
		k := "k" + string(rune('a'+i%26)) + time.Duration(i).String()
		if sc.tp.RegionOf(sc.ks.Master(k)) == reg {
			return k
		}
	}
	sc.t.Fatal("no key")
	return ""
}
