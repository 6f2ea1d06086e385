package dirgroup

import (
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Roles is who plays which role in a directory keyspace (sc, rc): each
// region's frontend group and the directory's groups. Both protocols'
// Keyspace embed it.
type Roles struct {
	Topo *topo.Topology
	// FrontendIDs[r] is region r's canonical frontend ID (its first node):
	// the directory's name for the region's frontend group FEGroups[r].
	FrontendIDs []wire.NodeID
	FEGroups    []rsm.Config
	// Layout is the directory's groups: the default one (index 0) and one
	// per directory_shards entry, each a row's directory by key.
	Layout *Layout
}

// PlaceRoles places protocol proto's roles in t: a frontend group per
// region (fe's settings) and the directory's groups (p's), named
// proto + ".dir". Errors are prefixed with proto.
func PlaceRoles(t *topo.Topology, fe *Frontends, p *Placement, proto string) (Roles, error) {
	rs := Roles{Topo: t}
	for r, ids := range t.ByRegion {
		if len(ids) == 0 {
			return Roles{}, fmt.Errorf("%s: region %s has no node", proto, t.World.Regions[r].Name)
		}
		rs.FrontendIDs = append(rs.FrontendIDs, ids[0])
		g, err := fe.Group(t, r, proto)
		if err != nil {
			return Roles{}, fmt.Errorf("%s: %w", proto, err)
		}
		rs.FEGroups = append(rs.FEGroups, g)
	}
	var err error
	if rs.Layout, err = p.Layout(t, proto+".dir"); err != nil {
		return Roles{}, fmt.Errorf("%s: %w", proto, err)
	}
	return rs, nil
}

// Frontend is the canonical frontend ID of node n's region (its first
// node), by which the directory knows the region's frontend group.
func (rs *Roles) Frontend(n wire.NodeID) wire.NodeID { return rs.FrontendIDs[rs.Topo.RegionOf(n)] }

// RegionNodes are the members of the frontend group named fe, fe first.
func (rs *Roles) RegionNodes(fe wire.NodeID) []wire.NodeID {
	return rs.Topo.ByRegion[rs.Topo.RegionOf(fe)]
}

// Directories are the nodes of the default directory's replicated group
// (the rows of no directory_shards entry).
func (rs *Roles) Directories() []wire.NodeID { return slices.Clone(rs.Layout.Dirs[0].Members) }

// DirectoryOf are the nodes of key's directory group (its shard's, or the
// default one's).
func (rs *Roles) DirectoryOf(key string) []wire.NodeID {
	return slices.Clone(rs.Layout.For(key).Members)
}
