package meteor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestKeyCacheBounded: a node that sees more distinct keys than
// meteor.MaxKeyInfos (written, and asked for while absent) keeps at most
// meteor.MaxKeyInfos cache entries, and every key still reads back its value
// after the cache was dropped.
func TestKeyCacheBounded(t *testing.T) {
	tp := topo.NewTopology(simtest.World3(t, 20, 35, 60, 0.2))
	ks, err := meteor.NewKeyspace(tp, meteor.Config{ReplicasPerRegion: []int{1, 1, 1}, Write: wire.Quorum, Mode: meteor.M2,
		ReadTimeout: time.Second, WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var replicas []*meteor.Replica
	factory := ks.Factory()
	var s *sim.Sim
	replies := map[wire.RequestID]*wire.Reply{}
	s = sim.New(sim.Config{Seed: 1, Topology: tp, Codec: sim.MustCodec(meteor.MessageTypes()),
		Factory: func(id wire.NodeID) env.Replica {
			r := factory(id).(*meteor.Replica)
			replicas = append(replicas, r)
			return r
		},
		OnReply: func(r *wire.Reply) { replies[r.ID] = r }})
	const keys = meteor.MaxKeyInfos + meteor.MaxKeyInfos/2
	id := wire.RequestID(0)
	submit := func(at time.Duration, op wire.Op, key, val string) wire.RequestID {
		id++
		req := &wire.Request{ID: id, Client: 1, Op: op, Key: key}
		if op == wire.OpPut {
			req.Value = []byte(val)
		}
		s.At(int64(at), func() { s.Submit(0, 0, req) })
		return id
	}
	for i := range keys {
		submit(time.Duration(i)*200*time.Microsecond, wire.OpPut, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
		submit(time.Duration(i)*200*time.Microsecond, wire.OpGet, fmt.Sprintf("absent%d", i), "")
	}
	start := time.Duration(keys)*200*time.Microsecond + 2*time.Second
	gets := map[wire.RequestID]int{}
	for i := 0; i < keys; i += 97 {
		gets[submit(start+time.Duration(i)*time.Microsecond, wire.OpGet, fmt.Sprintf("k%d", i), "")] = i
	}
	s.Run(int64(start + 3*time.Second))
	if len(replicas) == 0 {
		t.Fatal("no replica was built")
	}
	for _, r := range replicas {
		if meteor.KeyInfos(r) > meteor.MaxKeyInfos {
			t.Errorf("a replica caches %d keys; want at most %d", meteor.KeyInfos(r), meteor.MaxKeyInfos)
		}
	}
	for rid, i := range gets {
		rep := replies[rid]
		if want := fmt.Sprintf("v%d", i); rep == nil || rep.Err != nil || !rep.Found || string(rep.Value) != want {
			t.Errorf("get k%d after the cache was dropped: %+v; want %s", i, rep, want)
		}
	}
}
