// Package disk is Lightcone's durable storage engine: store.Engine on Pebble
// (github.com/cockroachdb/pebble) with a configurable fsync policy. It lives
// apart from package store so protocol code, which sees only store.Store,
// never links the engine.
//
// A full disk is refused, not crashed on: the engine tells the runtime
// when client writes must be refused (Writable) and keeps Pebble's own
// writes clear of ENOSPC; see space.go for why Pebble needs that and how.
package disk

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/lightcone/lightcone/internal/store"
)

// SyncPolicy says when writes reach stable storage. Compare Redis's
// appendfsync and etcd, which fsyncs its WAL before every commit.
type SyncPolicy string

const (
	// SyncAlways fsyncs the WAL before any reply or message that depends on
	// the write leaves (etcd's behaviour; Redis appendfsync always). Writes
	// handled together share one fsync (group commit). The default: an
	// acknowledged write survives a crash of the process or the machine.
	SyncAlways SyncPolicy = "always"
	// SyncEverySec fsyncs the WAL once a second (Redis appendfsync
	// everysec). Acknowledged writes not yet fsynced sit in Pebble's WAL
	// buffer or the OS page cache: a process crash can lose the last few
	// milliseconds of them, a machine crash up to the last second.
	SyncEverySec SyncPolicy = "everysec"
	// SyncNever leaves flushing to Pebble and the OS (Redis appendfsync
	// no): a process crash can lose the last few milliseconds of
	// acknowledged writes, a machine crash more.
	SyncNever SyncPolicy = "never"
)

// SyncPolicies lists the valid policies.
func SyncPolicies() []SyncPolicy { return []SyncPolicy{SyncAlways, SyncEverySec, SyncNever} }

// ParseSyncPolicy parses a policy name.
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	for _, p := range SyncPolicies() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("disk: unknown sync policy %q (valid: always, everysec, never)", s)
}

// dataPrefix namespaces user keys; protocol metadata will use other prefixes.
const dataPrefix = "d/"

// Pebble is the durable Engine: a Pebble LSM with its write-ahead log.
// Puts collect in an indexed batch (visible to Gets at once); Sync commits
// the batch, fsyncing the WAL under SyncAlways. It is used by one event
// loop; only the free-space monitor and the everysec flusher run beside it.
// Writable says whether client writes should be taken (see Options and the
// disk-full notes in space.go).
type Pebble struct {
	db     *pebble.DB
	policy SyncPolicy
	batch  *pebble.Batch
	stop   chan struct{}
	wg     sync.WaitGroup
	// SyncLatency, if set, observes each fsync'd commit (for /metrics).
	SyncLatency func(time.Duration)
	cache       *rowCache
	cacheBytes  int64 // Options.RowCacheBytes
	space       *monitor
	// enc is Put's encoding buffer (the batch copies what it is given).
	enc []byte
	// keyBuf is Put's key buffer ("d/" + key), reused as enc is.
	keyBuf []byte
	// hold says whether the log's fsyncs hold their thread now
	// (Options.FsyncHoldsThread, HoldThread).
	hold *atomic.Bool
	// sinceCheck counts bytes committed since the last free-space
	// reading; past checkBytes, Sync reads it again.
	sinceCheck, checkBytes int
}

// Row cache bounds by default: the latest records of up to this many keys,
// holding at most this many value bytes (Options.RowCacheBytes).
const (
	DefaultCacheRows  = DefaultCacheBytes / RowCacheBytesPerKey
	DefaultCacheBytes = 64 << 20
)

// RowCacheBytesPerKey is the row cache's bytes per key: a cache of n bytes
// keeps at most n/RowCacheBytesPerKey keys, so small values cannot make it
// hold more keys (each with its overhead) than that.
const RowCacheBytesPerKey = 512

// RowCacheBytes reports the row cache's bound in value bytes
// (Options.RowCacheBytes, or its default).
func (p *Pebble) RowCacheBytes() int64 { return p.cacheBytes }

// SpareProc reports whether the engine raises GOMAXPROCS while it flushes
// or compacts (Options.SpareProc, in effect).
func (p *Pebble) SpareProc() bool { return p.space.spare != nil }

// newCache is an empty row cache of the configured size.
func (p *Pebble) newCache() *rowCache {
	return newRowCache(int(p.cacheBytes/RowCacheBytesPerKey), int(p.cacheBytes))
}

// DefaultBlockCacheBytes is Pebble's block cache: the sstable blocks (index,
// filter and data) that reads below the row cache and the memtables find.
// Pebble's own default is 8 MiB, which a working set of a few million small
// keys outgrows at once: a read below the row cache (a GET, or a quorum
// write that must check its key's record: last writer wins) then became a
// read of an index and a data block from the file, decompressed
// (docs/performance.md, "Writes to many keys").
const DefaultBlockCacheBytes = 128 << 20

