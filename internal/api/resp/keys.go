package resp

import (
	"fmt"
	"strings"

	"github.com/lightcone/lightcone/internal/wire"
)

// msgNotPositive is Redis's reply to a negative count (LPOP, SPOP, ZPOPMIN).
const msgNotPositive = "ERR value is out of range, must be positive"

// readKind reads arg's value for a single-key read and writes the reply
// with write: found is false for an absent or expired key. A value of a
// kind other than kind (0: any kind) is refused with WRONGTYPE.
func (c *conn) readKind(arg []byte, kind byte, write func(w *Writer, v value, found bool)) {
	if r, ok := c.cachedRead(arg); ok {
		c.pending = append(c.pending, pending{rep: r, kind: kind, show: write})
		return
	}
	key, ok := c.key(arg)
	if !ok {
		return
	}
	c.pending = append(c.pending, pending{one: c.submit(c.getReq(key, c.read)), kind: kind, show: write})
}

// cachedRead answers a read of key in the connection's keyspace from the
// replies the backend published (api.CachedReader), when the connection
// has nothing in flight for the read to follow: its earlier commands'
// effects are then all in what the published reply reflects.
func (c *conn) cachedRead(key []byte) (*wire.Reply, bool) {
	if c.cached == nil || len(key) > c.s.cfg.MaxKeyBytes {
		return nil, false
	}
	if (c.owed.Load() > 0 || len(c.unsent) > 0) && !c.s.unsafeCachedInFlight.Load() {
		return nil, false
	}
	r, ok := c.cached.CachedRead(c.keyspace, key, c.read)
	if ok {
		if c.hits > 0 && c.hitLevel != c.read {
			c.cached.CachedReadsServed(c.hitLevel, c.hits)
			c.hits = 0
		}
		c.hits++
		c.hitLevel = c.read
	}
	return r, ok
}

// writeRead writes the reply of a readKind: the error, WRONGTYPE if the
// value is not of kind (0: any), or what show makes of the value.
func (c *conn) writeRead(r *wire.Reply, kind byte, show func(w *Writer, v value, found bool)) {
	v, found, msg := c.decode(r)
	switch {
	case msg != "":
		c.w.WriteError(msg)
	case found && kind != 0 && v.kind != kind:
		c.w.WriteError(msgWrongType)
	default:
		show(c.w, v, found)
	}
}

// modifyKind is modify for a command on one kind of value: a value of
// another kind is refused with WRONGTYPE, an absent one is passed to fn as
// an empty value of kind (found false), and a collection fn leaves empty
// is deleted (or, if it was absent, not written), as Redis deletes empty
// hashes, lists, sets and sorted sets. fn changes v in place and says
// what to do with it.
func (c *conn) modifyKind(arg []byte, kind byte, fn func(v *value, found bool) (edit, string)) bool {
	key, ok := c.key(arg)
	if !ok {
		return false
	}
	return c.modify(key, func(v value, found bool) (value, edit, string) {
		if found && v.kind != kind {
			return value{}, editKeep, msgWrongType
		}
		if !found {
			v = value{kind: kind}
		}
		e, msg := fn(&v, found)
		if msg != "" {
			return value{}, editKeep, msg
		}
		if e == editPut && v.empty() {
			e = editKeep
			if found {
				e = editDelete
			}
		}
		return v, e, ""
	})
}

// empty reports whether v is a collection with no elements.
func (v *value) empty() bool {
	switch v.kind {
	case kindHash:
		return len(v.fields) == 0
	case kindList, kindSet:
		return len(v.elems) == 0
	case kindZSet:
		return len(v.zs) == 0
	}
	return false
}

// popCount parses a pop's optional count (LPOP, SPOP, ZPOPMIN key
// [count]): a non-negative integer, 1 if absent. It replies the error and
// returns ok false on failure.
func (c *conn) popCount(args [][]byte) (count int64, hasCount, ok bool) {
	if len(args) < 3 {
		return 1, false, true
	}
	n, ok := parseInt(args[2])
	if !ok || n < 0 {
		c.replyError(msgNotPositive)
		return 0, true, false
	}
	return n, true, true
}

