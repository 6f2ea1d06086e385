// Package dirgroup is what the directory-based protocols (sc, rc) share
// about running their directory as replicated state machine groups
// (internal/protocol/rsm): where each group's members go (Placement,
// Layout), how a frontend finds a group's leader (Tracker, Trackers), and
// how a directory replica proposes commands and notices it became the
// leader (Proposer); and about running each region's frontend as an rsm
// group over the region's nodes (region.go: Frontends, Regions;
// gateway.go: Gateway, Seen), which sc and rc use (sc's doc.go rules
// F8–F12, D8; rc's F1–F6, D8).
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
// Sharding (directory_shards; seed 002 §5.4, "Directory Placement"): each
// shard's rows — the keys it is the longest matching prefix of — have a
// directory group of their own, an independent rsm group with its own
// name and log, placed in the shard's region the same way; other rows
// have the default group. A row's directory is a function of its key
// alone, the same on every node, so each row is directed by exactly one
// group and the protocols' per-row rules hold per group unchanged. A node
// may be a replica of several groups (rsm messages and timers name their
// group). A frontend tracks each group's leader apart (Trackers).
// dir-placement (internal/bench) measures it.
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
	"maps"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Placement is a directory group's settings: sc and rc embed it inline,
// so its YAML names are theirs.
type Placement struct {
	// DirectoryRegion names the region of the directory's first replica.
	// Default: the world's last region (the dir2 preset puts its
	// directory region last, as in the thesis's Fig. 5.1).
	DirectoryRegion string `yaml:"directory_region"`
	// DirectoryRegions lists the regions the directory's replicas are
	// placed in, round robin: replica i goes to DirectoryRegions[i mod
	// len], on that region's next node not yet a replica, its frontend
	// (first node) last, so a crash takes down one role, not two.
	// Default: [DirectoryRegion].
	DirectoryRegions []string `yaml:"directory_regions"`
	// DirectoryReplicas is how many nodes run the directory as one
	// replicated state machine group (internal/protocol/rsm, Raft); it
	// tolerates the loss of (n−1)/2 of them. 1 is the thesis's single
	// directory. Default: 3, or as many nodes as DirectoryRegions have if
	// fewer.
	DirectoryReplicas int `yaml:"directory_replicas"`
	// DirectoryTick is the directory group's tick (rsm
	// Config.TickInterval): heartbeats every tick. Default 50ms.
	DirectoryTick time.Duration `yaml:"directory_tick"`
	// DirectoryElectionTicks is the directory group's election timeout in
	// ticks (rsm Config.ElectionTicks): a replica that has not heard from
	// a leader for a draw in [E, 2E) ticks campaigns. Default 10.
	DirectoryElectionTicks int `yaml:"directory_election_ticks"`
	// DirectorySnapshotEntries is how many log entries a directory
	// replica applies between two snapshots of its rows (rsm
	// Config.SnapshotEntries): each compacts the group's log, so a
	// restarted replica reads one snapshot and about this many entries.
	// Default 100 (rsm's is 1000): a directory's rows encode small, and
	// every entry a restart reads is one more store read that may fail.
	DirectorySnapshotEntries int `yaml:"directory_snapshot_entries"`
	// DirectoryShards splits the directory by key prefix (the thesis's
	// §5.4: a directory near the datacenters that use its rows gives them
	// priority): each entry's rows (the keys it is the longest matching
	// prefix of) have a directory group of their own, placed in the
	// entry's region; rows that match no entry go to the directory
	// placed by the settings above. Each group has the tick, election
	// timeout and snapshot interval above. Default: none (one directory
	// for every row).
	DirectoryShards []Shard `yaml:"directory_shards"`
}

