// Package fifo is a first-in, first-out queue kept in one slice: pops
// advance a head index, and the slice is compacted once the popped part is
// at least half of it, so a queue that never drains (a lane of timers, a
// client's pending timeouts) neither grows without bound nor copies its
// items on every pop.
package fifo

// Queue is a FIFO of T; the zero value is empty and ready to use.
type Queue[T any] struct {
	items []T // items[head:] are queued, oldest first
	head  int
}

// compactAt is the fewest popped items worth moving the rest down for.
const compactAt = 64

// Len is the number of items queued.
func (q *Queue[T]) Len() int { return len(q.items) - q.head }

// Push queues v last. When the slice is full it doubles (append grows a
// long slice by ~1.25×, which copies a long queue many times as it fills).
func (q *Queue[T]) Push(v T) {
	if q.head >= compactAt && q.head*2 >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	} else if len(q.items) == cap(q.items) && len(q.items) > 0 {
		grown := make([]T, len(q.items), 2*cap(q.items))
		copy(grown, q.items)
		q.items = grown
	}
	q.items = append(q.items, v)
}

// Front is the oldest item; the queue must not be empty.
func (q *Queue[T]) Front() T { return q.items[q.head] }

// Back is the newest item; the queue must not be empty.
func (q *Queue[T]) Back() T { return q.items[len(q.items)-1] }

// Pop removes and returns the oldest item; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero // drop references for the GC
	if q.head++; q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v
}
