package resp

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/wire"
)

// Key listing (SCAN, KEYS, DBSIZE) reads the keys this node holds through
// Config.Scanner (api.Scanner), a page at a time, each page one hand-off to
// the node's event loop. doc.go, "Key listing", states what a listing
// returns for each protocol.

// keysPage is how many stored keys KEYS and DBSIZE examine per hand-off
// to the node.
const keysPage = 1024

// maxCursors bounds the SCAN cursors the server remembers; past it the
// oldest is forgotten, and a client continuing it is told "ERR invalid
// cursor".
const maxCursors = 10000

// cursors maps SCAN's numeric cursors to the Scanner's opaque ones. Redis
// clients (go-redis, redis-cli --scan) parse cursors as integers and may
// continue a scan on another connection of their pool, so cursors are the
// server's, not a connection's.
type cursors struct {
	mu    sync.Mutex
	next  uint64
	pos   map[uint64]scanCursor
	order []uint64 // issue order, for forgetting the oldest
}

type scanCursor struct{ keyspace, pos string }

// save stores a cursor and returns its number (never 0).
func (cs *cursors) save(sc scanCursor) uint64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.pos == nil {
		cs.pos = make(map[uint64]scanCursor)
	}
	for len(cs.pos) >= maxCursors {
		delete(cs.pos, cs.order[0])
		cs.order = cs.order[1:]
	}
	if len(cs.order) > 2*maxCursors { // mostly cursors already taken
		live := cs.order[:0]
		for _, n := range cs.order {
			if _, ok := cs.pos[n]; ok {
				live = append(live, n)
			}
		}
		cs.order = live
	}
	cs.next++
	cs.pos[cs.next] = sc
	cs.order = append(cs.order, cs.next)
	return cs.next
}

// take returns and forgets cursor n.
func (cs *cursors) take(n uint64) (scanCursor, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sc, ok := cs.pos[n]
	delete(cs.pos, n) // its number stays in order until it is the oldest
	return sc, ok
}

// scanFilter is SCAN's MATCH and TYPE.
type scanFilter struct {
	match []byte // nil: every key
	typ   string // "": every type
}

// keep decodes a listed value and reports whether it is listed: not
// expired, of the wanted type, matching the pattern.
func (c *conn) keep(kv api.KeyValue, f scanFilter, nowMs int64) bool {
	if f.match != nil && !matchAll(f.match) && !globMatch(f.match, []byte(kv.Key)) {
		return false
	}
	v, err := decodeValue(kv.Value)
	if err != nil {
		return f.typ == "" // a corrupt envelope is still a key
	}
	return !v.expired(nowMs) && (f.typ == "" || strings.EqualFold(f.typ, typeName(v.kind)))
}

// scanPage reads one page of the connection's keyspace from pos, keeping
// the keys f lets through. It returns an error reply on failure.
func (c *conn) scanPage(pos string, count int, f scanFilter, keys []string) ([]string, string, string) {
	page, next, err := c.s.cfg.Scanner.Scan(c.s.ctx, c.keyspace, pos, count)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			return nil, "", backendError(we)
		}
		return nil, "", "ERR " + err.Error()
	}
	now := c.nowMs()
	for _, kv := range page {
		if c.keep(kv, f, now) {
			keys = append(keys, kv.Key)
		}
	}
	return keys, next, ""
}

// scanAll lists every key f lets through, a page at a time, calling fn
// with each page's keys.
func (c *conn) scanAll(f scanFilter, fn func(keys []string)) bool {
	c.awaitPending()
	pos := ""
	for {
		keys, next, msg := c.scanPage(pos, keysPage, f, nil)
		if msg != "" {
			c.replyError(msg)
			return false
		}
		fn(keys)
		if next == "" {
			return true
		}
		pos = next
	}
}

func (c *conn) canScan() bool {
	if c.s.cfg.Scanner == nil {
		c.replyError(msgNotSupported)
		return false
	}
	return true
}

// cmdKeys implements KEYS pattern.
func cmdKeys(c *conn, args [][]byte) {
	if !c.canScan() {
		return
	}
	var all []string
	if c.scanAll(scanFilter{match: args[1]}, func(keys []string) { all = append(all, keys...) }) {
		c.reply(func(w *Writer) { writeStrings(w, all) })
	}
}

// cmdDBSize implements DBSIZE: the live keys this node holds.
func cmdDBSize(c *conn, _ [][]byte) {
	if !c.canScan() {
		return
	}
	var n int64
	if c.scanAll(scanFilter{}, func(keys []string) { n += int64(len(keys)) }) {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

// cmdScan implements SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]:
// one page of at most COUNT (default 10) stored keys examined.
func cmdScan(c *conn, args [][]byte) {
	if !c.canScan() {
		return
	}
	n, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		c.replyError("ERR invalid cursor")
		return
	}
	count := 10
	var f scanFilter
	for i := 2; i < len(args); i += 2 {
		if i+1 == len(args) {
			c.replyError(msgSyntax)
			return
		}
		switch strings.ToUpper(string(args[i])) {
		case "MATCH":
			f.match = args[i+1]
		case "COUNT":
			v, ok := parseInt(args[i+1])
			if !ok {
				c.replyError(msgNotInteger)
				return
			}
			if v < 1 {
				c.replyError(msgSyntax)
				return
			}
			count = int(min(v, 1<<20))
		case "TYPE":
			f.typ = string(args[i+1])
		default:
			c.replyError(msgSyntax)
			return
		}
	}
	pos := ""
	if n != 0 {
		sc, ok := c.s.scans.take(n)
		if !ok || sc.keyspace != c.keyspace {
			c.replyError("ERR invalid cursor")
			return
		}
		pos = sc.pos
	}
	c.awaitPending()
	keys, next, msg := c.scanPage(pos, count, f, []string{})
	if msg != "" {
		c.replyError(msg)
		return
	}
	cursor := "0"
	if next != "" {
		cursor = strconv.FormatUint(c.s.scans.save(scanCursor{keyspace: c.keyspace, pos: next}), 10)
	}
	c.reply(func(w *Writer) {
		w.WriteArray(2)
		w.WriteBulkString(cursor)
		writeStrings(w, keys)
	})
}

func writeStrings(w *Writer, ss []string) {
	w.WriteArray(len(ss))
	for _, s := range ss {
		w.WriteBulkString(s)
	}
}
