//go:build linux

package resp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// An event loop serves many plain TCP connections from one goroutine, as
// Redis's ae loop does: it waits on an epoll set of its own, reads each
// ready socket once, runs the complete commands read, and writes their
// replies. Go's poller, with a goroutine per connection, costs each
// request a read that finds the socket empty and a park and wake of the
// goroutine; here a request costs one read and one write. On a one-core
// server that is the difference between Redis's tail and ours (see
// docs/performance.md, "An event loop for RESP").
//
// The loop never waits for a reply: a command whose replies are owed
// leaves the connection registered, and the backend's reply wakes the
// loop (onReply → wake). A connection leaves its loop for a goroutine of
// its own (detach), for good, when it needs what only a goroutine can do:
// a command that waits for replies while it runs (MULTI, INCR, SET with
// options, SCAN, large MGET...), a command larger than the read buffer,
// an inline command, or a client that does not read its replies fast
// enough to take them at once.
//
// The loop sleeps in Go's network poller, on the epoll descriptor (which
// is readable while the set has events), so that the node's loop and the
// store's syncs run on the same cores while it sleeps. A reply wakes it
// by setting a read deadline in the past on that descriptor: Go's runtime
// then readies the sleeping loop at once, as a channel send would. (Made
// readable through the set, by an eventfd, the loop would wait until some
// core looks at Go's poller, which with every core busy can take
// milliseconds: SET -P 1's p99 was 3.3 ms at two cores; and a goroutine
// of its own to wait on the set costs a hand-off per round.)
type loop struct {
	s   *Server
	ep  int // the epoll set
	epf *os.File
	rc  syscall.RawConn

	mu        sync.Mutex
	ready     []*conn // connections whose awaited reply arrived
	incoming  []*conn // connections handed to the loop, not yet in the set
	signalled bool    // kicked since the loop last took ready
	closed    bool    // the loop has stopped: adopt ends what it is given

	// degraded: the epoll descriptor cannot be waited on in Go's poller
	// (it always can on Linux); the loop waits in epoll_wait itself, a
	// millisecond at a time.
	degraded bool

	conns  map[int32]*conn // in the set, by descriptor
	events []syscall.EpollEvent
	spare  []*conn // ready's other buffer
	// again are connections that had more to read when their turn ended
	// (maxReadsPerStep); they go on in the next round, which does not
	// sleep.
	again, againSpare []*conn
}

// maxReadsPerStep bounds the reads of one connection's turn (each up to
// the 16 KiB read buffer), so that a client streaming a long pipeline
// takes turns with the others, as Redis reads one buffer per client per
// round.
const maxReadsPerStep = 4

// haveLoops: this platform has event loops.
const haveLoops = true

// errWouldBlock is a loop connection's read finding its socket empty.
var errWouldBlock = errors.New("resp: would block")

// newLoop creates an event loop; run serves it.
func newLoop(s *Server) (*loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(ep, true); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	epf := os.NewFile(uintptr(ep), "resp-epoll")
	rc, err := epf.SyscallConn()
	if err != nil {
		epf.Close()
		return nil, err
	}
	return &loop{s: s, ep: ep, epf: epf, rc: rc, conns: make(map[int32]*conn), events: make([]syscall.EpollEvent, 256)}, nil
}

// adopt hands c to the loop, if it is a plain TCP connection; false
// leaves it to a goroutine. It runs on the accepting goroutine.
func (lp *loop) adopt(c *conn) bool {
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	fd := -1
	if err := raw.Control(func(d uintptr) { fd, err = dupCloexec(int(d)) }); err != nil || fd < 0 {
		return false
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return false
	}
	// The original leaves Go's poller; the duplicate is the loop's.
	tc.Close()
	c.fd = fd
	c.readable = true
	c.mu.Lock()
	c.lp = lp
	c.mu.Unlock()
	lp.mu.Lock()
	if lp.closed {
		lp.mu.Unlock()
		syscall.Close(fd)
		c.fd = -1
		c.end()
		return true
	}
	lp.incoming = append(lp.incoming, c)
	lp.s.onLoops.Add(1)
	lp.kick()
	lp.mu.Unlock()
	return true
}

func dupCloexec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// wake queues c, whose awaited reply arrived, for the loop. It runs on the
// backend's goroutine and never blocks.
func (lp *loop) wake(c *conn) {
	lp.mu.Lock()
	lp.ready = append(lp.ready, c)
	if !lp.signalled {
		lp.signalled = true
		lp.kick()
	}
	lp.mu.Unlock()
}

// kick makes the loop's sleep, or its next one, return at once. After
// close it does nothing (the file is closed).
func (lp *loop) kick() {
	lp.epf.SetReadDeadline(longAgo)
}

// longAgo is a deadline that has passed.
var longAgo = time.Unix(1, 0)

