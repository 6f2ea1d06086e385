package resp

import (
	"bytes"

	"github.com/lightcone/lightcone/internal/wire"
)

// What an event loop's connections (loop_linux.go) share with the rest of
// the package: the steps of serve that do not wait.

// writeReady writes, in command order, the pending replies whose backend
// replies are in hand, and stops at the first that is not.
func (c *conn) writeReady() {
	if len(c.pending) == 0 {
		return
	}
	c.mu.Lock()
	c.collect()
	c.mu.Unlock()
	i := 0
	for ; i < len(c.pending); i++ {
		p := &c.pending[i]
		if p.rep != nil {
			c.writeRead(p.rep, p.kind, p.show)
		} else if p.show != nil {
			r := c.take(p.one)
			if r == nil {
				break
			}
			c.writeRead(r, p.kind, p.show)
		} else {
			calls := p.calls
			if p.one != 0 {
				c.one[0] = p.one
				calls = c.one[:]
			}
			if !c.hasAll(calls) {
				break
			}
			reps := c.reps[:0]
			for _, id := range calls {
				reps = append(reps, c.take(id))
			}
			p.write(c.w, reps)
			clear(reps)
			c.reps = reps[:0]
		}
		c.pending[i] = pending{}
	}
	n := copy(c.pending, c.pending[i:])
	clear(c.pending[n:])
	c.pending = c.pending[:n]
}

// hasAll reports whether the replies to all of ids are in got.
func (c *conn) hasAll(ids []wire.RequestID) bool {
	for _, id := range ids {
		if !c.has(id) {
			return false
		}
	}
	return true
}

// awaited returns the reply to wait for next, got having collected what
// arrived: the last one owed (replies mostly come in order, so the others
// are in by then), or, if that one is in, the first one missing; 0 if
// none is missing.
func (c *conn) awaited() wire.RequestID {
	id := wire.RequestID(0)
	for i := len(c.pending) - 1; i >= 0 && id == 0; i-- {
		p := &c.pending[i]
		if n := len(p.calls); n > 0 {
			id = p.calls[n-1]
		} else if p.rep == nil {
			id = p.one
		}
	}
	if id != 0 && !c.has(id) {
		return id
	}
	for i := range c.pending {
		p := &c.pending[i]
		if p.one != 0 && p.rep == nil && !c.has(p.one) {
			return p.one
		}
		for _, id := range p.calls {
			if !c.has(id) {
				return id
			}
		}
	}
	return 0
}

// arm sets an event loop's connection to be woken when the reply awaited
// names arrives. It returns false if nothing is missing any more: the
// caller writes on.
func (c *conn) arm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.collect()
	id := c.awaited()
	if id == 0 {
		return false
	}
	c.waitFor = id
	return true
}

// loopSafe reports whether a loop may run the command args: one that
// never waits for a reply while it runs. Any other moves the connection
// to a goroutine.
func (c *conn) loopSafe(args [][]byte) bool {
	if c.multi != nil {
		return false
	}
	cmd := lookup(args)
	switch {
	case cmd == nil:
		return true // an error reply
	case !cmd.loop:
		return false
	case cmd == cmdSetEntry:
		return len(args) == 3 // SET with options reads first (modify)
	case cmd == cmdMGetEntry:
		return len(args)-1 <= multiKeySlice // a larger one goes in slices (call)
	}
	return true
}

// loopRoom reports whether a command of n bytes, arguments counted as the
// Reader's Budget counts them, fits the connection's QueryBufferLimit and
// the server's BufferBudget without writing what the connection owes
// first (which a loop cannot wait for).
func (c *conn) loopRoom(n int64) bool {
	return c.held+n <= c.s.cfg.QueryBufferLimit && c.s.buffered.Load()+n <= c.s.cfg.BufferBudget
}

// scanStatus is what scanCommand found at the start of a buffer.
type scanStatus int

const (
	scanComplete   scanStatus = iota // a whole multibulk command
	scanIncomplete                   // the start of one
	scanOther                        // anything else: for the Reader to judge, on a goroutine
)

// scanCommand reports whether b starts with a whole, well-formed,
// non-empty multibulk command whose arguments are each at most maxArg
// bytes and at most maxArgs in number, which the Reader will then read
// from b alone, and its size and argument count. An inline command, an
// empty one, a malformed one and one with a larger argument are
// scanOther: they are the Reader's to judge (and refuse) on a goroutine.
func scanCommand(b []byte, maxArg int64, maxArgs int) (size, nargs int, st scanStatus) {
	const maxLenLine = 24 // "$" or "*", 20 digits, CRLF: longer is malformed
	line := func(from int) (end int, st scanStatus) {
		i := bytes.IndexByte(b[from:], '\n')
		switch {
		case i >= 0:
			return from + i + 1, scanComplete
		case len(b)-from > maxLenLine:
			return 0, scanOther
		}
		return 0, scanIncomplete
	}
	if len(b) == 0 {
		return 0, 0, scanIncomplete
	}
	if b[0] != '*' {
		return 0, 0, scanOther
	}
	end, st := line(0)
	if st != scanComplete {
		return 0, 0, st
	}
	n, ok := parseCRLFInt(b[1:end])
	if !ok || n <= 0 || n > int64(maxArgs) {
		return 0, 0, scanOther
	}
	pos := end
	for range n {
		if pos == len(b) {
			return 0, 0, scanIncomplete
		}
		if b[pos] != '$' {
			return 0, 0, scanOther
		}
		end, st := line(pos)
		if st != scanComplete {
			return 0, 0, st
		}
		sz, ok := parseCRLFInt(b[pos+1 : end])
		if !ok || sz < 0 || sz > maxArg {
			return 0, 0, scanOther
		}
		pos = end
		if int64(len(b)-pos) < sz+2 {
			return 0, 0, scanIncomplete
		}
		if b[pos+int(sz)] != '\r' || b[pos+int(sz)+1] != '\n' {
			return 0, 0, scanOther
		}
		pos += int(sz) + 2
	}
	return pos, int(n), scanComplete
}
