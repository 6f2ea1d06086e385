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
	node wire.NodeID // destination node (deliver, request, timer)
	from wire.NodeID
	gen  uint32 // destination's incarnation when scheduled (timers, served events)
	// served: the event already waited for its node's service slot
	// (Config.ServiceTime) and runs now.
	served bool
	timer  env.TimerID
	msg    wire.Msg
	req    *wire.Request
	rep    *wire.Reply
	fn     func()
}

// queue is a binary min-heap of events by (at, seq), typed to avoid the
// interface boxing of container/heap.
type queue []event

func (q queue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *queue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *queue) pop() event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{} // drop references for the GC
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
