package fifo

import "testing"

// blocks is the number of blocks the queue holds items in.
func (q *Queue[T]) blocks() int {
	n := 0
	for b := q.head; b != nil; b = b.next {
		n++
	}
	return n
}

// TestOrderAcrossBlocks: items come out in the order they went in, across
// block boundaries, with pushes and pops interleaved so the queue never
// drains; Back is always the last pushed; the queue holds no more blocks
// than its length needs (plus one started), and reuses the emptied ones.
func TestOrderAcrossBlocks(t *testing.T) {
	var q Queue[int]
	next, want := 0, 0
	made, longest := 0, 0
	for round := 0; round < 50; round++ {
		for range 100 + 3*round {
			if q.spare == nil && (q.tail == nil || q.last == blockLen) {
				made++
			}
			q.Push(next)
			longest = max(longest, q.Len())
			if q.Back() != next {
				t.Fatalf("Back = %d after pushing %d", q.Back(), next)
			}
			next++
		}
		for range 90 + 2*round {
			if q.Front() != want {
				t.Fatalf("Front = %d; want %d", q.Front(), want)
			}
			if got := q.Pop(); got != want {
				t.Fatalf("Pop = %d; want %d", got, want)
			}
			want++
		}
		if q.Len() != next-want {
			t.Fatalf("Len = %d; want %d", q.Len(), next-want)
		}
		if need := (q.Len()+blockLen-1)/blockLen + 1; q.blocks() > need {
			t.Fatalf("%d items in %d blocks; want at most %d", q.Len(), q.blocks(), need)
		}
	}
	// Each block made held a block's worth of the longest queue, or was
	// the one spare: emptied blocks were reused (each pop phase empties a
	// block at most, which the next push phase takes again).
	if made > longest/blockLen+3 {
		t.Fatalf("%d blocks allocated for a queue of at most %d items", made, longest)
	}
	for q.Len() > 0 {
		if got := q.Pop(); got != want {
			t.Fatalf("draining: Pop = %d; want %d", got, want)
		}
		want++
	}
	if want != next || q.first != 0 || q.last != 0 || q.head != q.tail {
		t.Fatalf("drained at %d of %d, first %d, last %d", want, next, q.first, q.last)
	}
	q.Push(1)
	if q.Front() != 1 || q.Back() != 1 || q.Len() != 1 {
		t.Fatalf("after draining and pushing 1: Front %d, Back %d, Len %d", q.Front(), q.Back(), q.Len())
	}
}
