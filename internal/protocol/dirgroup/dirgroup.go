// Package dirgroup is what the directory-based protocols (sc, rc) share
// about running their directory as a replicated state machine group
// (internal/protocol/rsm): where the group's members go (Placement), how a
// frontend finds the leader (Tracker), and how a directory replica proposes
// commands and notices it became the leader (Proposer).
//
// # Algorithm
//
// Placement puts replica i in Regions[i mod len], on that region's next
// node not yet a replica, its frontend (first node) last, so a crash takes
// down one role, not two. A frontend sends to the replica it last heard a
// leader's message from and moves to the next replica when a request goes
// unanswered (a follower forwards proposals to its leader, rsm rule 4). A
// replica that becomes the leader resumes what the former leader was
// driving (each protocol says what: sc rule D7, rc rule R4).
//
// # Guarantee
//
// None of its own: safety is the protocol's and rsm's. The tracker only
// affects liveness: a frontend reaches the leader within len(Members)
// request timeouts once one is elected.
//
// # Clock assumption
//
// None.
//
// # Seed
//
// Seed 002 §A.3 ("State machine replication can be used"), as rsm.
package dirgroup

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Placement is a directory group's settings, as the protocols' Config
// fields directory_region, directory_regions, directory_replicas,
// directory_tick and directory_election_ticks state them.
type Placement struct {
	// Region is the region of the first replica. Default: the world's
	// last region.
	Region string
	// Regions are the regions replicas are placed in, round robin.
	// Default: [Region].
	Regions []string
	// Replicas is the group's size. Default: 3, or the nodes of Regions if
	// fewer.
	Replicas int
	// Tick is the group's tick (rsm Config.TickInterval). Default 50ms.
	Tick time.Duration
	// ElectionTicks is the election timeout in ticks (rsm
	// Config.ElectionTicks). Default 10.
	ElectionTicks int
}

// EnsureDefaults fills unset fields.
func (p *Placement) EnsureDefaults(w *topo.World) {
	if p.Region == "" && len(w.Regions) > 0 {
		p.Region = w.Regions[len(w.Regions)-1].Name
	}
	if len(p.Regions) == 0 && p.Region != "" {
		p.Regions = []string{p.Region}
	}
	if p.Replicas == 0 {
		p.Replicas = min(3, p.nodesIn(w))
	}
	if p.ElectionTicks == 0 {
		p.ElectionTicks = 10
	}
	if p.Tick == 0 {
		p.Tick = 50 * time.Millisecond
	}
}

// Validate checks p against world w; errors name the settings.
func (p *Placement) Validate(w *topo.World) error {
	if w.RegionIndex(p.Region) < 0 {
		return fmt.Errorf("directory_region %q is not a region of world %q", p.Region, w.Name)
	}
	for _, name := range p.Regions {
		if w.RegionIndex(name) < 0 {
			return fmt.Errorf("directory_regions: %q is not a region of world %q", name, w.Name)
		}
	}
	if p.Replicas < 1 || p.Replicas > p.nodesIn(w) {
		return fmt.Errorf("directory_replicas = %d; must be in [1, %d] (the nodes of directory_regions %v)",
			p.Replicas, p.nodesIn(w), p.Regions)
	}
	if p.ElectionTicks < 2 {
		return fmt.Errorf("directory_election_ticks = %d; must be at least 2", p.ElectionTicks)
	}
	if p.Tick <= 0 {
		return fmt.Errorf("directory_tick = %s; must be positive", p.Tick)
	}
	return nil
}

// nodesIn is how many nodes the directory regions have (each counted once).
func (p *Placement) nodesIn(w *topo.World) int {
	var seen []string
	for _, name := range p.Regions {
		if !slices.Contains(seen, name) && w.RegionIndex(name) >= 0 {
			seen = append(seen, name)
		}
	}
	return len(seen) * w.NodesPerRegion
}

// Place picks the group's members in topology t (p validated) and returns
// them, replica 0 first, with the group's rsm configuration.
func (p *Placement) Place(t *topo.Topology, group string) ([]wire.NodeID, rsm.Config, error) {
	var members []wire.NodeID
	used := map[int]int{} // region → nodes taken
	for i := range p.Replicas {
		// Round robin over the regions, skipping a region that is full
		// (Validate checked there are enough nodes overall).
		for j := 0; ; j++ {
			r := t.World.RegionIndex(p.Regions[(i+j)%len(p.Regions)])
			if ids := t.ByRegion[r]; used[r] < len(ids) {
				// Nodes 1, 2, ..., then the frontend, node 0.
				members = append(members, ids[(used[r]+1)%len(ids)])
				used[r]++
				break
			}
		}
	}
	cfg := rsm.Config{Group: group, Members: members, TickInterval: p.Tick, ElectionTicks: p.ElectionTicks}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, rsm.Config{}, fmt.Errorf("directory group: %w", err)
	}
	return members, cfg, nil
}

// MaxStepDown bounds, in real time, how long a leader cut off from a
// majority goes on acting as the leader after a new one is elected: rsm
// steps it down once it has not heard from a majority for ElectionTicks,
// checked every ElectionTicks (rsm rule 5), so within 2·E+1 ticks of its
// own clock, stretched by the rate bound rho.
func (p *Placement) MaxStepDown(rho float64) time.Duration {
	return time.Duration(float64(2*p.ElectionTicks+1)*float64(p.Tick)/(1-rho)) + 1
}

// Tracker is a frontend's guess of the directory group's leader.
type Tracker struct {
	members []wire.NodeID
	i       int
}

// NewTracker starts at replica 0.
func NewTracker(members []wire.NodeID) Tracker { return Tracker{members: members} }

// Target is the replica to send requests to.
func (t *Tracker) Target() wire.NodeID { return t.members[t.i] }

// Heard notes that replica n acted as the leader (it granted or answered
// as only the leader does).
func (t *Tracker) Heard(n wire.NodeID) {
	if i := slices.Index(t.members, n); i >= 0 {
		t.i = i
	}
}

// Next gives up on the current target (a request went unanswered: it may
// be down or cut off) and moves to the next replica.
func (t *Tracker) Next() { t.i = (t.i + 1) % len(t.members) }

// Proposer is a directory replica's side of its group: it queues commands
// produced while the group is running (Apply must not re-enter the group)
// and proposes them once the group call returns, and notices this replica
// becoming the leader.
type Proposer struct {
	G      *rsm.Group
	leader bool
	outbox [][]byte
}

// Queue adds cmd to propose at the next Settle.
func (p *Proposer) Queue(cmd []byte) { p.outbox = append(p.outbox, cmd) }

// Settle runs after every input the group took: it calls resume if this
// replica became the leader since the last call, and proposes what was
// queued. A proposal with no leader known is lost: the protocol's resends
// and timers make it again.
func (p *Proposer) Settle(e env.Env, resume func(env.Env)) {
	p.checkLeader(e, resume)
	for len(p.outbox) > 0 {
		cmd := p.outbox[0]
		p.outbox = p.outbox[1:]
		_ = p.G.Propose(e, cmd, 0)
		p.checkLeader(e, resume)
	}
}

func (p *Proposer) checkLeader(e env.Env, resume func(env.Env)) {
	was := p.leader
	p.leader = p.G.IsLeader()
	if p.leader && !was {
		resume(e)
	}
}