// run serves the loop's connections until the server closes.
func (lp *loop) run() {
	defer lp.s.wg.Done()
	defer lp.close()
	for {
		n := lp.wait(len(lp.again) == 0)
		if lp.s.closing.Load() {
			return
		}
		again := lp.again
		lp.again, lp.againSpare = lp.againSpare, nil
		for _, c := range again {
			if c.fd >= 0 && lp.conns[int32(c.fd)] == c {
				lp.step(c)
			}
		}
		clear(again)
		lp.againSpare = again[:0]
		for _, ev := range lp.events[:n] {
			if c := lp.conns[ev.Fd]; c != nil {
				c.readable = true
				if ev.Events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
					// The client's FIN may have come with its last bytes, in
					// one edge: read to the end, not to the first short read.
					c.hup = true
				}
				lp.step(c)
			}
		}
		lp.mu.Lock()
		ready, incoming := lp.ready, lp.incoming
		lp.ready, lp.incoming, lp.spare = lp.spare, nil, nil
		lp.signalled = false
		lp.mu.Unlock()
		for _, c := range incoming {
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | -syscall.EPOLLET, Fd: int32(c.fd)}
			if err := syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
				c.log().Warn("resp: event loop: cannot watch connection; closing it", "err", err)
				lp.end(c)
				continue
			}
			lp.conns[int32(c.fd)] = c
			lp.step(c)
		}
		for _, c := range ready {
			if c.fd >= 0 && lp.conns[int32(c.fd)] == c {
				lp.step(c)
			}
		}
		clear(ready)
		lp.spare = ready[:0]
	}
}

// wait returns the number of events in lp.events. If sleep is set and
// there are none, it first sleeps in Go's poller until there are, or
// until kick.
func (lp *loop) wait(sleep bool) int {
	var n int
	var err error
	if !sleep || lp.degraded {
		timeout := 0
		if sleep {
			timeout = 1
		}
		if n, err = syscall.EpollWait(lp.ep, lp.events, timeout); err != nil {
			return 0
		}
		return n
	}
	// One epoll_wait when there are events; when there are none, it and
	// the one after the sleep (Redis makes one blocking call instead). The
	// first must come after RawRead's reset of the descriptor's readiness,
	// not before: an edge between the two would be lost, and with it the
	// events the set already holds.
	err = lp.rc.Read(func(fd uintptr) bool {
		var err error
		if n, err = syscall.EpollWait(int(fd), lp.events, 0); err != nil {
			n = 0
		}
		return n > 0 || lp.s.closing.Load()
	})
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		// kick: clear it before the round takes what it was for (a kick
		// after this sets it again).
		lp.epf.SetReadDeadline(time.Time{})
		n = 0
	case lp.s.closing.Load():
		n = 0
	default:
		lp.s.cfg.Log.Error("resp: event loop: cannot wait in Go's poller; polling every millisecond", "err", err)
		lp.degraded = true
		n = 0
	}
	return n
}

// close ends every connection of the loop and closes the set.
func (lp *loop) close() {
	lp.mu.Lock()
	lp.closed = true
	incoming := lp.incoming
	lp.incoming = nil
	lp.mu.Unlock()
	for _, c := range incoming {
		lp.end(c)
	}
	for _, c := range lp.conns { // lint:order-independent: closing all
		lp.end(c)
	}
	lp.epf.Close()
}

// end closes a loop connection.
func (lp *loop) end(c *conn) {
	lp.leave(c)
	syscall.Close(c.fd)
	c.fd = -1
	c.end()
}

// leave takes c out of the loop's set.
func (lp *loop) leave(c *conn) {
	if lp.conns[int32(c.fd)] == c {
		delete(lp.conns, int32(c.fd))
		syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	}
	lp.s.onLoops.Add(-1)
}

// detach moves c from the loop to a goroutine of its own, which runs args
// first if it is not nil.
func (lp *loop) detach(c *conn, args [][]byte) {
	lp.leave(c)
	lp.s.detached.Add(1)
	f := os.NewFile(uintptr(c.fd), "")
	nc, err := net.FileConn(f) // a duplicate, in Go's poller
	f.Close()
	c.fd = -1
	if err != nil {
		c.log().Warn("resp: event loop: cannot hand connection to a goroutine; closing it", "err", err)
		c.end()
		return
	}
	c.mu.Lock()
	c.lp = nil
	c.mu.Unlock()
	c.s.mu.Lock()
	closed := c.s.closed
	c.nc = nc
	c.s.mu.Unlock()
	if closed {
		// Close has closed the connections it knew of: this one would be
		// left waiting on its socket.
		c.end()
		return
	}
	go c.serve(args)
}

