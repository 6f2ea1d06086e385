package fifo

import "testing"

// TestOrderAcrossCompaction: items come out in the order they went in,
// through compactions and growth, with pushes and pops interleaved so
// the queue never drains; Back is always the last pushed.
func TestOrderAcrossCompaction(t *testing.T) {
	var q Queue[int]
	next, want := 0, 0
	for round := 0; round < 50; round++ {
		for range 100 + round {
			q.Push(next)
			if q.Back() != next {
				t.Fatalf("Back = %d after pushing %d", q.Back(), next)
			}
			next++
		}
		for range 90 {
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
		if q.head >= compactAt && q.head*2 > len(q.items)+2*compactAt {
			t.Fatalf("head %d of %d items: not compacted", q.head, len(q.items))
		}
	}
	for q.Len() > 0 {
		if got := q.Pop(); got != want {
			t.Fatalf("draining: Pop = %d; want %d", got, want)
		}
		want++
	}
	if want != next || q.head != 0 || len(q.items) != 0 {
		t.Fatalf("drained at %d of %d, head %d, %d items", want, next, q.head, len(q.items))
	}
}
