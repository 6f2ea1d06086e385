package dirgroup

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// A region's frontend is a replicated state machine over the region's
// nodes (the thesis's per-DC Storage at QUORUM, seed 002 A.2): one rsm
// group per region, its leader acting as the frontend. This file holds
// what the directory protocols share about those groups: their settings
// and configuration (Frontends), how the directory addresses a region
// rather than a node (Regions), and, in gateway.go, how every node hands
// its clients' requests to its region's leader (Gateway).

// Frontends is the settings of the region frontend groups: sc and rc
// embed it inline, so its YAML names are theirs.
type Frontends struct {
	// FrontendTick is each region frontend group's tick (rsm
	// Config.TickInterval): its leader heartbeats every tick. Default 20ms
	// (the group's members share a region: round trips are short).
	FrontendTick time.Duration `yaml:"frontend_tick"`
	// FrontendElectionTicks is a region frontend group's election timeout
	// in ticks (rsm Config.ElectionTicks): a member that has not heard
	// from a leader for a draw in [E, 2E) ticks campaigns. Default 10.
	FrontendElectionTicks int `yaml:"frontend_election_ticks"`
	// FrontendSnapshotEntries is how many log entries a frontend member
	// applies between two snapshots of its rows (rsm
	// Config.SnapshotEntries): each compacts the group's log. Default 1000
	// (rsm's): a frontend's snapshot holds every row's data.
	FrontendSnapshotEntries int `yaml:"frontend_snapshot_entries"`
}

// EnsureDefaults fills unset fields.
func (f *Frontends) EnsureDefaults() {
	if f.FrontendTick == 0 {
		f.FrontendTick = 20 * time.Millisecond
	}
	if f.FrontendElectionTicks == 0 {
		f.FrontendElectionTicks = 10
	}
	if f.FrontendSnapshotEntries == 0 {
		f.FrontendSnapshotEntries = 1000
	}
}

// Validate checks f; errors name the settings.
func (f *Frontends) Validate() error {
	if f.FrontendTick <= 0 {
		return fmt.Errorf("frontend_tick = %s; must be positive", f.FrontendTick)
	}
	if f.FrontendElectionTicks < 2 {
		return fmt.Errorf("frontend_election_ticks = %d; must be at least 2", f.FrontendElectionTicks)
	}
	if f.FrontendSnapshotEntries < 1 {
		return fmt.Errorf("frontend_snapshot_entries = %d; must be at least 1", f.FrontendSnapshotEntries)
	}
	return nil
}

// Group is region r's frontend group in topology t: every node of the
// region a member, named proto + ".fe/" + the region's name, storing under
// its own prefix.
func (f *Frontends) Group(t *topo.Topology, r int, proto string) (rsm.Config, error) {
	name := proto + ".fe/" + t.World.Regions[r].Name
	cfg := rsm.Config{Group: name, Members: slices.Clone(t.ByRegion[r]), TickInterval: f.FrontendTick,
		ElectionTicks: f.FrontendElectionTicks, SnapshotEntries: f.FrontendSnapshotEntries, StorePrefix: "rsm/" + name + "/"}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return rsm.Config{}, fmt.Errorf("frontend group of region %s: %w", t.World.Regions[r].Name, err)
	}
	return cfg, nil
}

// MaxStepDown bounds, in real time, how long a frontend leader cut off
// from its region's majority goes on acting after a new one is elected
// (rsm rule 5; see Placement.MaxStepDown).
func (f *Frontends) MaxStepDown(rho float64) time.Duration {
	return time.Duration(float64(2*f.FrontendElectionTicks+1)*float64(f.FrontendTick)/(1-rho)) + 1
}

// Regions is how a directory replica addresses a region's frontend. The
// directory names a frontend by its region's first node (its canonical
// ID, the same on every replica); a message for it goes to the member of
// that region the directory last heard from, and to the region's next
// member when one went unanswered. A follower that receives it forwards
// the work to its leader (an rsm proposal) and answers itself.
type Regions struct {
	t   *topo.Topology
	cur []int // cur[r]: index in t.ByRegion[r] of region r's target
}

// NewRegions starts every region at its first node.
func NewRegions(t *topo.Topology) Regions {
	return Regions{t: t, cur: make([]int, len(t.ByRegion))}
}

// Canonical is the ID the directory knows node n's region's frontend by.
func (rs *Regions) Canonical(n wire.NodeID) wire.NodeID { return rs.t.ByRegion[rs.t.RegionOf(n)][0] }

// Heard notes that node n answered for its region.
func (rs *Regions) Heard(n wire.NodeID) {
	r := rs.t.RegionOf(n)
	if i := slices.Index(rs.t.ByRegion[r], n); i >= 0 {
		rs.cur[r] = i
	}
}

// Target is the node to send to for the frontend named fe.
func (rs *Regions) Target(fe wire.NodeID) wire.NodeID {
	r := rs.t.RegionOf(fe)
	return rs.t.ByRegion[r][rs.cur[r]]
}

// Next gives up on fe's region's current target (unanswered) and moves to
// the region's next member.
func (rs *Regions) Next(fe wire.NodeID) {
	r := rs.t.RegionOf(fe)
	rs.cur[r] = (rs.cur[r] + 1) % len(rs.t.ByRegion[r])
}

// Members are the nodes of fe's region, fe's region's first node first.
func (rs *Regions) Members(fe wire.NodeID) []wire.NodeID {
	return rs.t.ByRegion[rs.t.RegionOf(fe)]
}
