// Package fifo is a first-in, first-out queue kept in fixed-size blocks:
// pushes fill the last block and link a new one when it is full, pops empty
// the first and keep it, once empty, for a later push. A queue that never
// drains (a lane of timers, a client's pending timeouts) allocates only as
// its length grows, and never copies its items: one kept in a slice, grown
// by doubling and compacted as pops advanced, allocated twice its longest
// length and copied its items over and over (~7% of the bytes a meteor
// simulation allocated).
package fifo

// blockLen is the number of items in a block.
const blockLen = 256

type block[T any] struct {
	items [blockLen]T
	next  *block[T]
}

// Queue is a FIFO of T; the zero value is empty and ready to use.
type Queue[T any] struct {
	// The items are head.items[first:], the blocks linked after it, and
	// tail.items[:last] (head == tail: head.items[first:last]).
	head, tail  *block[T]
	first, last int
	n           int
	spare       *block[T] // an emptied block, for the next one needed
}

// Len is the number of items queued.
func (q *Queue[T]) Len() int { return q.n }

// Push queues v last.
func (q *Queue[T]) Push(v T) {
	switch {
	case q.tail == nil:
		q.head = q.newBlock()
		q.tail = q.head
	case q.last == blockLen:
		b := q.newBlock()
		q.tail.next, q.tail, q.last = b, b, 0
	}
	q.tail.items[q.last] = v
	q.last++
	q.n++
}

// newBlock is the spare block, or a new one.
func (q *Queue[T]) newBlock() *block[T] {
	if b := q.spare; b != nil {
		q.spare = nil
		return b
	}
	return new(block[T])
}

// Front is the oldest item; the queue must not be empty.
func (q *Queue[T]) Front() T { return q.head.items[q.first] }

// Back is the newest item; the queue must not be empty.
func (q *Queue[T]) Back() T { return q.tail.items[q.last-1] }

// Pop removes and returns the oldest item; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	v := q.head.items[q.first]
	var zero T
	q.head.items[q.first] = zero // drop references for the GC
	q.first++
	q.n--
	switch {
	case q.n == 0:
		// Empty (head is tail): start over at the block's front.
		q.first, q.last = 0, 0
	case q.first == blockLen:
		b := q.head
		q.head, q.first = b.next, 0
		b.next = nil
		q.spare = b
	}
	return v
}
