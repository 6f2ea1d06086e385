package protocol

import (
	"cmp"
	"slices"
	"time"
)

// ReplicaRTT is the round trip from a gateway to one replica.
type ReplicaRTT struct {
	Region int
	RTT    time.Duration
}

// ReplicaRTTs lists the round trips from a gateway in region local to each
// of a key's replicas (perRegion[r] of them in region r), nearest first,
// for floors (Keyspace.Floor): oneWay there plus oneWay back, except that
// one replica of the local region costs nothing, because the gateway itself
// may be that replica (a node's messages to itself are not delayed). A
// floor is a lower bound on every operation's latency, so it takes the best
// placement of the key.
func ReplicaRTTs(perRegion []int, local int, oneWay func(a, b int) time.Duration) []ReplicaRTT {
	var out []ReplicaRTT
	for r, n := range perRegion {
		for i := 0; i < n; i++ {
			rtt := oneWay(local, r) + oneWay(r, local)
			if r == local && i == 0 {
				rtt = 0
			}
			out = append(out, ReplicaRTT{Region: r, RTT: rtt})
		}
	}
	slices.SortStableFunc(out, func(a, b ReplicaRTT) int { return cmp.Compare(a.RTT, b.RTT) })
	return out
}
