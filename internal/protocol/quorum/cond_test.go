package quorum_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// single is a quorum keyspace on a single-node cluster, as `lightcone
// server` alone runs, with six clients, for simtest.Increments; unsafe,
// if set, switches a rule off.
func single(t testing.TB, unsafe func(*quorum.Config)) simtest.Increments {
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: here}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := quorum.Config{ReadTimeout: time.Second, WriteTimeout: time.Second}
	if unsafe != nil {
		unsafe(&cfg)
	}
	tp := topo.NewTopology(w)
	ks, err := quorum.NewKeyspace(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return simtest.Increments{Topology: tp, Factory: ks.Factory(), Codec: sim.MustCodec(quorum.MessageTypes()), Faults: true, ClientsPerNode: 6}
}

// TestConditionalIncrementsOneReplica: on a single node, whose replica
// orders every write, concurrent conditional increments and plain writes
// from six clients, through crashes of the node, are linearizable
// (doc.go, "Conditional writes").
func TestConditionalIncrementsOneReplica(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments { return single(t, nil) }).Check(t, 20, 5, 20, 5)
}

// TestTeethOneReplicaConditionIgnored: a replica that applies conditional
// writes without checking them lets two increments of the same value both
// succeed; the checker must reject such a run.
func TestTeethOneReplicaConditionIgnored(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments {
		return single(t, quorum.UnsafeIgnoreCond)
	}).Teeth(t, 20)
}

// TestConditionalWritesRefused: on several nodes, whatever the levels and
// even with one replica per key, a conditional write is refused with
// ErrInvalid saying why, and nothing is written.
func TestConditionalWritesRefused(t *testing.T) {
	tp := topo.NewTopology(swarmWorld(t))
	for _, levels := range [][2]wire.Level{{wire.One, wire.One}, {wire.Quorum, wire.Quorum}, {wire.All, wire.All}, {wire.LocalOne, wire.LocalOne}} {
		cfg := quorum.Config{Read: levels[0], Write: levels[1]}
		if levels[0] == wire.LocalOne {
			cfg.ReplicasPerRegion = []int{1, 0, 0}
		}
		ks, err := quorum.NewKeyspace(tp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got *wire.Reply
		s := sim.New(sim.Config{Seed: 1, Topology: tp, Factory: ks.Factory(), OnReply: func(r *wire.Reply) { got = r }})
		s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("v"), Cond: true})
		s.Run(int64(time.Second))
		if got == nil || got.Err == nil || got.Err.Code != wire.ErrInvalid || !strings.Contains(got.Err.Msg, "single-node cluster") {
			t.Errorf("%v/%v: conditional write answered %+v; want ErrInvalid saying it needs a single-node cluster", levels[0], levels[1], got)
		}
		for _, n := range tp.Nodes {
			if _, ok, _ := s.Engine(n.ID).Get("k"); ok {
				t.Errorf("%v/%v: the refused write was stored at n%d", levels[0], levels[1], n.ID)
			}
		}
	}
}
