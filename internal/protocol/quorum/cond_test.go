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

// oneReplica draws a quorum keyspace in which every key has one replica:
// in the three-region world, replicas_per_region [1, 0, 0], with clients
// at every node whose gateways forward to that replica (even seeds), or a
// single-node world (odd seeds), as `lightcone server` alone runs.
func oneReplica(t testing.TB, seed uint64, unsafe func(*quorum.Config)) simtest.Increments {
	w := swarmWorld(t)
	cfg := quorum.Config{ReplicasPerRegion: []int{1, 0, 0}, Read: wire.One, Write: wire.One,
		ReadTimeout: time.Second, WriteTimeout: time.Second}
	if seed%2 == 1 {
		var err error
		if w, err = topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: here}]\n")); err != nil {
			t.Fatal(err)
		}
		cfg.ReplicasPerRegion = nil
	}
	if unsafe != nil {
		unsafe(&cfg)
	}
	tp := topo.NewTopology(w)
	ks, err := quorum.NewKeyspace(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return simtest.Increments{Topology: tp, Factory: ks.Factory(), Codec: sim.MustCodec(quorum.MessageTypes()), Faults: true}
}

// TestConditionalIncrementsOneReplica: with one replica per key, the
// replica orders the key's writes, and concurrent conditional increments
// from every node — through its crashes, loss, duplication and reordering
// — are linearizable (doc.go, "Conditional writes").
func TestConditionalIncrementsOneReplica(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments { return oneReplica(t, seed, nil) }).Check(t, 20, 6, 20, 5)
}

// TestTeethOneReplicaConditionIgnored: a replica that applies conditional
// writes without checking them lets two increments of the same value both
// succeed; the checker must reject such a run.
func TestTeethOneReplicaConditionIgnored(t *testing.T) {
	simtest.IncrementsGen(func(t testing.TB, seed uint64) simtest.Increments {
		return oneReplica(t, seed, quorum.UnsafeIgnoreCond)
	}).Teeth(t, 20)
}

// TestConditionalWritesRefused: with several replicas per key, whatever
// the levels, a conditional write is refused with ErrInvalid saying why,
// and nothing is written.
func TestConditionalWritesRefused(t *testing.T) {
	tp := topo.NewTopology(swarmWorld(t))
	for _, levels := range [][2]wire.Level{{wire.One, wire.One}, {wire.Quorum, wire.Quorum}, {wire.All, wire.All}} {
		ks, err := quorum.NewKeyspace(tp, quorum.Config{Read: levels[0], Write: levels[1]})
		if err != nil {
			t.Fatal(err)
		}
		var got *wire.Reply
		s := sim.New(sim.Config{Seed: 1, Topology: tp, Factory: ks.Factory(), OnReply: func(r *wire.Reply) { got = r }})
		s.Submit(0, 0, &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("v"), Cond: true})
		s.Run(int64(time.Second))
		if got == nil || got.Err == nil || got.Err.Code != wire.ErrInvalid || !strings.Contains(got.Err.Msg, "one replica per key") {
			t.Errorf("%v/%v: conditional write answered %+v; want ErrInvalid saying it needs one replica per key", levels[0], levels[1], got)
		}
		for _, n := range tp.Nodes {
			if _, ok, _ := s.Engine(n.ID).Get("k"); ok {
				t.Errorf("%v/%v: the refused write was stored at n%d", levels[0], levels[1], n.ID)
			}
		}
	}
}