// putIf is the edit of a command that changed its value only if changed.
func putIf(changed bool) edit {
	if changed {
		return editPut
	}
	return editKeep
}

// modifyCount runs a command that replies how many elements fn changed
// (SADD, SREM, ZREM): the value is written only if that is not zero.
func (c *conn) modifyCount(arg []byte, kind byte, fn func(v *value) int64) {
	var n int64
	ok := c.modifyKind(arg, kind, func(v *value, _ bool) (edit, string) {
		n = fn(v)
		return putIf(n != 0), ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

// cmdType implements TYPE key.
func cmdType(c *conn, args [][]byte) {
	c.readKind(args[1], 0, func(w *Writer, v value, found bool) {
		if !found {
			w.WriteSimple("none")
		} else {
			w.WriteSimple(typeName(v.kind))
		}
	})
}

// expireOptions are EXPIRE's conditions (Redis 7).
type expireOptions struct{ nx, xx, gt, lt bool }

func parseExpireOptions(opts [][]byte) (expireOptions, string) {
	var o expireOptions
	for _, a := range opts {
		switch strings.ToUpper(string(a)) {
		case "NX":
			o.nx = true
		case "XX":
			o.xx = true
		case "GT":
			o.gt = true
		case "LT":
			o.lt = true
		default:
			return o, fmt.Sprintf("ERR Unsupported option %s", clip(a, 128))
		}
	}
	switch {
	case o.nx && (o.xx || o.gt || o.lt):
		return o, "ERR NX and XX, GT or LT options at the same time are not compatible"
	case o.gt && o.lt:
		return o, "ERR GT and LT options at the same time are not compatible"
	}
	return o, ""
}

// allows reports whether o lets a value expiring at cur (0: never) be
// given the expiry at. No expiry counts as an infinite TTL, as in Redis.
func (o expireOptions) allows(cur, at int64) bool {
	switch {
	case o.nx:
		return cur == 0
	case o.xx && cur == 0:
		return false
	case o.gt:
		return cur != 0 && at > cur
	case o.lt:
		return cur == 0 || at < cur
	}
	return true
}

// expiryAt turns EXPIRE's argument into absolute Unix milliseconds: n is
// seconds unless ms, relative to nowMs unless abs. Overflow is refused as
// Redis refuses it.
func expiryAt(n int64, ms, abs bool, nowMs int64, cmd string) (int64, string) {
	invalid := fmt.Sprintf("ERR invalid expire time in '%s' command", cmd)
	if !ms {
		if n > (1<<63-1)/1000 || n < -1<<63/1000 {
			return 0, invalid
		}
		n *= 1000
	}
	if !abs {
		// nowMs is positive: only a positive n can overflow.
		if n > 0 && n > 1<<63-1-nowMs {
			return 0, invalid
		}
		n += nowMs
	}
	return n, ""
}

// cmdExpire implements EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT key n
// [NX|XX|GT|LT]: 1 if the expiry was set, 0 if the key is absent or the
// condition failed. An expiry not in the future deletes the key.
func cmdExpire(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	n, ok := parseInt(args[2])
	if !ok {
		c.replyError(msgNotInteger)
		return
	}
	o, msg := parseExpireOptions(args[3:])
	if msg != "" {
		c.replyError(msg)
		return
	}
	nowMs := c.nowMs()
	at, msg := expiryAt(n, strings.HasPrefix(name, "p"), strings.HasSuffix(name, "at"), nowMs, name)
	if msg != "" {
		c.replyError(msg)
		return
	}
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var set bool
	ok = c.modify(key, func(v value, found bool) (value, edit, string) {
		set = found && o.allows(v.expiryMs, at)
		switch {
		case !set:
			return value{}, editKeep, ""
		case at <= nowMs:
			return value{}, editDelete, ""
		}
		v.expiryMs = at
		return v, editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(boolInt(set)) })
	}
}

// cmdPersist implements PERSIST key: 1 if an expiry was removed.
func cmdPersist(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var had bool
	ok = c.modify(key, func(v value, found bool) (value, edit, string) {
		had = found && v.expiryMs != 0
		if !had {
			return value{}, editKeep, ""
		}
		v.expiryMs = 0
		return v, editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(boolInt(had)) })
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
