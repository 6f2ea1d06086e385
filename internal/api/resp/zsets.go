package resp

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A sorted set is one value (kind 'z'), its members in (score, member)
// order: every write rewrites it whole. Finding a member by name is a
// linear search.

// zless orders sorted-set members by score, then bytewise by member.
func zless(a, b zmember) bool {
	return a.score < b.score || a.score == b.score && bytes.Compare(a.member, b.member) < 0
}

func zcmp(a, b zmember) int {
	switch {
	case zless(a, b):
		return -1
	case zless(b, a):
		return 1
	}
	return 0
}

// zfind returns the index of member, if present.
func (v *value) zfind(member []byte) (int, bool) {
	i := slices.IndexFunc(v.zs, func(z zmember) bool { return bytes.Equal(z.member, member) })
	return i, i >= 0
}

// zput sets member's score, adding the member if it is new.
func (v *value) zput(member []byte, score float64) {
	v.zrem(member)
	z := zmember{score: score, member: member}
	i, _ := slices.BinarySearchFunc(v.zs, z, zcmp)
	v.zs = slices.Insert(v.zs, i, z)
}

// formatScore formats a score as Redis 7.0 replies it: an integral score
// within ±2^52 as an integer, others with 17 significant digits.
func formatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	case f == 0 && math.Signbit(f):
		return []byte("-0")
	case f > -(1<<52-1) && f < 1<<52 && f == math.Trunc(f):
		return strconv.AppendInt(nil, int64(f), 10)
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

const (
	msgZNaN        = "ERR resulting score is not a number (NaN)"
	msgZRangeFloat = "ERR min or max is not a float"
)

// zaddOptions are ZADD's flags.
type zaddOptions struct{ nx, xx, gt, lt, ch, incr bool }

