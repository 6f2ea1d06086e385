package meteor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// A replica keeps several versions of a key (a chain, oldest first): a read
// at view time T returns the newest committed version stamped at or before
// T, and a version stamped before T may still be in flight when a newer one
// has arrived (doc.go, "Reads"). The chain of key is stored under
// chainPrefix+key; compaction (compact) drops what no read can need.
const (
	chainPrefix = "\xffmeteor/v/"
	// closedKey holds a bound above every closure this replica has
	// promised (Replica.closed), so a restart whose clock reads earlier
	// keeps the promise.
	closedKey = "\xffmeteor.closed"
	// stampKey holds a bound above every write stamp this node has issued
	// as a gateway (Replica.stampBound).
	stampKey = "\xffmeteor.stamps"
	// maxChain bounds a decoded chain, so a corrupt length cannot make the
	// decoder allocate without limit.
	maxChain = 1 << 16
)

func chainKey(key string) string { return chainPrefix + key }

// floorPrefix+key holds the key's compaction floor: the newest base below
// which compaction has dropped versions. A replica's applied versions of
// the key above it are all still in its chain, or were known never to
// commit; below it they may be gone. Pull answers carry it.
const floorPrefix = "\xffmeteor/f/"

// floorKey is the key ki's compaction floor is stored under, made once.
func (ki *keyInfo) floorKey(key string) string {
	if ki.floor == "" {
		ki.floor = floorPrefix + key
	}
	return ki.floor
}

// loadFloor returns the compaction floor of key, whose keyInfo is ki (zero:
// never compacted).
func loadFloor(s store.Store, key string, ki *keyInfo) (wire.Version, error) {
	rec, ok, err := s.Get(ki.floorKey(key))
	if err != nil || !ok {
		return wire.Version{}, err
	}
	return rec.Version, nil
}

// raiseFloor stores v as the compaction floor of key, whose keyInfo is ki,
// if it is above the stored one.
func raiseFloor(e env.Env, key string, ki *keyInfo, v wire.Version) error {
	cur, err := loadFloor(e.Store(), key, ki)
	if err != nil || !cur.Less(v) {
		return err
	}
	return put(e, ki.floorKey(key), store.Record{Version: v})
}

// link is one version in a chain. Applied: the replica accepted the write
// before its closure passed the timestamp, reports it in its status and
// counts toward the version's commit. Otherwise it is a copy: a write that
// arrived after the closure (refused, but kept so a read here need not
// fetch it if it commits) or a value fetched from a peer for a read.
type link struct {
	store.Record
	Applied bool
}

// keyInfo is what a replica keeps of a key it has handled, to spare
// recomputing it on every request: the key's replicas, its chain as
// readChain last decoded it, with the stored bytes it came from and the
// key they are stored under (chainKey), and its row of the status map as
// peerVersions last found it. Nothing in it is durable state.
type keyInfo struct {
	replicas []wire.NodeID // Keyspace.Replicas: region by region
	ranked   []wire.NodeID // the same, nearest first (as a gateway sends)
	// reps holds replicas (first half) and ranked (second half) when they
	// fit, next to their headers: each request reads them just after the
	// keyInfo, and in allocations of their own they were two more cache
	// misses.
	reps    [8]wire.NodeID
	stored  string
	floor   string // floorKey
	raw     []byte
	chain   []link
	reports *keyReports // Replica.reports[key] when last looked up, if any
	// dirtyGen is Replica.dirtyGen when the key was last seen in
	// Replica.dirty (0: never).
	dirtyGen uint64
}

// maxKeyInfos bounds the keyInfo cache: a node that sees many keys (a
// random-key workload, clients asking for absent keys, peers' pulls and
// statuses) would otherwise keep an entry, and each written key's chain
// twice (stored and decoded), for every key it ever saw. When it is full
// the whole cache is dropped: nothing in it is durable or changes an
// answer (readChain checks the stored bytes), holders of an old entry
// keep a valid one, and dropping everything depends on no map order.
const maxKeyInfos = 4096

// key returns key's keyInfo. Its slices are shared: callers must not
// modify them.
func (r *Replica) key(key string) *keyInfo {
	ki := r.keys[key]
	if ki == nil {
		if len(r.keys) >= maxKeyInfos {
			clear(r.keys)
		}
		ki = &keyInfo{stored: chainKey(key)}
		half := len(ki.reps) / 2
		ki.replicas = r.ks.Replicas(ki.reps[:0:half], key) // in reps if it fits
		ki.ranked = append(ki.reps[half:half:len(ki.reps)], ki.replicas...)
		slices.SortFunc(ki.ranked, func(a, b wire.NodeID) int { return r.rank[a] - r.rank[b] })
		r.keys[key] = ki
	}
	return ki
}

