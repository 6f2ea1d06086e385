package resp

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
)

// A set is one value (kind 'e'), its members sorted bytewise: every SADD,
// SREM or SPOP rewrites it whole. SMEMBERS replies them in that order
// (Redis's order is its hash table's, which clients must not rely on).

// findMember returns where m is, or would be, in the sorted members.
func (v *value) findMember(m []byte) (int, bool) {
	return slices.BinarySearchFunc(v.elems, m, bytes.Compare)
}

// sadd adds member m to a set, reporting whether it is new.
func (v *value) sadd(m []byte) bool {
	i, ok := v.findMember(m)
	if !ok {
		v.elems = slices.Insert(v.elems, i, m)
	}
	return !ok
}

// srem removes member m from a set, reporting whether it was there.
func (v *value) srem(m []byte) bool {
	i, ok := v.findMember(m)
	if ok {
		v.elems = slices.Delete(v.elems, i, i+1)
	}
	return ok
}

// countOf applies fn to each of ms and counts its true results.
func countOf(ms [][]byte, fn func(m []byte) bool) (n int64) {
	for _, m := range ms {
		if fn(m) {
			n++
		}
	}
	return n
}

// cmdSAdd implements SADD key member...: how many members were new.
func cmdSAdd(c *conn, args [][]byte) {
	c.modifyCount(args[1], kindSet, func(s *value) int64 { return countOf(args[2:], s.sadd) })
}

// cmdSRem implements SREM key member...: how many members were removed.
func cmdSRem(c *conn, args [][]byte) {
	c.modifyCount(args[1], kindSet, func(s *value) int64 { return countOf(args[2:], s.srem) })
}

// cmdSPop implements SPOP key [count]: removes and replies random members
// (one as a bulk string, nil if none; with a count, an array).
func cmdSPop(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.replyError(msgSyntax)
		return
	}
	count, hasCount, ok := c.popCount(args)
	if !ok {
		return
	}
	var popped [][]byte
	ok = c.modifyKind(args[1], kindSet, func(s *value, _ bool) (edit, string) {
		popped = popped[:0]
		for range min(count, int64(len(s.elems))) {
			i := rand.IntN(len(s.elems))
			popped = append(popped, s.elems[i])
			s.elems = slices.Delete(s.elems, i, i+1)
		}
		return putIf(len(popped) > 0), ""
	})
	if !ok {
		return
	}
	c.reply(func(w *Writer) {
		switch {
		case hasCount:
			writeBulks(w, popped)
		case len(popped) == 0:
			w.WriteNull()
		default:
			w.WriteBulk(popped[0])
		}
	})
}

// cmdSRead implements SMEMBERS, SCARD and SISMEMBER.
func cmdSRead(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	c.readKind(args[1], kindSet, func(w *Writer, s value, _ bool) {
		switch name {
		case "smembers":
			writeBulks(w, s.elems)
		case "scard":
			w.WriteInt(int64(len(s.elems)))
		case "sismember":
			_, ok := s.findMember(args[2])
			w.WriteInt(boolInt(ok))
		}
	})
}

// maxRandCount bounds SRANDMEMBER's negative count.
const maxRandCount = 1 << 20

// cmdSRandMember implements SRANDMEMBER key [count]: without a count one
// member or nil; with a positive count that many distinct members (at
// most all); with a negative one, -count members that may repeat.
func cmdSRandMember(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.replyError(msgSyntax)
		return
	}
	var count int64
	hasCount := len(args) == 3
	if hasCount {
		var ok bool
		if count, ok = parseInt(args[2]); !ok {
			c.replyError(msgNotInteger)
			return
		}
		// A negative count asks for that many members, repeats allowed:
		// bound the reply it makes the server build.
		if count < -maxRandCount {
			c.replyError("ERR value is out of range")
			return
		}
	}
	c.readKind(args[1], kindSet, func(w *Writer, s value, _ bool) {
		n := len(s.elems)
		switch {
		case !hasCount && n == 0:
			w.WriteNull()
		case !hasCount:
			w.WriteBulk(s.elems[rand.IntN(n)])
		case n == 0:
			w.WriteArray(0)
		case count < 0:
			w.WriteArray(int(-count))
			for range -count {
				w.WriteBulk(s.elems[rand.IntN(n)])
			}
		default:
			pick := rand.Perm(n)[:min(int(count), n)]
			w.WriteArray(len(pick))
			for _, i := range pick {
				w.WriteBulk(s.elems[i])
			}
		}
	})
}
