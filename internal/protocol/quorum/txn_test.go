package quorum_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestTxnOneNode: a single-node keyspace runs a transaction in one step:
// every read sees the state before it, every write carries one version
// above every version read, an add of a non-integer fails it with nothing
// written; and a keyspace of several nodes refuses transactions.
func TestTxnOneNode(t *testing.T) {
	one := single(t, nil)
	var got *wire.Reply
	s := sim.New(sim.Config{Seed: 1, Topology: one.Topology, Factory: one.Factory, OnReply: func(r *wire.Reply) { got = r }})
	id := wire.RequestID(0)
	do := func(req *wire.Request) *wire.Reply {
		t.Helper()
		id++
		req.ID, req.Client, got = id, 1, nil
		s.Submit(0, 0, req)
		s.Run(s.Now() + int64(time.Second))
		if got == nil {
			t.Fatalf("request %d: no reply", id)
		}
		return got
	}
	txn := func(ops ...wire.TxnOp) *wire.Reply {
		return do(&wire.Request{Op: wire.OpTxn, Txn: &wire.Txn{Ops: ops}})
	}
	put := do(&wire.Request{Op: wire.OpPut, Key: "a", Value: []byte("10")})
	r := txn(wire.TxnOp{Kind: wire.TxnRead, Key: "a"}, wire.TxnOp{Kind: wire.TxnWrite, Key: "a", Value: []byte("x")},
		wire.TxnOp{Kind: wire.TxnAdd, Key: "b", Delta: 5}, wire.TxnOp{Kind: wire.TxnRead, Key: "c"})
	if r.Err != nil || len(r.Txn) != 4 {
		t.Fatalf("txn = %+v; want 4 results", r)
	}
	if res := r.Txn[0]; !res.Found || string(res.Value) != "10" || res.Version != put.Version {
		t.Errorf("read a = %+v; want 10 at %v", res, put.Version)
	}
	if res := r.Txn[2]; res.Found || !res.Version.IsZero() {
		t.Errorf("add b read %+v; want absent", res)
	}
	if res := r.Txn[3]; res.Found {
		t.Errorf("read c = %+v; want absent", res)
	}
	if !put.Version.Less(r.Version) {
		t.Errorf("txn version %v not above the put's %v", r.Version, put.Version)
	}
	for key, want := range map[string]string{"a": "x", "b": "5"} {
		g := do(&wire.Request{Op: wire.OpGet, Key: key})
		if !g.Found || string(g.Value) != want || g.Version != r.Version {
			t.Errorf("Get(%q) = %q at %v; want %q at %v", key, g.Value, g.Version, want, r.Version)
		}
	}
	// An add to a non-integer fails the transaction: b is not written.
	bad := txn(wire.TxnOp{Kind: wire.TxnAdd, Key: "b", Delta: 1}, wire.TxnOp{Kind: wire.TxnAdd, Key: "a", Delta: 1})
	if bad.Err == nil || bad.Err.Code != wire.ErrInvalid || !strings.Contains(bad.Err.Msg, "not a decimal integer") {
		t.Errorf("add to a non-integer: %+v; want ErrInvalid", bad)
	}
	if g := do(&wire.Request{Op: wire.OpGet, Key: "b"}); string(g.Value) != "5" {
		t.Errorf("after the failed txn, b = %q; want 5 (nothing written)", g.Value)
	}
	if e := txn().Err; e == nil || e.Code != wire.ErrInvalid || !strings.Contains(e.Msg, "no operations") {
		t.Errorf("empty txn: %v; want ErrInvalid", e)
	}

	// Several nodes: refused.
	three := topo.NewTopology(swarmWorld(t))
	ks3, err := quorum.NewKeyspace(three, quorum.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s = sim.New(sim.Config{Seed: 1, Topology: three, Factory: ks3.Factory(), OnReply: func(r *wire.Reply) { got = r }})
	if e := txn(wire.TxnOp{Kind: wire.TxnAdd, Key: "b", Delta: 1}).Err; e == nil || e.Code != wire.ErrInvalid || !strings.Contains(e.Msg, "single-node cluster") {
		t.Errorf("txn on three nodes: %v; want ErrInvalid saying it needs a single node", e)
	}
}