// readChain returns the versions of key this replica holds, oldest first.
// It reads the store every time (a read may fail), but decodes the stored
// chain only when its bytes are not those it last decoded or stored
// (storeChain). Stored bytes are never
// modified in place (storeChain stores a fresh encoding), so bytes at the
// same address are the same chain. The chain it returns is shared: the
// caller must not modify it or its records' values (chainInsert copies).
func (r *Replica) readChain(s store.Store, key string, ki *keyInfo) ([]link, error) {
	rec, ok, err := s.Get(ki.stored)
	if err != nil || !ok {
		return nil, err
	}
	if len(ki.raw) == len(rec.Value) && len(ki.raw) > 0 && &ki.raw[0] == &rec.Value[0] {
		return ki.chain, nil
	}
	chain, err := decodeChain(key, rec.Value)
	if err != nil {
		return nil, err
	}
	ki.raw, ki.chain = rec.Value, chain
	return chain, nil
}

// decodeChain decodes key's stored chain.
func decodeChain(key string, raw []byte) ([]link, error) {
	d := wire.NewDecoder(raw)
	n := d.Uvarint()
	if n > maxChain || n > uint64(d.Len()) {
		return nil, fmt.Errorf("meteor: stored chain of %q has %d versions", key, n)
	}
	chain := make([]link, n)
	for i := range chain {
		chain[i].Applied = d.Bool()
		chain[i].Record = store.DecodeWire(d)
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("meteor: stored chain of %q: %w", key, err)
	}
	// storeInsert appends to these bytes as they are, so bytes past the
	// last link would be carried into every later chain: refuse them.
	if d.Len() != 0 {
		return nil, fmt.Errorf("meteor: stored chain of %q has %d bytes after its last version", key, d.Len())
	}
	return chain, nil
}

// storeChain stores chain as key's versions, and keeps it as ki's decoded
// chain, so the next readChain need not decode what was just encoded. The
// caller must not modify chain afterwards.
func (r *Replica) storeChain(e env.Env, ki *keyInfo, chain []link) error {
	return r.storeEncoded(e, ki, chain, encodeChain(chain))
}

// storeSuffix is storeChain for kept, the newest links of chain as
// readChain returned it (a compaction that dropped only the oldest, the
// usual case): its encoding is the stored one's from the first link kept
// on, after a new count, rather than the links encoded again one by one.
func (r *Replica) storeSuffix(e env.Env, ki *keyInfo, chain, kept []link) error {
	k := len(chain) - len(kept)
	if k == 0 || len(kept) == 0 || len(ki.chain) != len(chain) || &ki.chain[0] != &chain[0] {
		return r.storeChain(e, ki, kept)
	}
	// ki.raw is chain's encoding (readChain, storeChain): find where its
	// (k+1)th link starts by reading the k before it.
	d := wire.NewDecoder(ki.raw)
	d.Uvarint()
	for range k {
		d.Bool()
		store.DecodeWire(d)
	}
	if d.Err() != nil {
		return r.storeChain(e, ki, kept)
	}
	body := ki.raw[len(ki.raw)-d.Len():]
	b := wire.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(body)), uint64(len(kept)))
	return r.storeEncoded(e, ki, kept, store.Record{Value: append(b, body...), Version: kept[len(kept)-1].Version})
}

// storeEncoded stores rec, chain's encoding, as storeChain.
func (r *Replica) storeEncoded(e env.Env, ki *keyInfo, chain []link, rec store.Record) error {
	if err := put(e, ki.stored, rec); err != nil {
		return err
	}
	ki.raw, ki.chain = rec.Value, chain
	return nil
}

// storeInsert stores chain, as readChain returned it, with l added
// (chainInsert), and returns the new chain. A write usually adds the
// newest version: its encoding is then the stored one's with a new count
// and the link's bytes appended, not the whole chain encoded again (each
// write re-encoded its key's chain, every version since the last
// compaction), and the link is appended to ki's decoded chain in place,
// not to a copy of it (copying it was a large part of a run's allocation).
// In place is safe: the links before it do not move, so whoever holds the
// chain as it was still sees the same links, and the chain grown is only
// ever the one ki holds (a caller holding a shorter one fails the test
// below and copies).
func (r *Replica) storeInsert(e env.Env, ki *keyInfo, chain []link, l link) ([]link, error) {
	n := len(chain)
	var next []link
	var rec store.Record
	if n > 0 && chain[n-1].Version.Less(l.Version) && len(ki.chain) == n && &ki.chain[0] == &chain[0] {
		l.Value = bytes.Clone(l.Value) // as chainInsert
		next = append(chain, l)
		// ki.raw is chain's encoding (readChain, storeChain).
		rec = appendLink(ki.raw, n, l)
	} else {
		next = chainInsert(chain, l)
		rec = encodeChain(next)
	}
	if err := put(e, ki.stored, rec); err != nil {
		return nil, err
	}
	ki.raw, ki.chain = rec.Value, next
	return next, nil
}

// put writes key. Storage failure is fail-stop (doc.go, "Storage
// failure"): a failed write may or may not have taken effect, so the node
// stops, and nothing the handler sends leaves. A failed read only refuses
// the operation that made it (its callers answer nothing).
func put(e env.Env, key string, rec store.Record) error {
	if err := e.Store().Put(key, rec); err != nil {
		err = fmt.Errorf("meteor: write %q: %w", key, err)
		e.FailStop(err)
		return err
	}
	return nil
}

