package wire

import "testing"

// TestStorageReplicaAddresses: every (region, replica) address decodes to
// itself, replica 0 is the region's service address, and none is a node's.
func TestStorageReplicaAddresses(t *testing.T) {
	seen := map[NodeID]bool{}
	for _, region := range []int{0, 1, 7, MaxStorageRegions - 1} {
		for i := range MaxStorageReplicas {
			id := StorageReplica(region, i)
			if seen[id] {
				t.Fatalf("StorageReplica(%d, %d) = %d twice", region, i, id)
			}
			seen[id] = true
			r, rep, ok := id.StorageReplicaOf()
			if !ok || r != region || rep != i {
				t.Fatalf("StorageReplica(%d, %d).StorageReplicaOf() = %d, %d, %v", region, i, r, rep, ok)
			}
			if r2, ok := id.StorageRegion(); !ok || r2 != region {
				t.Fatalf("StorageReplica(%d, %d).StorageRegion() = %d, %v", region, i, r2, ok)
			}
			if id < 0 {
				t.Fatalf("StorageReplica(%d, %d) = %d overflows", region, i, id)
			}
		}
		if StorageService(region) != StorageReplica(region, 0) {
			t.Fatalf("StorageService(%d) is not replica 0", region)
		}
	}
	if _, _, ok := NodeID(1000).StorageReplicaOf(); ok {
		t.Fatal("node 1000 is taken for a storage service")
	}
}
