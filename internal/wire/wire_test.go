package wire

import (
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
)

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

// TestParseVersion: ParseVersion reads what Version.String writes, "0" is
// the zero version, and anything else is refused.
func TestParseVersion(t *testing.T) {
	for _, v := range []Version{{}, {TS: hlc.Timestamp{WallNanos: 12, Logical: 3}, Node: 4}, {TS: hlc.Timestamp{WallNanos: -5}, Node: 1}} {
		if got, err := ParseVersion(v.String()); err != nil || got != v {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", v.String(), got, err, v)
		}
	}
	if got, err := ParseVersion("0"); err != nil || !got.IsZero() {
		t.Errorf("ParseVersion(\"0\") = %v, %v; want the zero version", got, err)
	}
	for _, s := range []string{"", "x", "12.3", "12@n1", "12.3@n4x", "1.-1@n0", "1.2@n99999999999"} {
		if v, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) = %v; want an error", s, v)
		}
	}
}

// TestHolds: a conditional write's check. The zero version holds for an
// absent or deleted key; any other only for exactly the key's version.
func TestHolds(t *testing.T) {
	v1 := Version{TS: hlc.Timestamp{WallNanos: 1}, Node: 1}
	v2 := Version{TS: hlc.Timestamp{WallNanos: 2}, Node: 1}
	for _, c := range []struct {
		expected, cur    Version
		found, tombstone bool
		want             bool
	}{
		{Version{}, Version{}, false, false, true},
		{Version{}, v1, true, true, true},
		{Version{}, v1, true, false, false},
		{v1, v1, true, false, true},
		{v1, v1, true, true, true},
		{v1, v2, true, false, false},
		{v1, Version{}, false, false, false},
	} {
		if got := c.expected.Holds(c.cur, c.found, c.tombstone); got != c.want {
			t.Errorf("%v.Holds(%v, found=%v, tombstone=%v) = %v; want %v", c.expected, c.cur, c.found, c.tombstone, got, c.want)
		}
	}
}
