package dirgroup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// dir2 is the dir2 preset with three nodes per region: dc1 is nodes 0–2,
// dc2 3–5, dir 6–8 (node 0 of each region is its frontend).
func dir2(t *testing.T) *topo.Topology {
	t.Helper()
	w, err := topo.Preset("dir2")
	if err != nil {
		t.Fatal(err)
	}
	w.NodesPerRegion = 3
	return topo.NewTopology(w)
}

func layout(t *testing.T, tp *topo.Topology, p Placement) (*Layout, error) {
	t.Helper()
	p.EnsureDefaults(tp.World)
	if err := p.Validate(tp.World); err != nil {
		return nil, err
	}
	return p.Layout(tp, "x.dir")
}

func TestLayoutPlacesShardsInTheirRegions(t *testing.T) {
	tp := dir2(t)
	p := Placement{DirectoryShards: []Shard{
		{Prefix: "dc1/", Region: "dc1"},
		{Prefix: "dc2/", Region: "dc2", Replicas: 1},
		{Prefix: "dc1/hot/", Region: "dir", Replicas: 2},
	}}
	l, err := layout(t, tp, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		prefix, group string
		members       []wire.NodeID
	}{
		{"", "x.dir", []wire.NodeID{7, 8, 6}}, // the default: dir2's last region
		{"dc1/", "x.dir.dc1%2F", []wire.NodeID{1, 2, 0}},
		{"dc2/", "x.dir.dc2%2F", []wire.NodeID{4}},
		{"dc1/hot/", "x.dir.dc1%2Fhot%2F", []wire.NodeID{7, 8}}, // nodes 7, 8 are in two groups
	}
	if len(l.Dirs) != len(want) {
		t.Fatalf("Layout has %d groups; want %d", len(l.Dirs), len(want))
	}
	for i, w := range want {
		d := l.Dirs[i]
		if d.Prefix != w.prefix || d.Group.Group != w.group || !slices.Equal(d.Members, w.members) || !slices.Equal(d.Group.Members, w.members) {
			t.Errorf("Dirs[%d] = %q %s %v; want %q %s %v", i, d.Prefix, d.Group.Group, d.Members, w.prefix, w.group, w.members)
		}
		if d.Group.TickInterval != 50*time.Millisecond || d.Group.ElectionTicks != 10 || d.Group.SnapshotEntries != 100 {
			t.Errorf("Dirs[%d] tick %s × %d, a snapshot every %d entries; want directory_tick, directory_election_ticks and directory_snapshot_entries (50ms × 10, 100)",
				i, d.Group.TickInterval, d.Group.ElectionTicks, d.Group.SnapshotEntries)
		}
	}
	// No group's store prefix is a prefix of another's.
	for i, a := range l.Dirs {
		for j, b := range l.Dirs {
			if i != j && strings.HasPrefix(b.Group.StorePrefix, a.Group.StorePrefix) {
				t.Errorf("store prefix %q of %s prefixes %q of %s", a.Group.StorePrefix, a.Group.Group, b.Group.StorePrefix, b.Group.Group)
			}
		}
	}
	for key, want := range map[string]int{
		"user1": 0, "dc1": 0, "dc1/": 1, "dc1/user1": 1, "dc1/hot/user1": 3, "dc1/hot": 1,
		"dc2/user1": 2, "dc3/user1": 0, "": 0,
	} {
		if got := l.Index(key); got != want {
			t.Errorf("Index(%q) = %d; want %d (longest matching prefix)", key, got, want)
		}
	}
	for n, want := range map[wire.NodeID]bool{0: true, 3: false, 4: true, 5: false, 6: true} {
		if got := l.Member(n); got != want {
			t.Errorf("Member(%d) = %v; want %v", n, got, want)
		}
	}
}

