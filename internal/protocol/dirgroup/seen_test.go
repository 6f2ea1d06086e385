package dirgroup

import (
	"math/rand/v2"
	"testing"
)

// TestSeenByMatchesReference checks SeenBy against the plain map it
// replaces (every entry older than now − horizon forgotten once seenMax
// are kept), over random keys and times that also go backwards, as a
// node's clock may.
func TestSeenByMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s SeenBy[int]
	ref := map[int]int64{}
	now := int64(0)
	const horizon = 1000
	for i := 0; i < 200_000; i++ {
		now += rng.Int64N(10) - 1 // mostly forward, sometimes back
		k := rng.IntN(20_000)
		_, dup := ref[k]
		if !dup && len(ref) >= seenMax {
			for rk, at := range ref { // lint:order-independent: deletes every old entry
				if at < now-horizon {
					delete(ref, rk)
				}
			}
		}
		if !dup {
			ref[k] = now
		}
		if got := s.First(k, now, horizon); got != !dup {
			t.Fatalf("step %d: First(%d) = %v; want %v", i, k, got, !dup)
		}
		if len(s.at) != len(ref) || len(s.byAt) != len(ref) {
			t.Fatalf("step %d: %d entries, %d in the heap; want %d", i, len(s.at), len(s.byAt), len(ref))
		}
	}
}