// L0 thresholds (Options in Open): compact at this many L0 files; stop
// writes at that many.
const (
	l0CompactionThreshold = 8
	l0StopWritesThreshold = 24
)

// bloomBitsPerKey sizes the sstables' bloom filters: 10 bits per key give a
// false-positive rate of about 1%, so a read of a key that is in no table
// (a write's read of a new key, most of all) skips them all instead of
// seeking every level's index.
const bloomBitsPerKey = 10

// filteredLevels is Pebble's per-level options with a bloom filter: one
// entry, which Pebble extends to every level (Options.Level) and fills in
// (EnsureDefaults).
func filteredLevels() []pebble.LevelOptions {
	return []pebble.LevelOptions{{FilterPolicy: bloom.FilterPolicy(bloomBitsPerKey), FilterType: pebble.TableFilter}}
}

// OpenPebble opens (creating if needed) the store in dir with the default
// options and policy.
func OpenPebble(dir string, policy SyncPolicy) (*Pebble, error) {
	return Open(dir, Options{Sync: policy})
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, o Options) (*Pebble, error) {
	if o.Sync == "" {
		o.Sync = SyncAlways
	}
	if _, err := ParseSyncPolicy(string(o.Sync)); err != nil {
		return nil, err
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	hold := new(atomic.Bool)
	if o.FsyncHoldsThread {
		o.FS = holdingFS{o.FS, hold}
		hold.Store(true)
	}
	if o.RowCacheBytes <= 0 {
		o.RowCacheBytes = DefaultCacheBytes
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = time.Second
	}
	if o.LogInterval <= 0 {
		o.LogInterval = 10 * time.Second
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := o.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("disk: open %s: %w", dir, err)
	}
	m := newMonitor(o.FS, dir, o, log)
	if o.SpareProc {
		switch {
		case o.spare != nil:
			m.spare = o.spare
		case os.Getenv("GOMAXPROCS") == "":
			log.Warn("disk: spare_proc has no effect: GOMAXPROCS is not set, and Go's default already gives the process every CPU it may use (or its CPU quota)")
		default:
			m.spare = spare
		}
	}
	memTable, err := m.sizes()
	if err != nil {
		return nil, fmt.Errorf("disk: open %s: free space: %w", dir, err)
	}
	// The ballast is allocated before Pebble writes anything, if there is
	// room for it over the reserve; otherwise check allocates it once there
	// is, and writes are refused until then.
	m.check()
	blocks := pebble.NewCache(DefaultBlockCacheBytes)
	// The DB takes its own reference; Close releases it.
	defer blocks.Unref()
	db, err := pebble.Open(dir, &pebble.Options{
		FS:           vfs.OnDiskFull(o.FS, m.onDiskFull),
		MemTableSize: memTable,
		Cache:        blocks,
		Levels:       filteredLevels(),
		// Compact L0 into the levels below at 8 files rather than Pebble's
		// 4 (and stop writes at 24 rather than 12): each compaction then
		// merges twice the flushed data into the same rewrite of the base
		// level, which halves what compactions write per key written.
		// Over a million random keys SET -P 16 1.46x at 0.68x CPU per SET;
		// over ten million, 1.12-1.37x, and GETs of them afterwards
		// unchanged; YCSB A / B 1.28x / 1.12x (docs/performance.md,
		// "Writes to many keys"). 16 files gave writes more and cold reads
		// 20% less.
		L0CompactionThreshold: l0CompactionThreshold,
		L0StopWritesThreshold: l0StopWritesThreshold,
		EventListener:         m.listener(),
		Logger:                pebbleLogger{log},
	})
	if err != nil {
		return nil, fmt.Errorf("disk: open %s: %w", dir, err)
	}
	p := &Pebble{db: db, policy: o.Sync, stop: make(chan struct{}), cacheBytes: int64(o.RowCacheBytes),
		space: m, checkBytes: int(max(m.resv/4, 1)), hold: hold}
	p.cache = p.newCache()
	p.batch = db.NewIndexedBatch()
	m.check()
	// Re-reading the free space every interval is how writes resume on
	// their own once space returns, and how the log is reminded while full.
	p.every(o.CheckInterval, m.check)
	if o.Sync == SyncEverySec {
		p.every(time.Second, p.flushWAL)
	}
	return p, nil
}

// every runs fn every interval until Close.
func (p *Pebble) every(interval time.Duration, fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// Writable returns nil if client writes may be taken, else why not: a
// *NoSpaceError while free space is below the reserve (retryable: it
// clears on its own once space returns), or the failure that stopped the
// engine. It is cheap (two atomic loads) and safe for concurrent use.
func (p *Pebble) Writable() error { return p.space.writable() }

// AdmitWrite is Writable for one client write: a refusal is counted
// (Space.Refused).
func (p *Pebble) AdmitWrite() error {
	err := p.space.writable()
	if err != nil {
		p.space.refused.Add(1)
	}
	return err
}

// Space reports the data directory's free space, the reserve and the
// counters for /status. Safe for concurrent use.
func (p *Pebble) Space() Space { return p.space.space() }

// flushWAL fsyncs everything the WAL holds (SyncEverySec).
func (p *Pebble) flushWAL() {
	if p.space.failure.Load() != nil {
		return
	}
	// An empty synced LogData fsyncs everything the WAL holds.
	if err := p.logData(); err != nil {
		p.space.fail(fmt.Errorf("disk: WAL fsync failed: %w", err))
	}
}

func (p *Pebble) logData() (err error) {
	defer recoverFatal(&err)
	return p.db.LogData(nil, pebble.Sync)
}

// Get implements Store. The record's Value is shared with the row cache:
// callers must not modify it.
func (p *Pebble) Get(key string) (store.Record, bool, error) {
	if r, found, ok := p.cache.get(key); ok {
		return r, found, nil
	}
	// Read the batch only when it holds writes: a read through an indexed
	// batch opens an iterator, a plain read does not.
	var rd pebble.Reader = p.db
	if !p.batch.Empty() {
		rd = p.batch
	}
	v, closer, err := rd.Get([]byte(dataPrefix + key))
	if errors.Is(err, pebble.ErrNotFound) {
		p.cache.put(key, store.Record{}, false)
		return store.Record{}, false, nil
	}
	if err != nil {
		return store.Record{}, false, fmt.Errorf("disk: get %q: %w", key, err)
	}
	defer closer.Close()
	r, err := DecodeRecord(v)
	if err != nil {
		return store.Record{}, false, fmt.Errorf("disk: get %q: %w", key, err)
	}
	p.cache.put(key, r, true)
	return r, true, nil
}

// dataEnd bounds the user keys: the first key after every "d/..." key.
const dataEnd = "d0"

// Scan implements store.Lister: an iterator over the committed data and
// the batch not yet synced.
func (p *Pebble) Scan(from, to string, fn func(key string, rec store.Record) bool) (err error) {
	defer recoverFatal(&err)
	opts := &pebble.IterOptions{LowerBound: []byte(dataPrefix + from), UpperBound: []byte(dataEnd)}
	if to != "" {
		opts.UpperBound = []byte(dataPrefix + to)
	}
	var rd pebble.Reader = p.db
	if !p.batch.Empty() {
		rd = p.batch
	}
	it, err := rd.NewIter(opts)
	if err != nil {
		return fmt.Errorf("disk: scan: %w", err)
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	for ok := it.First(); ok; ok = it.Next() {
		key := string(it.Key()[len(dataPrefix):])
		r, err := DecodeRecord(it.Value())
		if err != nil {
			return fmt.Errorf("disk: scan %q: %w", key, err)
		}
		if !fn(key, r) {
			return nil
		}
	}
	return it.Error()
}

// maxEncKeep is the largest encoding buffer Put keeps for the next one.
const maxEncKeep = 64 << 10

// Put implements Store.
func (p *Pebble) Put(key string, rec store.Record) error {
	// Set copies its arguments: one encoding buffer serves every Put.
	p.enc = AppendRecord(p.enc[:0], rec)
	p.keyBuf = append(append(p.keyBuf[:0], dataPrefix...), key...)
	err := p.batch.Set(p.keyBuf, p.enc, nil)
	if cap(p.enc) > maxEncKeep {
		p.enc = nil // a large value's buffer is not kept
	}
	if cap(p.keyBuf) > maxEncKeep {
		p.keyBuf = nil
	}
	if err != nil {
		p.cache.drop(key)
		return err
	}
	rec.Value = slices.Clone(rec.Value) // the caller may reuse its buffer
	p.cache.put(key, rec, true)
	return nil
}

// HoldThread implements store.ThreadHolder: with Options.FsyncHoldsThread,
// whether the next fsyncs hold their thread (until told otherwise); without
// it, nothing.
func (p *Pebble) HoldThread(hold bool) { p.hold.Store(hold) }

// Sync implements Engine: it commits every Put since the last Sync, with
// an fsync under SyncAlways. A failed commit fails the engine for good
// (Pebble cannot write its log again in this process): the batch's writes
// are dropped, and this and every later Sync return the failure.
func (p *Pebble) Sync() error {
	if f := p.space.failure.Load(); f != nil {
		return *f
	}
	if p.batch.Empty() {
		return nil
	}
	opt := pebble.NoSync
	if p.policy == SyncAlways {
		opt = pebble.Sync
	}
	n := len(p.batch.Repr())
	start := time.Now()
	err := p.commit(opt)
	if p.policy == SyncAlways && p.SyncLatency != nil && err == nil {
		p.SyncLatency(time.Since(start))
	}
	if err != nil {
		return p.commitFailed(err)
	}
	p.batch.Close()
	p.batch = p.db.NewIndexedBatch()
	p.committed(n)
	return nil
}

// committed counts n bytes committed, reading the free space again once
// past checkBytes since the last reading.
func (p *Pebble) committed(n int) {
	if p.sinceCheck += n; p.sinceCheck >= p.checkBytes {
		p.sinceCheck = 0
		p.space.check()
	}
}

// SyncStart implements store.AsyncEngine: under SyncAlways it applies the
// batch (visible to Gets at once) and returns a Pending that waits for
// Pebble to fsync it; Pebble's log writer syncs every batch applied while
// the previous fsync ran with the next one, so syncs started back to back
// share fsyncs. Under the other policies it is Sync (a commit without
// fsync) and returns no Pending. A failed commit or fsync fails the engine
// for good, as Sync's.
func (p *Pebble) SyncStart() (store.Pending, error) {
	if p.policy != SyncAlways {
		return nil, p.Sync()
	}
	if f := p.space.failure.Load(); f != nil {
		return nil, *f
	}
	if p.batch.Empty() {
		return nil, nil
	}
	n := len(p.batch.Repr())
	w := &pebblePending{p: p, b: p.batch, start: time.Now()}
	if err := p.applyNoSyncWait(p.batch); err != nil {
		return nil, p.commitFailed(err)
	}
	p.batch = p.db.NewIndexedBatch()
	p.committed(n)
	return w, nil
}

var _ store.AsyncEngine = (*Pebble)(nil)

// pebblePending is a batch applied by SyncStart, its fsync under way.
type pebblePending struct {
	p     *Pebble
	b     *pebble.Batch
	start time.Time
}

// Wait implements store.Pending. It runs beside the loop: it touches only
// the batch, the failure (atomic) and SyncLatency (which must be safe for
// concurrent use, as a Prometheus histogram is).
func (w *pebblePending) Wait() error {
	if err := w.syncWait(); err != nil {
		// Pebble cannot write its log again: the engine takes no more
		// writes. The loop learns it from this error (and from every later
		// Sync or SyncStart) and stops serving; the row cache may hold the
		// lost writes, but nothing reads it once the node has stopped.
		return w.p.failCommit(err)
	}
	if w.p.SyncLatency != nil {
		w.p.SyncLatency(time.Since(w.start))
	}
	w.b.Close()
	return nil
}

func (w *pebblePending) syncWait() (err error) {
	defer recoverFatal(&err)
	return w.b.SyncWait()
}

func (p *Pebble) applyNoSyncWait(b *pebble.Batch) (err error) {
	defer recoverFatal(&err)
	return p.db.ApplyNoSyncWait(b, pebble.Sync)
}

// commitFailed handles a commit that failed: the batch's writes are gone;
// so must be their cached copies, and the failure sticks: a store that lost
// writes must not pretend later ones are safe. The batch is dropped, not
// closed: Pebble may still hold it.
func (p *Pebble) commitFailed(err error) error {
	p.cache = p.newCache()
	p.batch = p.db.NewIndexedBatch()
	return p.failCommit(err)
}

// failCommit fails the engine for good with err, a commit's failure, and
// returns the failure that sticks (the first). Safe for concurrent use.
func (p *Pebble) failCommit(err error) error {
	p.space.fail(fmt.Errorf("disk: commit failed; the store takes no more writes until the node restarts: %w", err))
	return *p.space.failure.Load()
}

// commit commits the batch, turning Pebble's fatal errors (a panic, with
// pebbleLogger) into an error.
func (p *Pebble) commit(opt *pebble.WriteOptions) (err error) {
	defer recoverFatal(&err)
	return p.batch.Commit(opt)
}

// Close syncs what is pending and closes the store. After a failed commit
// it closes nothing (Pebble's commit pipeline may be wedged) and returns
// the failure.
func (p *Pebble) Close() error {
	close(p.stop)
	p.wg.Wait()
	if f := p.space.failure.Load(); f != nil {
		return *f
	}
	err := p.commit(pebble.Sync)
	if err != nil {
		return fmt.Errorf("disk: close: %w", err)
	}
	p.batch.Close()
	return p.db.Close()
}
