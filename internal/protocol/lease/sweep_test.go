package lease

import (
	"fmt"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestSweepForgetsExpiredState: per-key state of keys no longer in use
// (leases, lease records, cached mastership records) is dropped once it
// has expired, so memory follows the keys in use.
func TestSweepForgetsExpiredState(t *testing.T) {
	w, err := topo.Parse([]byte("name: two\nnodes_per_region: 1\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 20}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	ks, err := NewKeyspace(tp, Config{LeaseLength: time.Second, RenewTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reps := map[wire.NodeID]*Replica{}
	f := ks.Factory()
	s := sim.New(sim.Config{Seed: 1, Topology: tp, Codec: sim.MustCodec(MessageTypes()), Factory: func(id wire.NodeID) env.Replica {
		r := f(id).(*Replica)
		reps[id] = r
		return r
	}})
	const keys = 200
	for i := range keys {
		key := fmt.Sprintf("k%d", i)
		gw := tp.ByRegion[1][0]
		if ks.Master(key) == gw {
			gw = tp.ByRegion[0][0] // read where the key is not mastered: it takes a lease
		}
		s.At(int64(time.Second)+int64(i)*int64(time.Millisecond), func() {
			s.Submit(tp.RegionOf(gw), gw, &wire.Request{ID: wire.RequestID(i + 1), Client: 1, Op: wire.OpGet, Key: key})
		})
	}
	count := func() (leases, records, metas int) {
		for _, r := range reps {
			leases += len(r.leases)
			records += len(r.records)
			metas += len(r.metas)
		}
		return
	}
	s.Run(int64(1500 * time.Millisecond))
	if l, rec, m := count(); l < keys/2 || rec < keys/2 || m < keys {
		t.Fatalf("after reading %d keys: %d leases, %d lease records, %d mastership records; want about one of each per key", keys, l, rec, m)
	}
	s.Run(int64(6 * time.Second))
	l, rec, m := count()
	if l != 0 || rec != 0 || m > keys {
		t.Fatalf("long after the leases expired: %d leases, %d lease records, %d mastership records; want none, none, and only the masters'", l, rec, m)
	}
}
