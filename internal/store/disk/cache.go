package disk

import "github.com/lightcone/lightcone/internal/store"

// rowCache keeps the latest record (or its absence) of recently read and
// written keys in memory, so hot reads skip Pebble's memtable and block
// lookups (Cassandra's row cache; RocksDB's row cache). It is bounded by
// entries and by value bytes and evicts with the CLOCK approximation of LRU.
// Records handed out are shared: callers must not modify their Value.
type rowCache struct {
	entries map[string]*cacheEntry
	ring    []*cacheEntry // slots for CLOCK
	hand    int
	bytes   int
	maxRows int
	maxByte int
}

type cacheEntry struct {
	key   string
	rec   store.Record
	found bool
	ref   bool // used since the hand last passed
	slot  int
}

func newRowCache(maxRows, maxBytes int) *rowCache {
	return &rowCache{entries: make(map[string]*cacheEntry), maxRows: maxRows, maxByte: maxBytes}
}

func (c *rowCache) get(key string) (store.Record, bool, bool) {
	e := c.entries[key]
	if e == nil {
		return store.Record{}, false, false
	}
	e.ref = true
	return e.rec, e.found, true
}

// put records key's current state; found=false caches an absence.
func (c *rowCache) put(key string, rec store.Record, found bool) {
	if c.maxRows == 0 || len(rec.Value) > c.maxByte/16 {
		c.drop(key) // too big to be worth a slot
		return
	}
	if e := c.entries[key]; e != nil {
		c.bytes += len(rec.Value) - len(e.rec.Value)
		e.rec, e.found, e.ref = rec, found, true
		c.shrink()
		return
	}
	e := &cacheEntry{key: key, rec: rec, found: found}
	if len(c.ring) < c.maxRows {
		e.slot = len(c.ring)
		c.ring = append(c.ring, e)
	} else {
		e.slot = c.claim()
		c.ring[e.slot] = e
	}
	c.entries[key] = e
	c.bytes += len(rec.Value)
	c.shrink()
}

// claim returns a free slot, evicting the first unreferenced entry under
// the hand if there is none.
func (c *rowCache) claim() int {
	for {
		e := c.ring[c.hand]
		switch {
		case e == nil:
			return c.hand
		case e.ref:
			e.ref = false
			c.hand = (c.hand + 1) % len(c.ring)
		default:
			delete(c.entries, e.key)
			c.bytes -= len(e.rec.Value)
			c.ring[c.hand] = nil
			return c.hand
		}
	}
}

func (c *rowCache) shrink() {
	for c.bytes > c.maxByte && len(c.entries) > 0 {
		c.evict()
	}
}

// evict removes one entry (to shed bytes); there must be one.
func (c *rowCache) evict() {
	for {
		e := c.ring[c.hand]
		switch {
		case e == nil:
		case e.ref:
			e.ref = false
		default:
			delete(c.entries, e.key)
			c.bytes -= len(e.rec.Value)
			c.ring[c.hand] = nil
			return
		}
		c.hand = (c.hand + 1) % len(c.ring)
	}
}

func (c *rowCache) drop(key string) {
	if e := c.entries[key]; e != nil {
		delete(c.entries, key)
		c.bytes -= len(e.rec.Value)
		c.ring[e.slot] = nil
	}
}
