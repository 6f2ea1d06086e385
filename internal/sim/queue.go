package sim

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/fifo"
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
// Beside the heap run lanes, one per fixed wait: an event scheduled a
// fixed time after now (pushAfter: a timer, a client's timeout) joins the
// lane of its wait, a FIFO, since events scheduled w after a
// non-decreasing now come in (at, seq) order. Only each lane's head sits
// in the heap; popping it puts the lane's next key in its place. Most
// timers are cancelled long before they fire (a gateway's 5 s timeout on a
// request answered in milliseconds), and they stay queued until then, so
// without lanes a lease run's heap held ~70k keys, nearly all cancelled
// timers, and its sift was ~14% of the run; with them it holds about the
// messages in flight. The order is the one a single heap gives.
type queue struct {
	heap  []qkey
	lanes [numLanes]lane
	n     int       // events queued
	slab  [][]event // chunks of slabChunk events
	used  uint32    // slots handed out so far
	free  []uint32
	// dropped has a bit per slot, set while the event there is dropped
	// (drop): a cancelled timer. It keeps its place in the order, and pop
	// reports it, so that the simulator counts it without reading it.
	// Most timers are cancelled (a gateway's timeout on a request answered
	// in milliseconds), and by the time one comes up, seconds later, its
	// slot has left the cache: reading it, and clearing it, cost more than
	// the rest of skipping it. The bits of every slot fit in the cache.
	dropped []uint64
}

// numLanes bounds the lanes: the distinct waits in use at once (a run has
// a few: clients' timeout, each protocol's request timeouts and periodic
// timers); an event whose wait has no lane goes to the heap.
const numLanes = 8

// lane is the FIFO of the events pushed with one wait, in (at, seq)
// order; its front is also in the heap while the lane is not empty.
type lane struct {
	wait int64
	keys fifo.Queue[qkey]
}

func (l *lane) empty() bool { return l.keys.Len() == 0 }

// slabChunk is the number of events in one chunk of the slab: a power of
// two, so a slot splits into chunk and index with a shift and a mask.
const (
	slabShift = 10
	slabChunk = 1 << slabShift
)

// slot is the event in slot i of the slab.
func (q *queue) slot(i uint32) *event { return &q.slab[i>>slabShift][i&(slabChunk-1)] }

// qkey is an event's place in the heap: its time, its scheduling order,
// its slot in the slab, and, for a lane's head, the lane (1 + its index;
// 0: the event is in the heap alone).
type qkey struct {
	at   int64
	seq  uint64
	slot uint32
	lane uint8
}

func (a qkey) less(b qkey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *queue) len() int { return q.n }

// next is the time of the earliest event; the queue must not be empty.
func (q *queue) next() int64 { return q.heap[0].at }

// drop marks the event in slot, which must hold no references (a timer's
// does not), as dropped: pop will report it, and free its slot without
// reading or clearing it.
func (q *queue) drop(slot uint32) {
	w := int(slot >> 6)
	if w >= len(q.dropped) {
		q.dropped = append(q.dropped, make([]uint64, w+1-len(q.dropped))...)
	}
	q.dropped[w] |= 1 << (slot & 63)
}

// store puts e in a free slot of the slab and returns its key.
func (q *queue) store(e event) qkey {
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
	q.n++
	return qkey{at: e.at, seq: e.seq, slot: slot}
}

// push queues e in the heap.
func (q *queue) push(e event) { q.up(q.store(e)) }

// pushAfter queues e, scheduled wait after the current time, and returns
// its slot: in wait's lane if it has one or one is free, else in the heap.
// A key that would break its lane's order (the caller's time went back,
// which the simulator's never does) goes to the heap too.
func (q *queue) pushAfter(e event, wait int64) uint32 {
	k := q.store(e)
	free := -1
	for i := range q.lanes {
		l := &q.lanes[i]
		if l.empty() {
			if free < 0 || l.wait == wait {
				free = i
			}
			continue
		}
		if l.wait != wait {
			continue
		}
		if !l.keys.Back().less(k) {
			q.up(k)
			return k.slot
		}
		l.keys.Push(k)
		return k.slot
	}
	if free < 0 {
		q.up(k)
		return k.slot
	}
	l := &q.lanes[free]
	l.wait = wait
	l.keys.Push(k)
	k.lane = uint8(free + 1)
	q.up(k)
	return k.slot
}

// up adds k to the heap.
func (q *queue) up(k qkey) {
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

// pop removes the earliest event from the order and returns its slot:
// the event stays in the slab, where the simulator runs it in place
// (copying it out cost ~2% of a quorum run), until release. If the event
// was dropped, pop frees its slot at once and reports it: the caller must
// not read the slot.
func (q *queue) pop() (slot uint32, dropped bool) {
	h := q.heap
	top := h[0]
	q.n--
	if top.lane != 0 {
		l := &q.lanes[top.lane-1]
		l.keys.Pop()
		if !l.empty() {
			// The lane's next key takes the head's place.
			k := l.keys.Front()
			k.lane = top.lane
			q.down(k, len(h))
			return top.slot, q.undrop(top.slot)
		}
	}
	last := len(h) - 1
	q.heap = h[:last]
	if last > 0 {
		q.down(h[last], last)
	}
	return top.slot, q.undrop(top.slot)
}

// undrop reports whether the event in slot, just popped, was dropped, and
// if so frees the slot (clearing its bit): its event holds no references,
// and the next store overwrites it.
func (q *queue) undrop(slot uint32) bool {
	w, bit := int(slot>>6), uint64(1)<<(slot&63)
	if w >= len(q.dropped) || q.dropped[w]&bit == 0 {
		return false
	}
	q.dropped[w] &^= bit
	q.free = append(q.free, slot)
	return true
}

// down puts k at the root of the heap's first n keys and sifts it down.
func (q *queue) down(k qkey, n int) {
	h := q.heap[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
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

// release frees slot, whose event has run.
func (q *queue) release(slot uint32) {
	*q.slot(slot) = event{} // drop references for the GC
	q.free = append(q.free, slot)
}
