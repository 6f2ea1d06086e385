package sim

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/env"
)

// pendingTimers is a node's pending timers, by ID. A node hands IDs out in order
// (node.nextTID), and most timers fire or are cancelled soon, so the
// pending ones lie in a short window of IDs: from the oldest still pending
// to the newest. The window is a ring indexed by ID, so a timer is found
// without hashing; a timer that stays pending while maxTimerWindow newer
// ones are set (a periodic sweep's, a lease's) leaves the ring for a map.
// A map of every timer was ~3% of a meteor run: each request sets two,
// each then fired or cancelled.
type pendingTimers struct {
	ring []timer // a power of two long, or empty
	head int     // ring index of ID base
	n    int     // IDs base to base+n-1 are in the ring
	base env.TimerID
	old  map[env.TimerID]timer // pending timers older than base
}

// timer is an entry of the window: a pending timer's payload and the queue
// slot of its event (which CancelTimer drops), or, once it has fired or
// been cancelled, the zero timer.
type timer struct {
	payload any
	slot    uint32
	pending bool
}

// maxTimerWindow bounds the ring: the IDs from the oldest pending timer in
// it to the newest.
const maxTimerWindow = 1 << 13

// add records pending timer id, the ID after every one added before (since
// reset).
func (ts *pendingTimers) add(id env.TimerID, payload any, slot uint32) {
	switch {
	case ts.n == 0:
		ts.base = id
	case id != ts.base+env.TimerID(ts.n):
		panic(fmt.Sprintf("sim: timer %d added after %d", id, ts.base+env.TimerID(ts.n)-1))
	}
	if ts.n == len(ts.ring) {
		if ts.n == maxTimerWindow {
			// The oldest leaves the ring: for the map if still pending.
			if t := ts.ring[ts.head]; t.pending {
				if ts.old == nil {
					ts.old = make(map[env.TimerID]timer)
				}
				ts.old[ts.base] = t
			}
			ts.ring[ts.head] = timer{}
			ts.advance()
		} else {
			ts.grow()
		}
	}
	ts.ring[ts.index(ts.n)] = timer{payload: payload, slot: slot, pending: true}
	ts.n++
	ts.trim()
}

// take removes pending timer id and returns it, or false if it is not
// pending (it fired, was cancelled, or was set before a reset).
func (ts *pendingTimers) take(id env.TimerID) (timer, bool) {
	if id < ts.base {
		t, ok := ts.old[id]
		if ok {
			delete(ts.old, id)
		}
		return t, ok
	}
	off := uint64(id - ts.base)
	if off >= uint64(ts.n) {
		return timer{}, false
	}
	p := &ts.ring[ts.index(int(off))]
	t := *p
	if !t.pending {
		return timer{}, false
	}
	*p = timer{}
	ts.trim()
	return t, true
}

// reset forgets every timer (a crash).
func (ts *pendingTimers) reset() {
	clear(ts.ring)
	clear(ts.old)
	ts.head, ts.n = 0, 0
}

func (ts *pendingTimers) index(off int) int { return (ts.head + off) & (len(ts.ring) - 1) }

// advance moves the window's start past its first ID.
func (ts *pendingTimers) advance() {
	ts.head = ts.index(1)
	ts.n--
	ts.base++
}

// trim moves the window's start past the timers at its front that are no
// longer pending.
func (ts *pendingTimers) trim() {
	for ts.n > 0 && !ts.ring[ts.head].pending {
		ts.advance()
	}
}

// grow doubles the ring, keeping the window's order.
func (ts *pendingTimers) grow() {
	ring := make([]timer, max(16, 2*len(ts.ring)))
	for i := range ts.n {
		ring[i] = ts.ring[ts.index(i)]
	}
	ts.ring, ts.head = ring, 0
}