func TestLayoutWithoutShardsIsPlace(t *testing.T) {
	tp := dir2(t)
	p := Placement{DirectoryRegions: []string{"dir", "dc1"}, DirectoryReplicas: 3}
	l, err := layout(t, tp, p)
	if err != nil {
		t.Fatal(err)
	}
	members, cfg, err := p.Place(tp, "x.dir")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Dirs) != 1 || !slices.Equal(l.Dirs[0].Members, members) || l.Dirs[0].Group.Group != cfg.Group {
		t.Fatalf("Layout = %+v; want one group %v (Place)", l.Dirs, members)
	}
	if got := l.Index("dc1/user1"); got != 0 {
		t.Errorf("Index = %d; want 0", got)
	}
}

func TestValidateShards(t *testing.T) {
	tp := dir2(t)
	for _, tc := range []struct {
		shards []Shard
		want   string // "" for valid
	}{
		{[]Shard{{Prefix: "a/", Region: "dc1"}, {Prefix: "a/b/", Region: "dc2"}}, ""}, // nested: longest wins
		{[]Shard{{Prefix: "", Region: "dc1"}}, "directory_shards[0]: prefix is empty"},
		{[]Shard{{Prefix: "a/", Region: "mars"}}, `directory_shards[0] (prefix "a/"): region "mars" is not a region of world "dir2"`},
		{[]Shard{{Prefix: "a/", Region: "dc1", Replicas: 4}}, `directory_shards[0] (prefix "a/"): replicas = 4; must be in [1, 3]`},
		{[]Shard{{Prefix: "a/", Region: "dc1", Replicas: -1}}, `replicas = -1`},
		{[]Shard{{Prefix: "a/", Region: "dc1"}, {Prefix: "b/", Region: "dc2"}, {Prefix: "a/", Region: "dc2"}},
			`directory_shards[2]: prefix "a/" is also directory_shards[0]'s`},
	} {
		_, err := layout(t, tp, Placement{DirectoryShards: tc.shards})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v; want valid", tc.shards, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v; want one containing %q", tc.shards, err, tc.want)
		}
	}
}

func TestEnsureDefaultsLeavesTheCallersShards(t *testing.T) {
	tp := dir2(t)
	shards := []Shard{{Prefix: "a/", Region: "dc1"}}
	p := Placement{DirectoryShards: shards}
	p.EnsureDefaults(tp.World)
	if shards[0].Replicas != 0 || p.DirectoryShards[0].Replicas != 3 {
		t.Errorf("replicas: caller's %d (want 0, untouched), filled %d (want 3)", shards[0].Replicas, p.DirectoryShards[0].Replicas)
	}
}

func TestTrackersFollowEachGroupApart(t *testing.T) {
	tp := dir2(t)
	l, err := layout(t, tp, Placement{DirectoryShards: []Shard{{Prefix: "dc1/", Region: "dc1"}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTrackers(l)
	tr.Start(0)
	if got := tr.For("dc1/k").Target(); got != 1 {
		t.Fatalf("For(dc1/k).Target() = %d; want 1 (the shard's replica 0)", got)
	}
	tr.For("dc1/k").HeardAt(2, 5)
	tr.For("k").HeardAt(6, 5)
	if got := tr.For("dc1/x").Target(); got != 2 {
		t.Errorf("after Heard(2): Target = %d; want 2", got)
	}
	// Only the silent group with outstanding keys moves on.
	tr.For("dc1/k").HeardAt(2, 100)
	tr.NextIfSilent(120, 50, []string{"dc1/k", "k"})
	if got := tr.For("k").Target(); got != 7 {
		t.Errorf("default group after silence: Target = %d; want 7 (next after 6)", got)
	}
	if got := tr.For("dc1/k").Target(); got != 2 {
		t.Errorf("shard heard at 100: Target = %d; want 2 (unchanged)", got)
	}
	tr.NextIfSilent(1000, 50, []string{"k"})
	if got := tr.For("dc1/k").Target(); got != 2 {
		t.Errorf("shard with no outstanding keys moved to %d; want 2", got)
	}
}
