package sim

import (
	"maps"
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
		slot, dropped := q.pop()
		if dropped {
			t.Fatalf("step %d: pop reports a dropped event; none was", i)
		}
		got := *q.slot(slot)
		q.release(slot)
		if got.at != ref[0].at || got.seq != ref[0].seq {
			t.Fatalf("step %d: pop = (%d, %d); want (%d, %d)", i, got.at, got.seq, ref[0].at, ref[0].seq)
		}
		ref = ref[1:]
		now = got.at
	}
}

// TestQueueDrop: a dropped event comes up in its place in the order,
// reported as dropped, and its slot is free again; an event later stored
// in that slot is not dropped.
func TestQueueDrop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q queue
	var now int64
	var seq uint64
	type pending struct {
		at      int64
		seq     uint64
		dropped bool
	}
	bySlot := map[uint32]*pending{}
	for round := 0; round < 200; round++ {
		for range 500 {
			seq++
			wait := [...]int64{5_000, 300, 0, 17}[rng.IntN(4)]
			e := event{at: now + wait, seq: seq, kind: evTimer}
			var slot uint32
			if rng.IntN(4) == 0 {
				k := q.store(e)
				q.up(k)
				slot = k.slot
			} else {
				slot = q.pushAfter(e, wait)
			}
			if bySlot[slot] != nil {
				t.Fatalf("slot %d handed out twice", slot)
			}
			bySlot[slot] = &pending{at: e.at, seq: e.seq}
		}
		slots := slices.Sorted(maps.Keys(bySlot))
		for _, slot := range slots {
			if p := bySlot[slot]; !p.dropped && rng.IntN(3) == 0 {
				q.drop(slot)
				p.dropped = true
			}
		}
		var lastAt int64
		var lastSeq uint64
		for range 400 {
			at := q.next()
			slot, dropped := q.pop()
			p := bySlot[slot]
			if p == nil {
				t.Fatalf("pop: slot %d holds no pending event", slot)
			}
			if p.at != at || dropped != p.dropped {
				t.Fatalf("pop: slot %d at %d dropped %v; want at %d dropped %v", slot, at, dropped, p.at, p.dropped)
			}
			if at < lastAt || at == lastAt && p.seq < lastSeq {
				t.Fatalf("pop: (%d, %d) after (%d, %d)", at, p.seq, lastAt, lastSeq)
			}
			lastAt, lastSeq = at, p.seq
			if !dropped {
				if got := q.slot(slot); got.at != p.at || got.seq != p.seq {
					t.Fatalf("pop: slot %d holds (%d, %d); want (%d, %d)", slot, got.at, got.seq, p.at, p.seq)
				}
				q.release(slot)
			}
			delete(bySlot, slot)
			now = at
		}
	}
}