// step advances c as far as it can without waiting: it writes the replies
// in hand, runs the complete commands buffered, and reads the socket once
// nothing is owed; then it sleeps until its next reply (arm) or the
// socket's next bytes.
func (lp *loop) step(c *conn) {
	for reads := 0; ; {
		c.writeReady()
		if !c.quit {
			args, more := lp.runBuffered(c)
			if !more {
				return // ended or detached
			}
			if args != nil {
				lp.detach(c, args)
				return
			}
		}
		c.sendUnsent()
		c.writeReady()
		if err := c.w.Flush(); err != nil {
			c.log().Debug("resp: write", "err", err)
			lp.end(c)
			return
		}
		if len(c.overflow) > 0 {
			lp.detach(c, nil) // a client slow to read its replies
			return
		}
		if len(c.pending) > 0 {
			if c.arm() {
				return
			}
			continue
		}
		// Nothing is owed.
		c.reportHits()
		c.release()
		if c.quit {
			lp.end(c)
			return
		}
		if buf, _ := c.br.Peek(c.br.Buffered()); len(buf) > 0 {
			if _, _, st := scanCommand(buf, c.rd.MaxArgBytes, c.rd.MaxMultibulkLen); st != scanIncomplete {
				// Commands read before a limit stopped runBuffered (at
				// maxInflight, or replies already in hand): run them now,
				// as no edge of the socket will come for them.
				continue
			}
		}
		if c.eof {
			lp.end(c)
			return
		}
		if !c.readable {
			return
		}
		if reads == maxReadsPerStep {
			// Other connections' turn: this one goes on after them.
			lp.again = append(lp.again, c)
			return
		}
		reads++
		switch _, err := c.br.Peek(c.br.Buffered() + 1); {
		case err == nil, err == errWouldBlock, err == io.EOF:
			// Run what arrived; at the end of input, then close.
		case err == bufio.ErrBufferFull:
			lp.detach(c, nil) // a command larger than the buffer
			return
		default:
			c.log().Debug("resp: read", "err", err)
			lp.end(c)
			return
		}
	}
}

// runBuffered runs the complete commands in c's read buffer, within the
// limits a goroutine's connection keeps (maxInflight, the output and
// buffer budgets). It returns more false if it ended c, and the args of a
// command a goroutine must run.
func (lp *loop) runBuffered(c *conn) (args [][]byte, more bool) {
	for !c.quit {
		// As serve drains first: with replies owed, at maxInflight or over
		// the output limits, wait for them (a goroutine's connection reads
		// on once it has written what it owes).
		if len(c.pending) > 0 && (len(c.pending) >= maxInflight || c.overOutputLimit()) {
			return nil, true
		}
		buf, _ := c.br.Peek(c.br.Buffered())
		size, nargs, st := scanCommand(buf, c.rd.MaxArgBytes, c.rd.MaxMultibulkLen)
		switch st {
		case scanIncomplete:
			if c.br.Buffered() == c.br.Size() {
				lp.detach(c, nil) // a command larger than the buffer
				return nil, false
			}
			return nil, true
		case scanOther:
			lp.detach(c, nil) // an inline command, or one the Reader must judge
			return nil, false
		}
		if !c.loopRoom(int64(size) + int64(nargs)*ArgOverheadBytes) {
			if len(c.pending) > 0 {
				return nil, true // replies owed will make room
			}
			lp.detach(c, nil)
			return nil, false
		}
		a, err := c.rd.ReadCommand()
		if err != nil {
			var pe *ProtocolError
			var ce *CommandError
			switch {
			case errors.As(err, &ce):
				c.s.buffered.Add(-c.rd.TakeCommandBytes())
				c.replyError(ce.Msg)
				continue
			case errors.As(err, &pe):
				c.log().Info("resp: protocol error; closing connection", "err", pe.Msg)
				c.quit = true
				c.reply(func(w *Writer) { w.WriteError(pe.Error()) })
				return nil, true
			}
			c.log().Error("resp: event loop: reading a complete command failed; closing connection", "err", err)
			lp.end(c)
			return nil, false
		}
		c.held += c.rd.TakeCommandBytes()
		if !c.loopSafe(a) {
			return a, true
		}
		c.exec(a)
	}
	return nil, true
}

// loopRead reads the socket of a loop connection once.
func (c *conn) loopRead(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			c.readable = false
			return 0, errWouldBlock
		case err != nil:
			return 0, err
		case n == 0:
			c.readable, c.eof = false, true
			return 0, io.EOF
		}
		if n < len(p) && !c.hup {
			c.readable = false // a stream socket's short read took all it had
		}
		return n, nil
	}
}

// loopWrite writes p to the socket of a loop connection. What the socket
// will not take at once is kept in c.overflow, for the goroutine the
// connection then moves to.
func (c *conn) loopWrite(p []byte) (int, error) {
	if len(c.overflow) > 0 {
		c.overflow = append(c.overflow, p...)
		return len(p), nil
	}
	for n := 0; n < len(p); {
		m, err := syscall.Write(c.fd, p[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			c.overflow = append(c.overflow, p[n:]...)
			return len(p), nil
		case err != nil:
			return n, err
		}
		n += m
	}
	return len(p), nil
}