func encodeChain(chain []link) store.Record {
	// Sized for the values and linkRoom for the rest of each link, so the
	// encoding is one allocation, not one per doubling.
	size := binary.MaxVarintLen64
	for _, l := range chain {
		size += len(l.Value) + linkRoom
	}
	b := wire.AppendUvarint(make([]byte, 0, size), uint64(len(chain)))
	for _, l := range chain {
		b = appendLinkWire(b, l)
	}
	var newest wire.Version
	if len(chain) > 0 {
		newest = chain[len(chain)-1].Version
	}
	return store.Record{Value: b, Version: newest}
}

// appendLink is encodeChain of a chain of n links encoded as raw with l
// added last: the same bytes, from a copy of raw's.
func appendLink(raw []byte, n int, l link) store.Record {
	body := raw[len(wire.AppendUvarint(nil, uint64(n))):]
	b := make([]byte, 0, len(raw)+16+len(l.Value)+len(body)/n)
	b = wire.AppendUvarint(b, uint64(n+1))
	b = append(b, body...)
	b = appendLinkWire(b, l)
	return store.Record{Value: b, Version: l.Version}
}

// linkRoom is the most a link's encoding takes beyond its value's bytes
// with a timestamp of this century and small node and logical numbers:
// the flags, the value's length and the version's three varints.
const linkRoom = 24

// appendLinkWire appends one link's encoding in a stored chain.
func appendLinkWire(b []byte, l link) []byte {
	b = wire.AppendBool(b, l.Applied)
	return store.AppendWire(b, l.Record)
}

// chainIndex is the position of v in chain, or -1.
func chainIndex(chain []link, v wire.Version) int {
	i, ok := search(chain, v, linkVersion)
	if !ok {
		return -1
	}
	return i
}

func linkVersion(l *link) wire.Version { return l.Version }

func itself(v *wire.Version) wire.Version { return *v }

// nearEnd is how many of a sorted list's newest elements search looks at
// before it searches the rest by halves: the versions looked up are mostly
// among the newest (a read's candidates, a write or status just arrived),
// which share the list's last cache line, where each step by halves
// through a long chain read another line.
const nearEnd = 4

// search is slices.BinarySearchFunc over s, sorted by version (ver), for
// v: the position of v, or where it would go, and whether it is there.
func search[E any](s []E, v wire.Version, ver func(*E) wire.Version) (int, bool) {
	n := len(s)
	for i := n - 1; i >= max(0, n-nearEnd); i-- {
		switch c := ver(&s[i]).Compare(v); {
		case c == 0:
			return i, true
		case c < 0:
			return i + 1, false // every element before s[i] is older
		}
	}
	// Every element from n-nearEnd on is newer than v.
	return slices.BinarySearchFunc(s[:max(0, n-nearEnd)], v, func(e E, v wire.Version) int { return ver(&e).Compare(v) })
}

// chainInsert returns chain with l added (chain must not hold its
// version). It leaves chain as it was (it may be readChain's), and the new
// link holds its own copy of the value, as a decoded one does.
func chainInsert(chain []link, l link) []link {
	i, _ := search(chain, l.Version, linkVersion)
	l.Value = bytes.Clone(l.Value)
	out := make([]link, 0, len(chain)+1)
	out = append(out, chain[:i]...)
	out = append(out, l)
	return append(out, chain[i:]...)
}

// applied reports whether chain holds v as an applied version.
func applied(chain []link, v wire.Version) bool {
	i := chainIndex(chain, v)
	return i >= 0 && chain[i].Applied
}

// insertVersion adds v to the sorted set vs and reports whether it was new.
func insertVersion(vs []wire.Version, v wire.Version) ([]wire.Version, bool) {
	i, ok := search(vs, v, itself)
	if ok {
		return vs, false
	}
	return slices.Insert(vs, i, v), true
}

// hasVersion reports whether the sorted set vs holds v.
func hasVersion(vs []wire.Version, v wire.Version) bool {
	_, ok := search(vs, v, itself)
	return ok
}

// LoadVersion is the version of bulk-loaded records (LoadRecord): older than
// any write's, and committed by definition, because a bulk load puts the
// record on every replica before the keyspace starts.
func LoadVersion() wire.Version { return wire.Version{TS: hlc.Timestamp{WallNanos: 1}} }

// loaded reports whether v is the bulk-load version.
func loaded(v wire.Version) bool { return v == LoadVersion() }

// LoadRecord returns the store key and record under which a bulk load puts
// rec, a record of key at LoadVersion, on every replica of key before the
// keyspace starts.
func LoadRecord(key string, rec store.Record) (string, store.Record) {
	rec.Version = LoadVersion()
	return chainKey(key), encodeChain([]link{{Record: rec, Applied: true}})
}
