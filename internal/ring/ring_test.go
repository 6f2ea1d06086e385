package ring

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

func testTopology(regions, perRegion int) *topo.Topology {
	w := &topo.World{Name: "t", NodesPerRegion: perRegion}
	for i := 0; i < regions; i++ {
		w.Regions = append(w.Regions, topo.Region{Name: fmt.Sprintf("r%d", i)})
	}
	return topo.NewTopology(w)
}

func TestReplicasDistinctInRegionAndBalanced(t *testing.T) {
	tp := testTopology(2, 5)
	r := New(tp)
	load := map[wire.NodeID]int{}
	const keys = 20000
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("user%d", k)
		for region := 0; region < 2; region++ {
			reps := r.Replicas(nil, region, key, 3)
			if len(reps) != 3 {
				t.Fatalf("Replicas(%q, region %d) = %v; want 3 nodes", key, region, reps)
			}
			seen := map[wire.NodeID]bool{}
			for _, id := range reps {
				if tp.RegionOf(id) != region || seen[id] {
					t.Fatalf("Replicas(%q, region %d) = %v: wrong region or duplicate", key, region, reps)
				}
				seen[id] = true
				load[id]++
			}
			again := r.Replicas(nil, region, key, 3)
			if !slices.Equal(reps, again) {
				t.Fatalf("Replicas(%q) not stable: %v then %v", key, reps, again)
			}
		}
	}
	want := keys * 3 / 5
	for id, n := range load {
		if n < want*8/10 || n > want*12/10 {
			t.Errorf("node %d owns %d replicas; want %d ±20%%", id, n, want)
		}
	}
	if got := r.Replicas(nil, 0, "k", 9); len(got) != 5 {
		t.Errorf("Replicas(n=9) on a 5-node region = %d nodes; want 5", len(got))
	}
}

// TestOwnerIsFirstReplica: Owner is Replicas' first node, in regions of
// one node and of several, for keys hashing anywhere on the ring
// (including past its last token, where the walk wraps).
func TestOwnerIsFirstReplica(t *testing.T) {
	for _, perRegion := range []int{1, 2, 5} {
		tp := testTopology(3, perRegion)
		r := New(tp)
		owned := map[wire.NodeID]bool{}
		for k := 0; k < 5000; k++ {
			key := fmt.Sprintf("user%d", k)
			for region := 0; region < 3; region++ {
				want := r.Replicas(nil, region, key, 1)[0]
				if got := r.Owner(region, key); got != want {
					t.Fatalf("%d per region: Owner(%d, %q) = n%d; want n%d", perRegion, region, key, got, want)
				}
				owned[want] = true
			}
		}
		if len(owned) != 3*perRegion {
			t.Errorf("%d per region: %d nodes own keys; want all %d", perRegion, len(owned), 3*perRegion)
		}
	}
}
