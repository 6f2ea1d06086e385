package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueueOrder checks the queue against a sorted list: pushes (near
// events, far ones in the order they would be scheduled, as clients'
// timeouts are, and events at the current time) mixed with pops always pop
// the least (at, seq).
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q queue
	var ref []event
	var now int64
	var seq uint64
	for i := 0; i < 300_000; i++ {
		if rng.IntN(2) == 0 || len(ref) == 0 {
			seq++
			var at int64
			switch rng.IntN(4) {
			case 0:
				at = now + 10_000 // a fixed wait: the lane
			case 1:
				at = now
			default:
				at = now + rng.Int64N(200)
			}
			e := event{at: at, seq: seq}
			q.push(e)
			ref = append(ref, e)
			continue
		}
		slices.SortFunc(ref, func(a, b event) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return int(a.seq) - int(b.seq)
		})
		if q.len() != len(ref) || q.next() != ref[0].at {
			t.Fatalf("step %d: len %d, next %d; want %d, %d", i, q.len(), q.next(), len(ref), ref[0].at)
		}
		got := q.pop()
		if got.at != ref[0].at || got.seq != ref[0].seq {
			t.Fatalf("step %d: pop = (%d, %d); want (%d, %d)", i, got.at, got.seq, ref[0].at, ref[0].seq)
		}
		ref = ref[1:]
		now = got.at
	}
}
