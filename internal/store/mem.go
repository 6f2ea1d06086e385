package store

// Mem is an in-memory Engine with crash semantics: Puts are visible at once
// but only those covered by a Sync survive Crash, like Pebble's
// vfs.NewCrashableMem. The zero value is not usable; call NewMem.
type Mem struct {
	durable map[string]Record
	pending map[string]Record // written since the last Sync
}

// NewMem returns an empty in-memory engine.
func NewMem() *Mem {
	return &Mem{durable: make(map[string]Record), pending: make(map[string]Record)}
}

// Get implements Store.
func (m *Mem) Get(key string) (Record, bool, error) {
	if r, ok := m.pending[key]; ok {
		return r, true, nil
	}
	r, ok := m.durable[key]
	return r, ok, nil
}

// Put implements Store.
func (m *Mem) Put(key string, rec Record) error {
	m.pending[key] = rec
	return nil
}

// Sync implements Engine.
func (m *Mem) Sync() error {
	for k, r := range m.pending { // order irrelevant: distinct keys
		m.durable[k] = r
	}
	clear(m.pending)
	return nil
}

// Unsynced reports how many keys have writes that a crash would lose.
func (m *Mem) Unsynced() int { return len(m.pending) }

// Crash discards every write not yet synced, as a power loss would.
func (m *Mem) Crash() { clear(m.pending) }

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

// Close implements Engine.
func (m *Mem) Close() error { return nil }
