package resp

import "github.com/lightcone/lightcone/internal/wire"

// edit is what a read-modify-write command decided about its key.
type edit uint8

const (
	editKeep   edit = iota // write nothing
	editPut                // store the new value
	editDelete             // delete the key
)

// modify runs one read-modify-write command on key: it reads the key's
// value (found is false when it is absent or expired), calls fn with it,
// and carries out fn's decision. fn refuses by returning a non-empty
// errMsg (replied; nothing written). fn may be called more than once (a
// conditional write that lost a race is retried on the new value), so it
// must only compute (old is its own copy, which it may change): it may set variables the caller reads after modify
// returns, overwriting them on each call.
//
// modify is the one place where read-modify-write commands meet the
// backend: every such command (INCR, SET NX|XX|GET|KEEPTTL, HSET, HDEL,
// ...) goes through it, so that making it atomic makes them all atomic.
// Today it is a get followed by a put or delete, NOT atomic (doc.go,
// "Not atomic").
//
// It reports whether the command succeeded; on failure it has replied
// the error. On success the caller replies.
func (c *conn) modify(key string, fn func(old value, found bool) (nv value, e edit, errMsg string)) bool {
	c.awaitPending()
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
	if reps, ok = c.call(req); !ok {
		return false
	}
	if msg, failed := firstError(reps); failed {
		c.replyError(msg)
		return false
	}
	return true
}
