package resp

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Float errors, worded as Redis words them.
const (
	msgNotFloat    = "ERR value is not a valid float"
	msgNaNOrInfty  = "ERR increment would produce NaN or Infinity"
	msgHashNotInt  = "ERR hash value is not an integer"
	msgHashNotFlot = "ERR hash value is not a float"
)

// parseFloat parses a float as Redis's string2ld does: no spaces, no NaN.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || b[len(b)-1] == ' ' || strings.ContainsRune(string(b), '_') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !isRange(err) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// addFloat adds incr to the float cur (0 if not found) for INCRBYFLOAT
// and HINCRBYFLOAT, returning the sum as they store and reply it, or the
// error reply (notFloat if cur is not a float). Redis adds in C's long
// double, x87's 64-bit mantissa, and formats the sum with "%.17Lf" less
// trailing zeros; big.Float at 64 bits of precision rounds the same way,
// so the digits match Redis's ("10.6" + "5000" is "5010.60000000000000009").
func addFloat(cur []byte, found bool, incr []byte, notFloat string) ([]byte, string) {
	sum, ok := parseLongDouble(incr)
	if !ok {
		return nil, msgNotFloat
	}
	if found {
		f, ok := parseLongDouble(cur)
		if !ok {
			return nil, notFloat
		}
		sum.Add(sum, f)
	}
	if sum.IsInf() {
		return nil, msgNaNOrInfty
	}
	out := sum.Text('f', 17)
	if strings.Contains(out, ".") {
		out = strings.TrimSuffix(strings.TrimRight(out, "0"), ".")
	}
	if out == "-0" {
		out = "0"
	}
	return []byte(out), ""
}

// longDoubleBits is the mantissa of C's long double on x86.
const longDoubleBits = 64

// parseLongDouble parses b as Redis's string2ld does, rounded to a long
// double's mantissa.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if _, ok := parseFloat(b); !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(b), 10, longDoubleBits, big.ToNearestEven)
	return f, err == nil
}

// cmdSetEx implements SETEX key seconds value and PSETEX key ms value.
func cmdSetEx(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	unit := "EX"
	if name == "psetex" {
		unit = "PX"
	}
	n, ok := parseInt(args[2])
	if !ok {
		c.replyError(msgNotInteger)
		return
	}
	if n <= 0 {
		c.replyError("ERR invalid expire time in '" + name + "' command")
		return
	}
	cmdSet(c, [][]byte{[]byte("set"), args[1], args[3], []byte(unit), args[2]})
}

// cmdSetNX implements SETNX key value: 1 if it set the key.
func cmdSetNX(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok || !c.valueFits(len(args[2])) {
		return
	}
	var set bool
	ok = c.modify(key, func(_ value, found bool) (value, edit, string) {
		set = !found
		if found {
			return value{}, editKeep, ""
		}
		return value{kind: kindString, str: args[2]}, editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(boolInt(set)) })
	}
}

// cmdGetSet implements GETSET key value: SET key value GET.
func cmdGetSet(c *conn, args [][]byte) {
	cmdSet(c, [][]byte{[]byte("set"), args[1], args[2], []byte("GET")})
}

// cmdGetDel implements GETDEL key: the string's value, deleting it.
func cmdGetDel(c *conn, args [][]byte) {
	c.getModify(args[1], func(*value) edit { return editDelete })
}

// getModify replies the string at arg (nil if absent) and changes it as
// fn decides. A value of another kind is WRONGTYPE.
func (c *conn) getModify(arg []byte, fn func(v *value) edit) {
	key, ok := c.key(arg)
	if !ok {
		return
	}
	var old value
	var found bool
	ok = c.modify(key, func(v value, f bool) (value, edit, string) {
		old, found = v, f
		switch {
		case !found:
			return value{}, editKeep, ""
		case v.kind != kindString:
			return value{}, editKeep, msgWrongType
		}
		nv := v
		return nv, fn(&nv), ""
	})
	if ok {
		c.reply(func(w *Writer) { writeString(w, old, found) })
	}
}

func writeString(w *Writer, v value, found bool) {
	if found {
		w.WriteBulk(v.str)
	} else {
		w.WriteNull()
	}
}

// cmdGetEx implements GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]: GET,
// changing the expiry if an option says so.
func cmdGetEx(c *conn, args [][]byte) {
	opts := args[2:]
	persist := len(opts) == 1 && strings.EqualFold(string(opts[0]), "persist")
	nowMs := c.nowMs()
	var o setOptions
	if !persist {
		var msg string
		o, msg = parseSetOptions(opts, nowMs)
		switch {
		case msg == "" && (o.nx || o.xx || o.get || o.keepTTL):
			msg = msgSyntax
		case strings.HasPrefix(msg, "ERR invalid expire time"):
			msg = "ERR invalid expire time in 'getex' command"
		}
		if msg != "" {
			c.replyError(msg)
			return
		}
		if o.expiryMs == 0 {
			c.readKind(args[1], kindString, writeString)
			return
		}
	}
	c.getModify(args[1], func(v *value) edit {
		if o.expiryMs != 0 && o.expiryMs <= nowMs {
			return editDelete
		}
		v.expiryMs = o.expiryMs // 0 for PERSIST
		return editPut
	})
}

// cmdAppend implements APPEND key value: the new length. The value keeps
// its TTL.
func cmdAppend(c *conn, args [][]byte) {
	var n int64
	ok := c.modifyKind(args[1], kindString, func(v *value, _ bool) (edit, string) {
		s := make([]byte, 0, len(v.str)+len(args[2]))
		v.str = append(append(s, v.str...), args[2]...)
		n = int64(len(v.str))
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

// cmdStrlen implements STRLEN key.
func cmdStrlen(c *conn, args [][]byte) {
	c.readKind(args[1], kindString, func(w *Writer, v value, _ bool) { w.WriteInt(int64(len(v.str))) })
}

// cmdIncrByFloat implements INCRBYFLOAT key increment. The value keeps
// its TTL.
func cmdIncrByFloat(c *conn, args [][]byte) {
	var out []byte
	ok := c.modifyKind(args[1], kindString, func(v *value, found bool) (edit, string) {
		var msg string
		if out, msg = addFloat(v.str, found, args[2], msgNotFloat); msg != "" {
			return editKeep, msg
		}
		v.str = out
		return editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteBulk(out) })
	}
}