// EnsureDefaults fills unset fields.
func (p *Placement) EnsureDefaults(w *topo.World) {
	if p.DirectoryRegion == "" && len(w.Regions) > 0 {
		p.DirectoryRegion = w.Regions[len(w.Regions)-1].Name
	}
	if len(p.DirectoryRegions) == 0 && p.DirectoryRegion != "" {
		p.DirectoryRegions = []string{p.DirectoryRegion}
	}
	if p.DirectoryReplicas == 0 {
		p.DirectoryReplicas = min(3, p.nodesIn(w))
	}
	if p.DirectoryElectionTicks == 0 {
		p.DirectoryElectionTicks = 10
	}
	if p.DirectoryTick == 0 {
		p.DirectoryTick = 50 * time.Millisecond
	}
	if p.DirectorySnapshotEntries == 0 {
		p.DirectorySnapshotEntries = 100
	}
	p.DirectoryShards = slices.Clone(p.DirectoryShards) // the caller's settings stay as given
	for i := range p.DirectoryShards {
		p.DirectoryShards[i].ensureDefaults(w)
	}
}

// Validate checks p against world w; errors name the settings.
func (p *Placement) Validate(w *topo.World) error {
	if w.RegionIndex(p.DirectoryRegion) < 0 {
		return fmt.Errorf("directory_region %q is not a region of world %q", p.DirectoryRegion, w.Name)
	}
	for _, name := range p.DirectoryRegions {
		if w.RegionIndex(name) < 0 {
			return fmt.Errorf("directory_regions: %q is not a region of world %q", name, w.Name)
		}
	}
	if p.DirectoryReplicas < 1 || p.DirectoryReplicas > p.nodesIn(w) {
		return fmt.Errorf("directory_replicas = %d; must be in [1, %d] (the nodes of directory_regions %v)",
			p.DirectoryReplicas, p.nodesIn(w), p.DirectoryRegions)
	}
	if p.DirectoryElectionTicks < 2 {
		return fmt.Errorf("directory_election_ticks = %d; must be at least 2", p.DirectoryElectionTicks)
	}
	if p.DirectoryTick <= 0 {
		return fmt.Errorf("directory_tick = %s; must be positive", p.DirectoryTick)
	}
	if p.DirectorySnapshotEntries < 1 {
		return fmt.Errorf("directory_snapshot_entries = %d; must be at least 1", p.DirectorySnapshotEntries)
	}
	return validateShards(p.DirectoryShards, w)
}

// nodesIn is how many nodes the directory regions have (each counted once).
func (p *Placement) nodesIn(w *topo.World) int {
	var seen []string
	for _, name := range p.DirectoryRegions {
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
	for i := range p.DirectoryReplicas {
		// Round robin over the regions, skipping a region that is full
		// (Validate checked there are enough nodes overall).
		for j := 0; ; j++ {
			r := t.World.RegionIndex(p.DirectoryRegions[(i+j)%len(p.DirectoryRegions)])
			if ids := t.ByRegion[r]; used[r] < len(ids) {
				// Nodes 1, 2, ..., then the frontend, node 0.
				members = append(members, ids[(used[r]+1)%len(ids)])
				used[r]++
				break
			}
		}
	}
	cfg := rsm.Config{Group: group, Members: members, TickInterval: p.DirectoryTick, ElectionTicks: p.DirectoryElectionTicks,
		SnapshotEntries: p.DirectorySnapshotEntries}
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
	return time.Duration(float64(2*p.DirectoryElectionTicks+1)*float64(p.DirectoryTick)/(1-rho)) + 1
}

// Tracker is a frontend's guess of the directory group's leader.
type Tracker struct {
	members []wire.NodeID
	i       int
	heardAt int64 // when a leader was last heard from (HeardAt), or the target moved
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

// HeardAt is Heard, noting when (Trackers.NextIfSilent).
func (t *Tracker) HeardAt(n wire.NodeID, now int64) {
	t.Heard(n)
	t.heardAt = now
}

// Next gives up on the current target (a request went unanswered: it may
// be down or cut off) and moves to the next replica.
func (t *Tracker) Next() { t.i = (t.i + 1) % len(t.members) }

// Unanswered gives up on n, to which a request went unanswered: the
// tracker moves past n if n is still its target. If it heard from a
// leader since (Heard), it keeps that one: moving past it would send the
// next request to the replica after the leader, again and again while the
// leader keeps being heard between a request and its timeout.
func (t *Tracker) Unanswered(n wire.NodeID) {
	if t.Target() == n {
		t.Next()
	}
}

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

// EncodeRows is a directory's snapshot (rsm.StateMachine.Snapshot): its
// rows in key order, each encoded by enc after its key.
func EncodeRows[R any](rows map[string]R, enc func(b []byte, r R) []byte) []byte {
	b := wire.AppendUvarint(nil, uint64(len(rows)))
	for _, key := range slices.Sorted(maps.Keys(rows)) {
		b = enc(wire.AppendString(b, key), rows[key])
	}
	return b
}

// DecodeRows decodes what EncodeRows encoded, each row by dec (which reads
// from d and leaves errors in it). An error says data does not decode.
func DecodeRows[R any](data []byte, dec func(d *wire.Decoder) R) (map[string]R, error) {
	d := wire.NewDecoder(data)
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(wire.ErrTruncated)
	}
	rows := make(map[string]R)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		key := d.String()
		rows[key] = dec(d)
	}
	if d.Err() == nil && d.Len() != 0 {
		d.Fail(fmt.Errorf("%d bytes left over", d.Len()))
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("snapshot of %d bytes: %w", len(data), d.Err())
	}
	return rows, nil
}

