package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueueOrder checks the queue against a sorted list: pushes (near
// events, events at the current time, and events a fixed wait from now,
// as timers and clients' timeouts are: a few common waits, which get
// lanes, and more distinct ones than there are lanes, which share them or
// go to the heap) mixed with pops always pop the least (at, seq).
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q queue
	var ref []event
	var now int64
	var seq uint64
	for i := 0; i < 300_000; i++ {
		if rng.IntN(2) == 0 || len(ref) == 0 {
			seq++
			var e event
			switch rng.IntN(6) {
			case 0:
				// A common fixed wait: its lane.
				wait := [...]int64{10_000, 5_000, 300, 0}[rng.IntN(4)]
				e = event{at: now + wait, seq: seq}
				q.pushAfter(e, wait)
			case 1:
				// One of more waits than there are lanes.
				wait := rng.Int64N(3 * numLanes)
				e = event{at: now + wait, seq: seq}
				q.pushAfter(e, wait)
			case 2:
				// A fixed wait from a time before now, which the
				// simulator never schedules: the lane must not take it
				// out of order.
				e = event{at: now + 5_000 - rng.Int64N(100), seq: seq}
				q.pushAfter(e, 5_000)
			case 3:
				e = event{at: now, seq: seq}
				q.push(e)
			default:
				e = event{at: now + rng.Int64N(200), seq: seq}
				q.push(e)
			}
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
		slot := q.pop()
		got := *q.slot(slot)
		q.release(slot)
		if got.at != ref[0].at || got.seq != ref[0].seq {
			t.Fatalf("step %d: pop = (%d, %d); want (%d, %d)", i, got.at, got.seq, ref[0].at, ref[0].seq)
		}
		ref = ref[1:]
		now = got.at
	}
}
