package resp

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// edit is what a read-modify-write command decided about its key.
type edit uint8

const (
	editKeep   edit = iota // write nothing
	editPut                // store the new value
	editDelete             // delete the key
)

// Bounds of modify's retries: a command that loses the race for its key
// this many times in a row gives up with msgContended. An attempt loses
// only to a write of the key that succeeded after its read, so a hundred
// clients each writing a key once all succeed. Between attempts a command
// waits a random time up to 1ms, 2ms, 4ms, ... capped at
// modifyBackoffMax, so that contending clients spread out instead of
// colliding again.
const (
	modifyTries      = 100
	modifyBackoffMax = 32 * time.Millisecond
)

// modify runs one read-modify-write command on key, atomically: it reads
// the key's value and version (found is false when it is absent or
// expired), calls fn with the value, and carries out fn's decision as a
// conditional write (wire.Request.Cond) that applies only if the key is
// still at the version read. If another write came between, the
// conditional write fails with wire.ErrConflict and modify reads again and
// calls fn again, up to modifyTries times. fn refuses by returning a
// non-empty errMsg (replied; nothing written). Since fn may be called more
// than once, it must only compute (old is its own copy, which it may
// change); it may set variables the caller reads after modify returns,
// overwriting them on each call.
//
// A keyspace that opted in to last-writer-wins read-modify-write
// (Config.LastWriterWins) gets a plain put instead: not atomic, two
// clients can both win. A keyspace whose protocol cannot order a key's
// writes refuses the conditional write with ErrInvalid naming the ones
// that can, and the command replies that error.
//
// modify is the one place where read-modify-write commands meet the
// backend: every such command (INCR, SET NX|XX|GET|KEEPTTL, HSET, HDEL,
// ...) goes through it. It reports whether the command succeeded; on
// failure it has replied the error. On success the caller replies.
func (c *conn) modify(key string, fn func(old value, found bool) (nv value, e edit, errMsg string)) bool {
	c.awaitPending()
	lww := c.s.cfg.LastWriterWins != nil && c.s.cfg.LastWriterWins(c.keyspace)
	for try := 1; ; try++ {
		reps, ok := c.call(c.getReq(key, c.read))
		if !ok {
			return false
		}
		old, found, msg := c.decode(reps[0])
		if msg != "" {
			c.replyError(msg)
			return false
		}
		nv, e, msg := fn(old, found)
		if msg != "" {
			c.replyError(msg)
			return false
		}
		var req *wire.Request
		switch e {
		case editKeep:
			return true
		case editPut:
			enc := nv.encode()
			if !c.valueFits(len(enc)) {
				return false
			}
			req = c.putReq(key, enc, c.write)
		case editDelete:
			req = c.delReq(key, c.write)
		}
		if !lww {
			// The version read, even of an expired or deleted value:
			// the write applies only if nothing came in between.
			req.Cond, req.Expected = true, reps[0].Version
		}
		if reps, ok = c.call(req); !ok {
			return false
		}
		err := reps[0].Err
		switch {
		case err == nil:
			return true
		case err.Code != wire.ErrConflict:
			c.replyError(backendError(err))
			return false
		case try == modifyTries:
			c.replyError(fmt.Sprintf("ERR %s: another write of %q came between this command's read and its write %d times in a row; "+
				"nothing was written; retry", msgContended, key, modifyTries))
			return false
		}
		time.Sleep(rand.N(min(time.Millisecond<<min(try-1, 10), modifyBackoffMax)))
	}
}

// msgContended begins the error of a read-modify-write command that kept
// losing the race for its key.
const msgContended = "contended"
