package quorum

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// satisfies reports whether the replica subset mask (bit i: replica i, in
// region order) meets nd.
func satisfies(mask uint, perRegion []int, nd need) bool {
	got := make([]int, len(perRegion))
	i := 0
	for r, n := range perRegion {
		for j := 0; j < n; j++ {
			if mask&(1<<i) != 0 {
				got[r]++
			}
			i++
		}
	}
	return nd.met(got)
}

// TestCanBeDisjointMatchesBruteForce checks the closed form against every
// pair of replica subsets, for random layouts and every pair of levels
// and coordinator regions (the etcd raft quorum/quick_test idea).
func TestCanBeDisjointMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		perRegion := make([]int, 1+r.IntN(3))
		total := 0
		for i := range perRegion {
			perRegion[i] = r.IntN(3)
			total += perRegion[i]
		}
		if total == 0 || total > 7 {
			continue
		}
		for _, la := range wire.Levels() {
			for _, lb := range wire.Levels() {
				ra, rb := r.IntN(len(perRegion)), r.IntN(len(perRegion))
				a, errA := requirement(la, perRegion, ra)
				b, errB := requirement(lb, perRegion, rb)
				if errA != nil || errB != nil {
					continue
				}
				want := false
				for x := uint(0); x < 1<<total && !want; x++ {
					if !satisfies(x, perRegion, a) {
						continue
					}
					for y := uint(0); y < 1<<total; y++ {
						if x&y == 0 && satisfies(y, perRegion, b) {
							want = true
							break
						}
					}
				}
				if got := canBeDisjoint(a, b, perRegion); got != want {
					t.Fatalf("canBeDisjoint(%s@%d, %s@%d, %v) = %v; brute force says %v", la, ra, lb, rb, perRegion, got, want)
				}
			}
		}
	}
}

func TestRequirement(t *testing.T) {
	per := []int{3, 3, 1}
	for _, tc := range []struct {
		l     wire.Level
		local int
		total int
		min   []int
		err   bool
	}{
		{wire.One, 0, 1, []int{0, 0, 0}, false},
		{wire.Quorum, 0, 4, []int{0, 0, 0}, false},
		{wire.All, 1, 7, []int{0, 0, 0}, false},
		{wire.LocalQuorum, 1, 2, []int{0, 2, 0}, false},
		{wire.LocalOne, 2, 1, []int{0, 0, 1}, false},
		{wire.EachQuorum, 0, 5, []int{2, 2, 1}, false},
	} {
		nd, err := requirement(tc.l, per, tc.local)
		if (err != nil) != tc.err {
			t.Fatalf("requirement(%s) error = %v", tc.l, err)
		}
		if nd.total != tc.total || !equal(nd.min, tc.min) {
			t.Errorf("requirement(%s, local %d) = %d %v; want %d %v", tc.l, tc.local, nd.total, nd.min, tc.total, tc.min)
		}
	}
	if _, err := requirement(wire.Three, []int{1, 1}, 0); err == nil {
		t.Error("requirement(THREE) with 2 replicas: no error")
	}
	if _, err := requirement(wire.LocalOne, []int{0, 1}, 0); err == nil {
		t.Error("requirement(LOCAL_ONE) in a region without replicas: no error")
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGuaranteeOf(t *testing.T) {
	one := []int{1, 1, 1, 1}
	for _, tc := range []struct {
		per         []int
		read, write wire.Level
		want        Guarantee
	}{
		{one, wire.One, wire.All, Regular},
		{one, wire.All, wire.One, Linearizable},
		{one, wire.Quorum, wire.Quorum, Linearizable},
		{one, wire.One, wire.One, Eventual},
		{one, wire.LocalQuorum, wire.LocalQuorum, Eventual},
		{[]int{3, 3}, wire.LocalQuorum, wire.EachQuorum, Regular},
		{[]int{3, 3}, wire.EachQuorum, wire.LocalQuorum, Linearizable},
	} {
		got, err := GuaranteeOf(tc.per, tc.read, tc.write)
		if err != nil || got != tc.want {
			t.Errorf("GuaranteeOf(%v, %s, %s) = %s, %v; want %s", tc.per, tc.read, tc.write, got, err, tc.want)
		}
	}
}

func TestFloor(t *testing.T) {
	// Regions 0..3 at one-way 0, 10, 20, 250ms from region 0.
	oneWay := func(a, b int) time.Duration {
		d := []time.Duration{0, 10, 20, 250}
		return (d[a] + d[b]) * time.Millisecond
	}
	per := []int{1, 1, 1, 1}
	for _, tc := range []struct {
		l    wire.Level
		want time.Duration
	}{
		{wire.One, 0}, {wire.Two, 20 * time.Millisecond}, {wire.Quorum, 40 * time.Millisecond},
		{wire.All, 500 * time.Millisecond}, {wire.LocalOne, 0}, {wire.EachQuorum, 500 * time.Millisecond},
	} {
		if got := Floor(per, tc.l, 0, oneWay); got != tc.want {
			t.Errorf("Floor(%s) = %s; want %s", tc.l, got, tc.want)
		}
	}
}
