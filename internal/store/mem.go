package store

import (
	"math/rand/v2"
	"sort"
)

// Mem is an in-memory Engine with crash semantics: Puts are visible at once
// but only those covered by a Sync survive Crash, like Pebble's
// vfs.NewCrashableMem; CrashTorn keeps a prefix of the rest, as a crash in
// the middle of writing a log would. The zero value is not usable; call
// NewMem.
type Mem struct {
	durable map[string]Record
	pending map[string]Record // written since the last Sync
	log     []memWrite        // the same writes, in order (CrashTorn)
}

type memWrite struct {
	key string
	rec Record
}

// NewMem returns an empty in-memory engine.
func NewMem() *Mem {
	return &Mem{durable: make(map[string]Record), pending: make(map[string]Record)}
}

// Get implements Store.
func (m *Mem) Get(key string) (Record, bool, error) {
	if len(m.pending) > 0 { // empty but within a handler that wrote: one lookup
		if r, ok := m.pending[key]; ok {
			return r, true, nil
		}
	}
	r, ok := m.durable[key]
	return r, ok, nil
}

// Put implements Store.
func (m *Mem) Put(key string, rec Record) error {
	m.pending[key] = rec
	m.log = append(m.log, memWrite{key, rec})
	return nil
}

// Sync implements Engine.
// It replays the log rather than ranging over pending: ranging over and
// clearing a map costs its capacity, which one large batch of writes
// leaves high for every later Sync; the log's last write of a key is its
// pending record.
func (m *Mem) Sync() error {
	for _, w := range m.log {
		m.durable[w.key] = w.rec
	}
	m.forget()
	return nil
}

// forget drops the unsynced writes.
func (m *Mem) forget() {
	for _, w := range m.log {
		delete(m.pending, w.key)
	}
	clear(m.log)
	m.log = m.log[:0]
}

// Unsynced reports how many keys have writes that a crash would lose.
func (m *Mem) Unsynced() int { return len(m.pending) }

// Crash discards every write not yet synced, as a power loss would.
func (m *Mem) Crash() { m.forget() }

// CrashTorn is a crash while the unsynced writes were reaching the disk in
// the order they were made (a write-ahead log): a prefix of them, of a
// length drawn from r, survives; the rest is lost.
func (m *Mem) CrashTorn(r *rand.Rand) {
	for _, w := range m.log[:r.IntN(len(m.log)+1)] {
		m.durable[w.key] = w.rec
	}
	m.forget()
}

// Load stores rec as already durable (bulk loading before a run).
func (m *Mem) Load(key string, rec Record) { m.durable[key] = rec }

// Len reports the number of keys stored.
func (m *Mem) Len() int {
	n := len(m.durable)
	for k := range m.pending {
		if _, ok := m.durable[k]; !ok {
			n++
		}
	}
	return n
}

// Scan implements Lister. It sorts the keys in range on every call: Mem is
// for tests and simulation, not for large stores.
func (m *Mem) Scan(from, to string, fn func(key string, rec Record) bool) error {
	in := func(k string) bool { return k >= from && (to == "" || k < to) }
	var keys []string
	for k := range m.durable { // lint:order-independent: sorted below
		if _, pending := m.pending[k]; !pending && in(k) {
			keys = append(keys, k)
		}
	}
	for k := range m.pending { // lint:order-independent: sorted below
		if in(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, m.latest(k)) {
			break
		}
	}
	return nil
}

func (m *Mem) latest(k string) Record {
	r, _, _ := m.Get(k)
	return r
}

// Close implements Engine.
func (m *Mem) Close() error { return nil }
