package dirgroup

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Shard is one directory_shards entry: the rows whose key it is the
// longest matching prefix of get a directory group of their own, in one
// region (seed 002 §5.4, "Directory Placement": a directory closer to the
// datacenters that use its rows gives them priority; a shard per region
// gives each region's rows that priority at once).
type Shard struct {
	// Prefix selects the shard's rows: every key that starts with it and
	// with no longer prefix of another shard. Required, unique.
	Prefix string `yaml:"prefix"`
	// Region is where the shard's directory replicas go: its nodes
	// 1, 2, ..., then its frontend (node 0) last, as directory_regions
	// does. Required.
	Region string `yaml:"region"`
	// Replicas is the shard's directory group size. Default: 3, or the
	// region's nodes if fewer.
	Replicas int `yaml:"replicas"`
}

func (s *Shard) ensureDefaults(w *topo.World) {
	if s.Replicas == 0 {
		s.Replicas = min(3, w.NodesPerRegion)
	}
}

// validateShards checks directory_shards against world w.
func validateShards(shards []Shard, w *topo.World) error {
	for i, s := range shards {
		switch {
		case s.Prefix == "":
			return fmt.Errorf("directory_shards[%d]: prefix is empty (rows that match no shard go to the directory of directory_region)", i)
		case w.RegionIndex(s.Region) < 0:
			return fmt.Errorf("directory_shards[%d] (prefix %q): region %q is not a region of world %q", i, s.Prefix, s.Region, w.Name)
		case s.Replicas < 1 || s.Replicas > w.NodesPerRegion:
			return fmt.Errorf("directory_shards[%d] (prefix %q): replicas = %d; must be in [1, %d] (the nodes of region %s)",
				i, s.Prefix, s.Replicas, w.NodesPerRegion, s.Region)
		}
		if j := slices.IndexFunc(shards[:i], func(o Shard) bool { return o.Prefix == s.Prefix }); j >= 0 {
			return fmt.Errorf("directory_shards[%d]: prefix %q is also directory_shards[%d]'s (each row needs one directory)", i, s.Prefix, j)
		}
	}
	return nil
}

// Directory is one placed directory group: the default directory
// (Prefix "") or a shard's.
type Directory struct {
	Prefix  string
	Members []wire.NodeID // replica 0 first
	Group   rsm.Config
}

// Layout is a keyspace's placed directory groups: the default directory
// first (index 0), then one per directory_shards entry, in its order.
// Every node builds the same Layout from the same settings.
type Layout struct {
	Dirs []Directory
	// byLength lists the shards' indices in Dirs, longest prefix first,
	// so the first match is the longest (prefixes are unique).
	byLength []int
}

// Layout places the default directory (group name) and every shard's
// (group name + "." + the path-escaped prefix: a name with no "/", so no
// group's store prefix "rsm/<group>/" is a prefix of another's) in
// topology t; p must be validated.
func (p *Placement) Layout(t *topo.Topology, name string) (*Layout, error) {
	members, cfg, err := p.Place(t, name)
	if err != nil {
		return nil, err
	}
	l := &Layout{Dirs: []Directory{{Members: members, Group: cfg}}}
	for i, s := range p.DirectoryShards {
		sp := Placement{DirectoryRegion: s.Region, DirectoryRegions: []string{s.Region}, DirectoryReplicas: s.Replicas,
			DirectoryTick: p.DirectoryTick, DirectoryElectionTicks: p.DirectoryElectionTicks,
			DirectorySnapshotEntries: p.DirectorySnapshotEntries}
		members, cfg, err := sp.Place(t, name+"."+url.PathEscape(s.Prefix))
		if err != nil {
			return nil, fmt.Errorf("directory_shards[%d] (prefix %q): %w", i, s.Prefix, err)
		}
		l.Dirs = append(l.Dirs, Directory{Prefix: s.Prefix, Members: members, Group: cfg})
		l.byLength = append(l.byLength, i+1)
	}
	slices.SortStableFunc(l.byLength, func(a, b int) int { return len(l.Dirs[b].Prefix) - len(l.Dirs[a].Prefix) })
	return l, nil
}

// Index is the index in Dirs of key's directory: the shard with the
// longest prefix of key, else the default directory (0).
func (l *Layout) Index(key string) int {
	for _, i := range l.byLength {
		if strings.HasPrefix(key, l.Dirs[i].Prefix) {
			return i
		}
	}
	return 0
}

// For is key's directory.
func (l *Layout) For(key string) *Directory { return &l.Dirs[l.Index(key)] }

// Member says node n is a replica of any directory group.
func (l *Layout) Member(n wire.NodeID) bool {
	return slices.ContainsFunc(l.Dirs, func(d Directory) bool { return slices.Contains(d.Members, n) })
}

// Trackers is a frontend's Tracker of each directory group, picked by key
// (a group's leader is tracked apart from the others': one may fail over
// while the rest answer).
type Trackers struct {
	l  *Layout
	ts []Tracker
}

// NewTrackers starts every group's tracker at its replica 0.
func NewTrackers(l *Layout) Trackers {
	t := Trackers{l: l}
	for _, d := range l.Dirs {
		t.ts = append(t.ts, NewTracker(d.Members))
	}
	return t
}

// Len is the number of directory groups.
func (t *Trackers) Len() int { return len(t.ts) }

// Index is key's group (Layout.Index).
func (t *Trackers) Index(key string) int { return t.l.Index(key) }

// At is group i's tracker.
func (t *Trackers) At(i int) *Tracker { return &t.ts[i] }

// For is the tracker of key's group.
func (t *Trackers) For(key string) *Tracker { return &t.ts[t.l.Index(key)] }

// Start notes now as when every group was last heard from.
func (t *Trackers) Start(now int64) {
	for i := range t.ts {
		t.ts[i].heardAt = now
	}
}

// NextIfSilent moves the tracker of every group that one of keys belongs
// to and that has not been heard from (HeardAt) for after (nanoseconds)
// to its next replica: the one asked may be down, cut off or no longer
// the leader (dirrc rule R5).
func (t *Trackers) NextIfSilent(now, after int64, keys []string) {
	seen := make([]bool, len(t.ts))
	for _, k := range keys {
		seen[t.l.Index(k)] = true
	}
	for i := range t.ts {
		if tr := &t.ts[i]; seen[i] && now-tr.heardAt >= after {
			tr.Next()
			tr.heardAt = now
		}
	}
}

// DescribeShards is the shards for a keyspace's one-line description:
// " shards=[dc1/@dc1×3 dc2/@dc2×3]", or "" without any.
func (p *Placement) DescribeShards() string {
	if len(p.DirectoryShards) == 0 {
		return ""
	}
	var parts []string
	for _, s := range p.DirectoryShards {
		parts = append(parts, fmt.Sprintf("%s@%s×%d", s.Prefix, s.Region, s.Replicas))
	}
	return " shards=[" + strings.Join(parts, " ") + "]"
}
