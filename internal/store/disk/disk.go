// Package disk is Lightcone's durable storage engine: store.Engine on Pebble
// (github.com/cockroachdb/pebble) with a configurable fsync policy. It lives
// apart from package store so protocol code, which sees only store.Store,
// never links the engine.
package disk

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

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
// loop; only the everysec flusher runs beside it.
type Pebble struct {
	db     *pebble.DB
	policy SyncPolicy
	batch  *pebble.Batch
	stop   chan struct{}
	wg     sync.WaitGroup
	// SyncLatency, if set, observes each fsync'd commit (for /metrics).
	SyncLatency func(time.Duration)
	cache       *rowCache
	failed      error // a failed commit: the store refuses everything after it
}

// Row cache bounds: the latest records of up to this many keys, holding at
// most this many value bytes.
const (
	DefaultCacheRows  = 1 << 17
	DefaultCacheBytes = 64 << 20
)

// OpenPebble opens (creating if needed) the store in dir.
func OpenPebble(dir string, policy SyncPolicy) (*Pebble, error) {
	if _, err := ParseSyncPolicy(string(policy)); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		return nil, fmt.Errorf("disk: open %s: %w", dir, err)
	}
	p := &Pebble{db: db, policy: policy, stop: make(chan struct{}), cache: newRowCache(DefaultCacheRows, DefaultCacheBytes)}
	p.batch = db.NewIndexedBatch()
	if policy == SyncEverySec {
		p.wg.Add(1)
		go p.flushEverySecond()
	}
	return p, nil
}

func (p *Pebble) flushEverySecond() {
	defer p.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			// An empty synced LogData fsyncs everything the WAL holds.
			_ = p.db.LogData(nil, pebble.Sync)
		}
	}
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

// Put implements Store.
func (p *Pebble) Put(key string, rec store.Record) error {
	if err := p.batch.Set([]byte(dataPrefix+key), AppendRecord(nil, rec), nil); err != nil {
		p.cache.drop(key)
		return err
	}
	rec.Value = slices.Clone(rec.Value) // the caller may reuse its buffer
	p.cache.put(key, rec, true)
	return nil
}

// Sync implements Engine: it commits every Put since the last Sync, with
// an fsync under SyncAlways.
func (p *Pebble) Sync() error {
	if p.failed != nil {
		return p.failed
	}
	if p.batch.Empty() {
		return nil
	}
	opt := pebble.NoSync
	if p.policy == SyncAlways {
		opt = pebble.Sync
	}
	start := time.Now()
	err := p.batch.Commit(opt)
	if p.policy == SyncAlways && p.SyncLatency != nil {
		p.SyncLatency(time.Since(start))
	}
	p.batch.Close()
	p.batch = p.db.NewIndexedBatch()
	if err != nil {
		// The batch's writes are gone; so must be their cached copies, and
		// the failure sticks: a store that lost writes must not pretend
		// later ones are safe.
		p.cache = newRowCache(DefaultCacheRows, DefaultCacheBytes)
		p.failed = fmt.Errorf("disk: commit failed: %w", err)
		return p.failed
	}
	return nil
}

// Close syncs what is pending and closes the store.
func (p *Pebble) Close() error {
	close(p.stop)
	p.wg.Wait()
	err := p.batch.Commit(pebble.Sync)
	p.batch.Close()
	return errors.Join(err, p.db.Close())
}
