package quorum

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/wire"
)

// need is what a consistency level requires of the responding replicas: at
// least total of them, and at least min[r] in region r.
type need struct {
	total int
	min   []int
}

// requirement translates level l into a need, for a coordinator in region
// local of a keyspace with perRegion replicas in each region (Cassandra's
// NetworkTopologyStrategy semantics, seed 002 §3.2).
func requirement(l wire.Level, perRegion []int, local int) (need, error) {
	n := 0
	for _, c := range perRegion {
		n += c
	}
	nd := need{min: make([]int, len(perRegion))}
	switch l {
	case wire.One:
		nd.total = 1
	case wire.Two:
		nd.total = 2
	case wire.Three:
		nd.total = 3
	case wire.Quorum:
		nd.total = n/2 + 1
	case wire.All:
		nd.total = n
	case wire.LocalOne, wire.LocalQuorum:
		if perRegion[local] == 0 {
			return need{}, fmt.Errorf("quorum: level %s needs a replica in the coordinator's region, which has none", l)
		}
		nd.min[local] = 1
		if l == wire.LocalQuorum {
			nd.min[local] = perRegion[local]/2 + 1
		}
		nd.total = nd.min[local]
	case wire.EachQuorum:
		for r, c := range perRegion {
			if c > 0 {
				nd.min[r] = c/2 + 1
				nd.total += nd.min[r]
			}
		}
	default:
		return need{}, fmt.Errorf("quorum: unsupported consistency level %s", l)
	}
	if nd.total > n {
		return need{}, fmt.Errorf("quorum: level %s needs %d replicas; the keyspace has %d", l, nd.total, n)
	}
	return nd, nil
}

// met reports whether got (responses per region) satisfies the need.
func (nd need) met(got []int) bool {
	t := 0
	for r, c := range got {
		if c < nd.min[r] {
			return false
		}
		t += c
	}
	return t >= nd.total
}

// canBeDisjoint reports whether some response set satisfying a and some
// response set satisfying b can share no replica. Each region r must fit
// both minimums (a.min[r]+b.min[r] ≤ perRegion[r]); then the spare replicas
// must cover what both totals still lack beyond their minimums.
func canBeDisjoint(a, b need, perRegion []int) bool {
	spare, amin, bmin := 0, 0, 0
	for r, c := range perRegion {
		if a.min[r]+b.min[r] > c {
			return false
		}
		spare += c - a.min[r] - b.min[r]
		amin += a.min[r]
		bmin += b.min[r]
	}
	return spare >= max(0, a.total-amin)+max(0, b.total-bmin)
}

// covers reports whether every response set satisfying w, from a
// coordinator in region local, also satisfies r from there: the replicas
// that can complete a w-level round can always complete an r-level one.
// A minimal w-set holds at least max(w.min[x], w.total − (replicas
// outside x)) replicas of region x and w.total in all; r is covered when
// that meets r.min[x] in every region and w.total ≥ r.total.
func covers(w, r need, perRegion []int) bool {
	if w.total < r.total {
		return false
	}
	n := 0
	for _, c := range perRegion {
		n += c
	}
	for x, c := range perRegion {
		if max(w.min[x], w.total-(n-c)) < r.min[x] {
			return false
		}
	}
	return true
}

// Guarantee is what a read level and a write level give together.
type Guarantee uint8

const (
	// Eventual: reads return some value that was written (or the initial
	// one); replicas converge once writes stop and reads repair them.
	Eventual Guarantee = iota + 1
	// Regular: every read overlaps every write, so a read returns the value
	// of the latest write that completed before it began or of a write
	// concurrent with it (a multi-writer regular register per key).
	Regular
	// Linearizable: reads also overlap each other and repair before
	// answering, so each key is an atomic register.
	Linearizable
)

func (g Guarantee) String() string {
	switch g {
	case Eventual:
		return "eventual"
	case Regular:
		return "regular"
	case Linearizable:
		return "linearizable"
	}
	return "guarantee(?)"
}

// Model is the name of the checker (internal/check) that verifies g.
func (g Guarantee) Model() string {
	switch g {
	case Linearizable:
		return "linearizable"
	case Regular:
		return "regular"
	}
	return "valid-reads"
}

// GuaranteeOf returns the guarantee of reads at level read and writes at
// level write, for clients in any region with a replica. With clock write
// order it rests on the clock assumption of doc.go (every clock within
// MaxClockOffset of true time); with query order it does not (only a
// restarted coordinator's fresh versions do: doc.go, "Write order"), as
// long as requests use levels the keyspace accepts. Levels invalid for
// the layout yield an error.
func GuaranteeOf(perRegion []int, read, write wire.Level) (Guarantee, error) {
	rw, rr := true, true // every read set overlaps every write / read set
	for ra := range perRegion {
		if perRegion[ra] == 0 {
			continue
		}
		rn, err := requirement(read, perRegion, ra)
		if err != nil {
			return 0, err
		}
		for rb := range perRegion {
			if perRegion[rb] == 0 {
				continue
			}
			wn, err := requirement(write, perRegion, rb)
			if err != nil {
				return 0, err
			}
			if canBeDisjoint(rn, wn, perRegion) {
				rw = false
			}
			rn2, _ := requirement(read, perRegion, rb)
			if canBeDisjoint(rn, rn2, perRegion) {
				rr = false
			}
		}
	}
	switch {
	case rw && rr:
		return Linearizable, nil
	case rw:
		return Regular, nil
	}
	return Eventual, nil
}

// Floor is the network time an operation at level l cannot avoid when its
// coordinator is in region local: the round trip to the farthest member of
// the nearest replica set that satisfies l, given the one-way delay between
// regions (DESIGN.md, "Measuring"). One local replica is free: the
// coordinator may be it (protocol.ReplicaRTTs).
func Floor(perRegion []int, l wire.Level, local int, oneWay func(a, b int) time.Duration) time.Duration {
	nd, err := requirement(l, perRegion, local)
	if err != nil {
		return 0
	}
	cands := protocol.ReplicaRTTs(perRegion, local, oneWay)
	taken := make([]bool, len(cands))
	got := make([]int, len(perRegion))
	var floor time.Duration
	n := 0
	for i, c := range cands {
		if got[c.Region] < nd.min[c.Region] {
			taken[i] = true
			got[c.Region]++
			n++
			floor = max(floor, c.RTT)
		}
	}
	for i, c := range cands {
		if n >= nd.total {
			break
		}
		if !taken[i] {
			n++
			floor = max(floor, c.RTT)
		}
	}
	return floor
}