// SeenBy remembers requests a frontend took, by a caller-chosen key (rc:
// the forwarding gateway, the client and the request's ID; Seen: the
// gateway and the Fwd's ID), so a duplicated forward is not applied
// twice. It is in memory only: a copy arriving after a restart is not
// recognised (the simulator delivers duplicates within a network delay,
// shorter than any restart).
type SeenBy[K comparable] struct {
	at map[K]int64
	// byAt holds at's entries as a min-heap by time, so forgetting the
	// old ones takes the oldest off the top instead of scanning every
	// entry on every First once seenMax are kept (a frontend under load
	// keeps more than seenMax within the horizon).
	byAt []seenEntry[K]
}

type seenEntry[K comparable] struct {
	k  K
	at int64
}

// seenMax is how many entries SeenBy keeps before it forgets old ones.
const seenMax = 4096

// First records k at now and says whether it is new. Past seenMax entries
// it forgets those older than now − horizon, so horizon must exceed how
// late a duplicate can arrive.
func (s *SeenBy[K]) First(k K, now, horizon int64) bool {
	if _, dup := s.at[k]; dup {
		return false
	}
	if s.at == nil {
		s.at = make(map[K]int64)
	}
	if len(s.at) >= seenMax {
		for len(s.byAt) > 0 && s.byAt[0].at < now-horizon {
			delete(s.at, s.byAt[0].k)
			s.popOldest()
		}
	}
	s.at[k] = now
	s.pushEntry(seenEntry[K]{k, now})
	return true
}

// pushEntry adds e to the heap byAt.
func (s *SeenBy[K]) pushEntry(e seenEntry[K]) {
	s.byAt = append(s.byAt, e)
	h := s.byAt
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// popOldest removes the heap byAt's top.
func (s *SeenBy[K]) popOldest() {
	h := s.byAt
	last := len(h) - 1
	h[0] = h[last]
	h[last] = seenEntry[K]{}
	h = h[:last]
	for i := 0; ; {
		m, l := i, 2*i+1
		if l < len(h) && h[l].at < h[m].at {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].at < h[m].at {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	s.byAt = h
}

// DecodeCommand splits a frontend's replicated command (a kind byte, then
// the row's key, then the kind's fields) for Apply: it returns the kind,
// the key and a decoder positioned at the fields. An empty or undecodable
// command breaks an invariant (every member applies only what a member
// encoded), named with the protocol and log index; ok is then false.
func DecodeCommand(e env.Env, protocol string, index uint64, cmd []byte) (kind byte, key string, d *wire.Decoder, ok bool) {
	if len(cmd) == 0 {
		env.Invariant(e, false, "%s: frontend command %d is empty", protocol, index)
		return 0, "", nil, false
	}
	d = wire.NewDecoder(cmd[1:])
	key = d.String()
	if d.Err() != nil {
		env.Invariant(e, false, "%s: frontend command %d undecodable: %v", protocol, index, d.Err())
		return 0, "", nil, false
	}
	return cmd[0], key, d, true
}
