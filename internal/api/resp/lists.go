package resp

import (
	"slices"
	"strings"
)

// A list is one value (kind 'l'): every push or pop rewrites it whole, so
// its size counts against MaxValueBytes.

// cmdPush implements LPUSH, RPUSH, LPUSHX and RPUSHX key element...: the
// list's length after the push. The X forms push only onto an existing
// list.
func cmdPush(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	left, onlyExisting := name[0] == 'l', strings.HasSuffix(name, "x")
	var n int64
	ok := c.modifyKind(args[1], kindList, func(l *value, found bool) (edit, string) {
		if onlyExisting && !found {
			n = 0
			return editKeep, ""
		}
		elems := args[2:]
		if left {
			front := slices.Clone(elems)
			slices.Reverse(front)
			l.elems = append(front, l.elems...)
		} else {
			l.elems = append(slices.Clip(l.elems), elems...)
		}
		n = int64(len(l.elems))
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

// cmdPop implements LPOP and RPOP key [count]. Without a count the reply
// is the element or nil; with one, an array, nil for a missing key.
func cmdPop(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.replyError(wrongArity(strings.ToLower(string(args[0]))))
		return
	}
	left := args[0][0] == 'l' || args[0][0] == 'L'
	count, hasCount, ok := c.popCount(args)
	if !ok {
		return
	}
	var popped [][]byte
	var found bool
	ok = c.modifyKind(args[1], kindList, func(l *value, f bool) (edit, string) {
		found = f
		k := min(int(count), len(l.elems))
		if left {
			popped, l.elems = l.elems[:k], l.elems[k:]
		} else {
			popped, l.elems = l.elems[len(l.elems)-k:], l.elems[:len(l.elems)-k]
			slices.Reverse(popped)
		}
		return putIf(k > 0), ""
	})
	if !ok {
		return
	}
	c.reply(func(w *Writer) {
		switch {
		case !hasCount && len(popped) == 0:
			w.WriteNull()
		case !hasCount:
			w.WriteBulk(popped[0])
		case !found:
			w.WriteNullArray()
		default:
			writeBulks(w, popped)
		}
	})
}

func writeBulks(w *Writer, bs [][]byte) {
	w.WriteArray(len(bs))
	for _, b := range bs {
		w.WriteBulk(b)
	}
}

// span turns Redis's inclusive start and stop indexes (negative: from the
// end) into a slice's bounds over n elements; lo >= hi when empty.
func span(start, stop int64, n int) (lo, hi int) {
	if start < 0 {
		start += int64(n)
	}
	if stop < 0 {
		stop += int64(n)
	}
	start = max(start, 0)
	stop = min(stop, int64(n)-1)
	if start > stop {
		return 0, 0
	}
	return int(start), int(stop) + 1
}

// parseSpan parses LRANGE's and ZRANGE's start and stop.
func parseSpan(a, b []byte) (start, stop int64, ok bool) {
	start, ok1 := parseInt(a)
	stop, ok2 := parseInt(b)
	return start, stop, ok1 && ok2
}

// cmdLRange implements LRANGE key start stop.
func cmdLRange(c *conn, args [][]byte) {
	start, stop, ok := parseSpan(args[2], args[3])
	if !ok {
		c.replyError(msgNotInteger)
		return
	}
	c.readKind(args[1], kindList, func(w *Writer, l value, _ bool) {
		lo, hi := span(start, stop, len(l.elems))
		writeBulks(w, l.elems[lo:hi])
	})
}

// cmdLLen implements LLEN key.
func cmdLLen(c *conn, args [][]byte) {
	c.readKind(args[1], kindList, func(w *Writer, l value, _ bool) { w.WriteInt(int64(len(l.elems))) })
}

// cmdLIndex implements LINDEX key index.
func cmdLIndex(c *conn, args [][]byte) {
	i, ok := parseInt(args[2])
	if !ok {
		c.replyError(msgNotInteger)
		return
	}
	c.readKind(args[1], kindList, func(w *Writer, l value, _ bool) {
		j := i
		if j < 0 {
			j += int64(len(l.elems))
		}
		if j < 0 || j >= int64(len(l.elems)) {
			w.WriteNull()
		} else {
			w.WriteBulk(l.elems[j])
		}
	})
}