// cmdZAdd implements ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member...
// (and ZINCRBY key increment member, which is ZADD INCR): the number of
// members added (with CH, added or changed); with INCR the new score, or
// nil if a condition refused it.
func cmdZAdd(c *conn, args [][]byte) {
	var o zaddOptions
	rest := args[2:]
	if strings.EqualFold(string(args[0]), "zincrby") {
		o.incr = true
	} else {
		for ; len(rest) > 0; rest = rest[1:] {
			switch strings.ToUpper(string(rest[0])) {
			case "NX":
				o.nx = true
			case "XX":
				o.xx = true
			case "GT":
				o.gt = true
			case "LT":
				o.lt = true
			case "CH":
				o.ch = true
			case "INCR":
				o.incr = true
			default:
				goto pairs
			}
		}
	}
pairs:
	switch {
	case len(rest)%2 != 0 || len(rest) == 0:
		c.replyError(msgSyntax)
		return
	case o.nx && o.xx:
		c.replyError("ERR XX and NX options at the same time are not compatible")
		return
	case o.nx && (o.gt || o.lt) || o.gt && o.lt:
		c.replyError("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case o.incr && len(rest) > 2:
		c.replyError("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, len(rest)/2)
	for i := range scores {
		var ok bool
		if scores[i], ok = parseFloat(rest[2*i]); !ok {
			c.replyError(msgNotFloat)
			return
		}
	}
	var added, changed int64
	var score float64
	var refused bool
	ok := c.modifyKind(args[1], kindZSet, func(z *value, _ bool) (edit, string) {
		added, changed, refused = 0, 0, false
		for i, s := range scores {
			member := rest[2*i+1]
			j, exists := z.zfind(member)
			if exists && o.nx || !exists && o.xx {
				refused = true
				continue
			}
			if exists {
				cur := z.zs[j].score
				if o.incr {
					if s += cur; math.IsNaN(s) {
						return editKeep, msgZNaN
					}
				}
				if o.gt && s <= cur || o.lt && s >= cur {
					refused = true
					continue
				}
				if s != cur {
					changed++
				}
			} else {
				added++
			}
			score = s
			z.zput(member, s)
		}
		return putIf(added+changed > 0), ""
	})
	if !ok {
		return
	}
	c.reply(func(w *Writer) {
		switch {
		case o.incr && refused:
			w.WriteNull()
		case o.incr:
			w.WriteBulk(formatScore(score))
		case o.ch:
			w.WriteInt(added + changed)
		default:
			w.WriteInt(added)
		}
	})
}

// zrem removes member m, reporting whether it was there.
func (v *value) zrem(m []byte) bool {
	i, ok := v.zfind(m)
	if ok {
		v.zs = slices.Delete(v.zs, i, i+1)
	}
	return ok
}

// cmdZRem implements ZREM key member...: how many members were removed.
func cmdZRem(c *conn, args [][]byte) {
	c.modifyCount(args[1], kindZSet, func(z *value) int64 { return countOf(args[2:], z.zrem) })
}

// cmdZPop implements ZPOPMIN and ZPOPMAX key [count]: the popped members
// and their scores, lowest (highest) first.
func cmdZPop(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.replyError(msgSyntax)
		return
	}
	count, _, ok := c.popCount(args)
	if !ok {
		return
	}
	highest := strings.EqualFold(string(args[0]), "zpopmax")
	var popped []zmember
	ok = c.modifyKind(args[1], kindZSet, func(z *value, _ bool) (edit, string) {
		k := int(min(count, int64(len(z.zs))))
		if highest {
			popped = slices.Clone(z.zs[len(z.zs)-k:])
			slices.Reverse(popped)
			z.zs = z.zs[:len(z.zs)-k]
		} else {
			popped = slices.Clone(z.zs[:k])
			z.zs = z.zs[k:]
		}
		return putIf(k > 0), ""
	})
	if ok {
		c.reply(func(w *Writer) { writeZ(w, popped, true) })
	}
}

// writeZ writes members, each followed by its score if withScores.
func writeZ(w *Writer, zs []zmember, withScores bool) {
	if withScores {
		w.WriteArray(2 * len(zs))
	} else {
		w.WriteArray(len(zs))
	}
	for _, z := range zs {
		w.WriteBulk(z.member)
		if withScores {
			w.WriteBulk(formatScore(z.score))
		}
	}
}

// cmdZRead implements ZSCORE and ZCARD.
func cmdZRead(c *conn, args [][]byte) {
	card := strings.EqualFold(string(args[0]), "zcard")
	c.readKind(args[1], kindZSet, func(w *Writer, z value, _ bool) {
		i, ok := z.zfind(args[len(args)-1])
		switch {
		case card:
			w.WriteInt(int64(len(z.zs)))
		case ok:
			w.WriteBulk(formatScore(z.zs[i].score))
		default:
			w.WriteNull()
		}
	})
}

// scoreBound is one end of a score range: "(" excludes it.
type scoreBound struct {
	f         float64
	exclusive bool
}

func parseScoreBound(b []byte) (scoreBound, bool) {
	var s scoreBound
	if len(b) > 0 && b[0] == '(' {
		s.exclusive, b = true, b[1:]
	}
	f, ok := parseFloat(b)
	s.f = f
	return s, ok
}

func (s scoreBound) aboveMin(f float64) bool { return f > s.f || !s.exclusive && f == s.f }
func (s scoreBound) belowMax(f float64) bool { return f < s.f || !s.exclusive && f == s.f }

// zrange is a parsed ZRANGE.
type zrange struct {
	start, stop   []byte
	byScore, rev  bool
	withScores    bool
	limit         bool
	offset, count int64
}

// cmdZRange implements ZRANGE key start stop [BYSCORE] [REV] [LIMIT offset
// count] [WITHSCORES], ZREVRANGE, ZRANGEBYSCORE and ZREVRANGEBYSCORE.
// BYLEX is not supported.
func cmdZRange(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	r := zrange{start: args[2], stop: args[3], count: -1}
	r.rev = strings.HasPrefix(name, "zrev")
	r.byScore = strings.HasSuffix(name, "byscore")
	for i := 4; i < len(args); i++ {
		switch opt := strings.ToUpper(string(args[i])); {
		case opt == "WITHSCORES":
			r.withScores = true
		case opt == "BYSCORE" && name == "zrange":
			r.byScore = true
		case opt == "REV" && name == "zrange":
			r.rev = true
		case opt == "BYLEX" && name == "zrange":
			c.replyError("ERR ZRANGE BYLEX is not supported by lightcone")
			return
		case opt == "LIMIT" && name != "zrevrange" && i+2 < len(args):
			var ok bool
			if r.offset, r.count, ok = parseSpan(args[i+1], args[i+2]); !ok {
				c.replyError(msgNotInteger)
				return
			}
			r.limit = true
			i += 2
		default:
			c.replyError(msgSyntax)
			return
		}
	}
	if r.limit && !r.byScore {
		c.replyError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	var lo, hi scoreBound
	var start, stop int64
	if r.byScore {
		a, b := r.start, r.stop
		if r.rev {
			a, b = b, a
		}
		var ok1, ok2 bool
		lo, ok1 = parseScoreBound(a)
		hi, ok2 = parseScoreBound(b)
		if !ok1 || !ok2 {
			c.replyError(msgZRangeFloat)
			return
		}
	} else {
		var ok bool
		if start, stop, ok = parseSpan(r.start, r.stop); !ok {
			c.replyError(msgNotInteger)
			return
		}
	}
	c.readKind(args[1], kindZSet, func(w *Writer, z value, _ bool) {
		zs := z.zs
		if r.rev {
			zs = slices.Clone(zs)
			slices.Reverse(zs)
		}
		if !r.byScore {
			i, j := span(start, stop, len(zs))
			writeZ(w, zs[i:j], r.withScores)
			return
		}
		var out []zmember
		for _, m := range zs {
			if lo.aboveMin(m.score) && hi.belowMax(m.score) {
				out = append(out, m)
			}
		}
		if r.limit {
			switch {
			case r.offset < 0 || r.offset >= int64(len(out)):
				out = nil
			default:
				out = out[r.offset:]
				if r.count >= 0 && r.count < int64(len(out)) {
					out = out[:r.count]
				}
			}
		}
		writeZ(w, out, r.withScores)
	})
}
