package sim

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

type eventKind uint8

const (
	evDeliver     eventKind = iota + 1 // a message arrives at node from another node
	evRequest                          // a client request arrives at its gateway
	evReply                            // a reply arrives at its client
	evTimer                            // a node's timer fires
	evFunc                             // a scheduled callback (clients, fault schedules)
	evService                          // a request reaches a storage service (node: its address)
	evServiceDone                      // a storage service applies a request and answers
)

// event is one entry of the simulator's queue. Events at equal times run in
// the order they were scheduled (seq), which keeps runs deterministic.
type event struct {
	at   int64 // true time, ns since the start of the run
	seq  uint64
	kind eventKind
	// served: the event already waited for its node's service slot
	// (Config.ServiceTime) and runs now. (Beside kind: the event is 80
	// bytes, not 88, and the queue copies events in and out.)
	served bool
	node   wire.NodeID // destination node (deliver, request, timer)
	from   wire.NodeID
	gen    uint32 // destination's incarnation when scheduled (timers, served events)
	timer  env.TimerID
	msg    wire.Msg
	req    *wire.Request
	rep    *wire.Reply
	fn     func()
}

// queue orders the pending events by (at, seq). The events themselves sit
// in a slab (slots reused through a free list; fixed-size chunks, so that
// the slab grows without copying: every client's timeout stays pending for
// its whole wait, and growing one slice by doubling cost ~7% of a lease
// run), and the heap holds only
// their keys and slot numbers: small, pointer-free entries that a sift
// moves without the write barriers and copying of whole events. The heap
// is 4-ary: half as deep as a binary one, and a node's children share a
// cache line.
//
// Beside the heap runs a lane: a FIFO of keys, each at or after the one
// before it. A new event that comes no earlier than the lane's last joins
// the lane instead of the heap: clients' timeouts (a request's time plus a
// fixed wait) all do, so the many long waits pending at any time stay out
// of the heap, which holds the near events. The next event is the earlier
// of the heap's top and the lane's head, by (at, seq) as always, so the
// order is the one a single heap gives.
type queue struct {
	heap []qkey
	lane []qkey // lane[laneHead:] is the FIFO, in (at, seq) order
	// laneHead is the index of the lane's first key.
	laneHead int
	slab     [][]event // chunks of slabChunk events
	used     uint32    // slots handed out so far
	free     []uint32
}

// slabChunk is the number of events in one chunk of the slab: a power of
// two, so a slot splits into chunk and index with a shift and a mask.
const (
	slabShift = 10
	slabChunk = 1 << slabShift
)

// slot is the event in slot i of the slab.
func (q *queue) slot(i uint32) *event { return &q.slab[i>>slabShift][i&(slabChunk-1)] }

// qkey is an event's place in the heap: its time, its scheduling order
// and its slot in the slab.
type qkey struct {
	at   int64
	seq  uint64
	slot uint32
}

func (a qkey) less(b qkey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *queue) len() int { return len(q.heap) + len(q.lane) - q.laneHead }

// next is the time of the earliest event; the queue must not be empty.
func (q *queue) next() int64 {
	if q.laneHead == len(q.lane) {
		return q.heap[0].at
	}
	if len(q.heap) == 0 {
		return q.lane[q.laneHead].at
	}
	return min(q.heap[0].at, q.lane[q.laneHead].at)
}

func (q *queue) push(e event) {
	var slot uint32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		slot = q.used
		q.used++
		if int(slot>>slabShift) == len(q.slab) {
			q.slab = append(q.slab, make([]event, slabChunk))
		}
	}
	*q.slot(slot) = e
	k := qkey{at: e.at, seq: e.seq, slot: slot}
	if n := len(q.lane); n == q.laneHead || q.lane[n-1].at <= k.at {
		// Seqs only grow, so k comes after the lane's last key.
		if q.laneHead == n && n > 0 {
			q.lane, q.laneHead = q.lane[:0], 0
		} else if q.laneHead >= 1024 && q.laneHead*2 >= n {
			q.lane = q.lane[:copy(q.lane, q.lane[q.laneHead:])]
			q.laneHead = 0
		}
		q.lane = append(q.lane, k)
		return
	}
	q.heap = append(q.heap, k)
	h := q.heap
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !k.less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = k
}

func (q *queue) pop() event {
	if q.laneHead < len(q.lane) && (len(q.heap) == 0 || q.lane[q.laneHead].less(q.heap[0])) {
		top := q.lane[q.laneHead]
		q.laneHead++
		return q.take(top.slot)
	}
	h := q.heap
	top := h[0]
	last := len(h) - 1
	k := h[last]
	h = h[:last]
	q.heap = h
	if last > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= last {
				break
			}
			m := c
			for j := c + 1; j < c+4 && j < last; j++ {
				if h[j].less(h[m]) {
					m = j
				}
			}
			if !h[m].less(k) {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = k
	}
	return q.take(top.slot)
}

// take removes the event in slot from the slab.
func (q *queue) take(slot uint32) event {
	p := q.slot(slot)
	e := *p
	*p = event{} // drop references for the GC
	q.free = append(q.free, slot)
	return e
}
