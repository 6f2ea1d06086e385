package scenario

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// resolvedFault is a Fault with names turned into node IDs.
type resolvedFault struct {
	f      Fault
	crash  []wire.NodeID
	groups [][]wire.NodeID
	skew   wire.NodeID
	outage int // region index
}

// nodesNamed resolves a node name or a region name.
func nodesNamed(t *topo.Topology, name string) ([]wire.NodeID, error) {
	for _, n := range t.Nodes {
		if n.Name == name {
			return []wire.NodeID{n.ID}, nil
		}
	}
	if r := t.World.RegionIndex(name); r >= 0 {
		return slices.Clone(t.ByRegion[r]), nil
	}
	var names []string
	for _, r := range t.World.Regions {
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("unknown node or region %q (regions: %s; nodes are <region>-<i>, i < %d)",
		name, strings.Join(names, ", "), t.World.NodesPerRegion)
}

func resolveFault(f Fault, t *topo.Topology) (resolvedFault, error) {
	rf := resolvedFault{f: f}
	kinds := 0
	if f.At < 0 || f.For < 0 {
		return rf, fmt.Errorf("at: %s, for: %s; must not be negative", f.At, f.For)
	}
	if f.Crash != "" {
		kinds++
		ids, err := nodesNamed(t, f.Crash)
		if err != nil {
			return rf, fmt.Errorf("crash: %w", err)
		}
		rf.crash = ids
	}
	if f.Partition != nil {
		kinds++
		if len(f.Partition) < 2 {
			return rf, fmt.Errorf("partition: needs at least two groups, got %d", len(f.Partition))
		}
		for gi, g := range f.Partition {
			var ids []wire.NodeID
			for _, name := range g {
				n, err := nodesNamed(t, name)
				if err != nil {
					return rf, fmt.Errorf("partition[%d]: %w", gi, err)
				}
				ids = append(ids, n...)
			}
			rf.groups = append(rf.groups, ids)
		}
	}
	if f.Net != nil {
		kinds++
		for _, p := range []float64{f.Net.Loss, f.Net.Duplicate, f.Net.Reorder} {
			if !(p >= 0 && p <= 1) {
				return rf, fmt.Errorf("net: probability %g outside [0, 1]", p)
			}
		}
	}
	if f.Skew != nil {
		kinds++
		ids, err := nodesNamed(t, f.Skew.Node)
		if err != nil || len(ids) != 1 {
			if err == nil {
				err = fmt.Errorf("%q is a region; skew takes one node", f.Skew.Node)
			}
			return rf, fmt.Errorf("skew.node: %w", err)
		}
		rf.skew = ids[0]
	}
	if f.Outage != "" {
		kinds++
		rf.outage = t.World.RegionIndex(f.Outage)
		if rf.outage < 0 {
			return rf, fmt.Errorf("outage: %q is not a region", f.Outage)
		}
	}
	if kinds != 1 {
		return rf, fmt.Errorf("a fault needs exactly one of crash, partition, net, skew, outage; got %d", kinds)
	}
	return rf, nil
}

// schedule installs the fault on s. Undoing restores what was in force
// when the fault began, so overlapping faults unwind in any order.
func (rf resolvedFault) schedule(s *sim.Sim) {
	f := rf.f
	at := int64(f.At)
	undo := func(fn func()) {
		if f.For > 0 {
			s.At(at+int64(f.For), fn)
		}
	}
	switch {
	case rf.crash != nil:
		s.At(at, func() {
			for _, id := range rf.crash {
				s.Crash(id)
			}
		})
		undo(func() {
			for _, id := range rf.crash {
				s.Restart(id)
			}
		})
	case rf.groups != nil:
		s.At(at, func() {
			for i := range rf.groups {
				for j := i + 1; j < len(rf.groups); j++ {
					s.Partition(rf.groups[i], rf.groups[j])
				}
			}
		})
		undo(func() {
			for i := range rf.groups {
				for j := i + 1; j < len(rf.groups); j++ {
					s.Unpartition(rf.groups[i], rf.groups[j])
				}
			}
		})
	case f.Net != nil:
		var prev sim.NetConfig
		s.At(at, func() {
			prev = s.Net()
			s.SetNet(f.Net.sim())
		})
		undo(func() { s.SetNet(prev) })
	case f.Skew != nil:
		var prevOffset time.Duration
		var prevDrift float64
		s.At(at, func() {
			prevOffset, prevDrift = s.ClockError(rf.skew), s.ClockDrift(rf.skew)
			s.SetClock(rf.skew, f.Skew.Offset, f.Skew.DriftPPM)
		})
		undo(func() { s.SetClock(rf.skew, prevOffset, prevDrift) })
	case f.Outage != "":
		s.At(at, func() { s.SetServiceDown(rf.outage, true) })
		undo(func() { s.SetServiceDown(rf.outage, false) })
	}
}

// RandomFaults draws a fault schedule for a run of length d over topology t:
// a few crashes with restarts, partitions that heal, and bursts of message
// loss, duplication and reordering. Clock faults are not drawn: the clock
// bound is a separate knob (Config.Clock), so a test decides whether it holds.
func RandomFaults(r *rand.Rand, t *topo.Topology, d time.Duration) []Fault {
	var out []Fault
	n := 1 + r.IntN(4)
	span := func() (time.Duration, time.Duration) {
		at := time.Duration(r.Int64N(int64(d)*3/4 + 1))
		return at, time.Duration(r.Int64N(int64(d)/3+1)) + time.Millisecond
	}
	for i := 0; i < n; i++ {
		at, dur := span()
		switch r.IntN(3) {
		case 0:
			node := t.Nodes[r.IntN(len(t.Nodes))]
			out = append(out, Fault{At: at, For: dur, Crash: node.Name})
		case 1:
			var a, b []string
			for _, nd := range t.Nodes {
				if r.IntN(2) == 0 {
					a = append(a, nd.Name)
				} else {
					b = append(b, nd.Name)
				}
			}
			if len(a) > 0 && len(b) > 0 {
				out = append(out, Fault{At: at, For: dur, Partition: [][]string{a, b}})
			}
		case 2:
			out = append(out, Fault{At: at, For: dur, Net: &Net{
				Loss: r.Float64() * 0.2, Duplicate: r.Float64() * 0.2, Reorder: r.Float64() * 0.3,
			}})
		}
	}
	return out
}
