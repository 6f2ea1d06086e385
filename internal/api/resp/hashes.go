package resp

import (
	"strconv"
	"strings"
)

// cmdHIncrBy implements HINCRBY key field increment.
func cmdHIncrBy(c *conn, args [][]byte) {
	delta, ok := parseInt(args[3])
	if !ok {
		c.replyError(msgNotInteger)
		return
	}
	var n int64
	ok = c.modifyKind(args[1], kindHash, func(h *value, _ bool) (edit, string) {
		var cur int64
		if i, ok := h.find(args[2]); ok {
			if cur, ok = parseInt(h.fields[i].val); !ok {
				return editKeep, msgHashNotInt
			}
		}
		if delta > 0 && cur > 1<<63-1-delta || delta < 0 && cur < -1<<63-delta {
			return editKeep, msgOverflow
		}
		n = cur + delta
		h.set(args[2], strconv.AppendInt(nil, n, 10))
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

// cmdHIncrByFloat implements HINCRBYFLOAT key field increment.
func cmdHIncrByFloat(c *conn, args [][]byte) {
	if _, ok := parseFloat(args[3]); !ok {
		c.replyError(msgNotFloat)
		return
	}
	var out []byte
	ok := c.modifyKind(args[1], kindHash, func(h *value, _ bool) (edit, string) {
		var cur []byte
		i, found := h.find(args[2])
		if found {
			cur = h.fields[i].val
		}
		var msg string
		if out, msg = addFloat(cur, found, args[3], msgHashNotFlot); msg != "" {
			return editKeep, msg
		}
		h.set(args[2], out)
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteBulk(out) })
	}
}

// cmdHSetNX implements HSETNX key field value: 1 if it set the field.
func cmdHSetNX(c *conn, args [][]byte) {
	var set bool
	ok := c.modifyKind(args[1], kindHash, func(h *value, _ bool) (edit, string) {
		if _, exists := h.find(args[2]); exists {
			set = false
			return editKeep, ""
		}
		set = h.set(args[2], args[3])
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(boolInt(set)) })
	}
}

// cmdHList implements HKEYS and HVALS.
func cmdHList(c *conn, args [][]byte) {
	vals := strings.EqualFold(string(args[0]), "hvals")
	c.readKind(args[1], kindHash, func(w *Writer, h value, _ bool) {
		w.WriteArray(len(h.fields))
		for _, f := range h.fields {
			if vals {
				w.WriteBulk(f.val)
			} else {
				w.WriteBulk(f.name)
			}
		}
	})
}

// cmdHStrlen implements HSTRLEN key field.
func cmdHStrlen(c *conn, args [][]byte) {
	c.readKind(args[1], kindHash, func(w *Writer, h value, _ bool) {
		n := 0
		if i, ok := h.find(args[2]); ok {
			n = len(h.fields[i].val)
		}
		w.WriteInt(int64(n))
	})
}
