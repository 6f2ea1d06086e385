package cric

import (
	"fmt"
	"math/bits"
	"testing"
)

// hierarchical lists every minimal hierarchical quorum of regions regions
// with per replicas each, over n regions × m replicas, as bit sets of
// acceptors (acceptor g*m+i).
func hierarchical(n, m, regions, per int) []uint64 {
	var out []uint64
	for rs := uint64(0); rs < 1<<n; rs++ {
		if bits.OnesCount64(rs) != regions {
			continue
		}
		sets := []uint64{0}
		for g := range n {
			if rs&(1<<g) == 0 {
				continue
			}
			var next []uint64
			for sub := uint64(0); sub < 1<<m; sub++ {
				if bits.OnesCount64(sub) != per {
					continue
				}
				for _, s := range sets {
					next = append(next, s|sub<<(g*m))
				}
			}
			sets = next
		}
		out = append(out, sets...)
	}
	return out
}

// bruteForce checks the conditions by enumeration: any two quorums
// intersect (Theorem V.2), and any two super quorums and a quorum share an
// acceptor (Theorem V.4, the Fast Paxos condition). It returns what fails.
func bruteForce(n, m, q, qm, s, sm int) error {
	qs := hierarchical(n, m, q, qm)
	ss := hierarchical(n, m, s, sm)
	for _, a := range qs {
		for _, b := range qs {
			if a&b == 0 {
				return fmt.Errorf("quorums %b and %b are disjoint", a, b)
			}
		}
	}
	for _, a := range ss {
		for _, b := range ss {
			for _, c := range qs {
				if a&b&c == 0 {
					return fmt.Errorf("super quorums %b, %b and quorum %b share no acceptor", a, b, c)
				}
			}
		}
	}
	return nil
}

// TestQuorumConditionsBruteForce: over every configuration of up to 4
// regions × 3 replicas and every quorum and super quorum size, Validate
// accepts exactly those whose quorums the enumeration finds intersecting
// as Theorems V.2 and V.4 require; and the default sizes are valid.
func TestQuorumConditionsBruteForce(t *testing.T) {
	checked, valid := 0, 0
	for n := 1; n <= 4; n++ {
		regions := []string{"r0", "r1", "r2", "r3"}[:n]
		for m := 1; m <= 3; m++ {
			for q := 1; q <= n; q++ {
				for qm := 1; qm <= m; qm++ {
					for s := 1; s <= n; s++ {
						for sm := 1; sm <= m; sm++ {
							c := Config{Regions: regions, ReplicasPerRegion: m, RegionQuorum: q, ReplicaQuorum: qm,
								RegionSuperQuorum: s, ReplicaSuperQuorum: sm}
							c.EnsureDefaults(regions)
							verr := c.Validate(regions)
							berr := bruteForce(n, m, q, qm, s, sm)
							if (verr == nil) != (berr == nil) {
								t.Errorf("%d regions × %d replicas, quorum %d×%d, super %d×%d: Validate says %v; enumeration says %v",
									n, m, q, qm, s, sm, verr, berr)
							}
							checked++
							if verr == nil {
								valid++
							}
						}
					}
				}
			}
			var d Config
			d.ReplicasPerRegion = m
			d.EnsureDefaults(regions)
			if err := d.Validate(regions); err != nil {
				t.Errorf("defaults for %d regions × %d replicas: %v", n, m, err)
			}
			sh := shapeOf(d)
			if err := bruteForce(n, m, sh.q, sh.qm, sh.s, sh.sm); err != nil {
				t.Errorf("defaults for %d regions × %d replicas: %v", n, m, err)
			}
		}
	}
	t.Logf("%d configurations, %d valid", checked, valid)
}

// TestShapeCounts: the quorum tests a proposer runs on answers agree with
// the enumeration (3×3: any two acceptors in each of two regions).
func TestShapeCounts(t *testing.T) {
	c := Config{ReplicasPerRegion: 3}
	c.EnsureDefaults([]string{"a", "b", "c"})
	h := shapeOf(c)
	for _, set := range hierarchical(3, 3, 2, 2) {
		if !h.quorum(func(a int) bool { return set&(1<<a) != 0 }) {
			t.Fatalf("%b is a quorum the proposer does not count", set)
		}
	}
	if h.quorum(func(a int) bool { return a < 3 || a == 3 }) {
		t.Fatal("one full region and one replica of another counted as a quorum")
	}
	if !h.super(func(a int) bool { return true }) || h.super(func(a int) bool { return a != 0 && a != 3 && a != 6 && a != 1 }) {
		t.Fatal("super quorum (3 of 3 regions, 3 of 3 replicas) miscounted")
	}
}

// TestInvalidConfigRefused: a configuration whose quorums cannot intersect
// is refused with the reason.
func TestInvalidConfigRefused(t *testing.T) {
	regions := []string{"a", "b", "c"}
	for _, c := range []Config{
		{RegionQuorum: 1},
		{ReplicasPerRegion: 4, ReplicaQuorum: 2},
		{RegionSuperQuorum: 2},
		{Regions: []string{"x"}},
		{ReplicasPerRegion: 100},
	} {
		c.EnsureDefaults(regions)
		if err := c.Validate(regions); err == nil {
			t.Errorf("%+v accepted", c)
		} else {
			t.Log(err)
		}
	}
}
