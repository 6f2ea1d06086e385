package svchost

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// Disk is the durable hosted storage service: a region's objects in a
// Pebble store of their own on the hosting node (the data directory's
// services/ directory), so that they outlive the process. Every write is
// committed with an fsync before it is answered, so an acknowledged put,
// put_meta or delete survives a crash of the host (kill -9, power loss
// with an honest disk); a write that was not answered may or may not have
// taken effect, as storagesvc's ErrUnavailable says.
//
// Each operation is atomic on its object: writes to one key run one at a
// time under that key's lock (a condition is checked and the write
// committed before the lock is released), and a write is visible to reads
// only once committed, which for a synced Pebble batch is once it is
// durable. So the service is linearizable per object across restarts.
//
// ETags are "<epoch>.<n>" in base 36: epoch counts the store's openings
// (persisted, with an fsync, before the first request is served) and n
// this opening's writes, so no ETag is ever given twice, before or after a
// restart, and an If-Match read before a crash cannot match a state
// written after it unless it names that very state.
type Disk struct {
	db    *pebble.DB
	epoch uint64
	seq   atomic.Uint64
	seed  maphash.Seed
	locks [64]sync.Mutex // writes, striped by key
	// open guards db against Close: operations hold it for reading, and
	// after Close they fail with ErrUnavailable (Pebble panics on a
	// closed store).
	open   sync.RWMutex
	closed bool
	// stored is the data and metadata of every object (StoredBytes).
	stored atomic.Int64
}

var errClosed = fmt.Errorf("%w: svchost: hosted service closed", storagesvc.ErrUnavailable)

// enter starts an operation; if it reports true, the caller must call
// d.open.RUnlock when done.
func (d *Disk) enter() bool {
	d.open.RLock()
	if d.closed {
		d.open.RUnlock()
		return false
	}
	return true
}

// Key layout in the store: objects under "o/", the epoch under "m/epoch".
const (
	diskObjPrefix = "o/"
	diskObjEnd    = "o0" // the least key above every object's ('/'+1 is '0')
	diskEpochKey  = "m/epoch"
)

// OpenDisk opens (creating if needed) the service stored in dir and starts
// a new epoch.
func OpenDisk(dir string, log *slog.Logger) (*Disk, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLog{log}})
	if err != nil {
		return nil, fmt.Errorf("svchost: open hosted service in %s: %w", dir, err)
	}
	d := &Disk{db: db, seed: maphash.MakeSeed()}
	v, closer, err := db.Get([]byte(diskEpochKey))
	switch {
	case err == nil:
		if len(v) == 8 {
			d.epoch = binary.BigEndian.Uint64(v)
		}
		closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		db.Close()
		return nil, fmt.Errorf("svchost: hosted service in %s: reading its epoch: %w", dir, err)
	}
	if err := d.measure(); err != nil {
		db.Close()
		return nil, fmt.Errorf("svchost: hosted service in %s: %w", dir, err)
	}
	d.epoch++
	if err := db.Set([]byte(diskEpochKey), binary.BigEndian.AppendUint64(nil, d.epoch), pebble.Sync); err != nil {
		db.Close()
		return nil, fmt.Errorf("svchost: hosted service in %s: writing its epoch: %w", dir, err)
	}
	return d, nil
}

// measure sets d.stored from the objects in the store (at opening).
func (d *Disk) measure() error {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte(diskObjPrefix), UpperBound: []byte(diskObjEnd)})
	if err != nil {
		return err
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		o, err := decodeObj(it.Value())
		if err != nil {
			it.Close()
			return fmt.Errorf("object %q: %w", it.Key()[len(diskObjPrefix):], err)
		}
		n += o.size()
	}
	if err := it.Close(); err != nil {
		return err
	}
	d.stored.Store(n)
	return nil
}

// StoredBytes is the data and metadata of every object in the store (the
// cost accountant's stored bytes; storagesvc.MetaSize counts metadata).
func (d *Disk) StoredBytes() int64 { return d.stored.Load() }

// Epoch is this opening's epoch: 1 for a new store, one more at each
// reopening.
func (d *Disk) Epoch() uint64 { return d.epoch }

// Close closes the store.
func (d *Disk) Close() error {
	d.open.Lock()
	defer d.open.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.db.Close()
}

func (d *Disk) nextETag() storagesvc.ETag {
	return storagesvc.ETag(strconv.FormatUint(d.epoch, 36) + "." + strconv.FormatUint(d.seq.Add(1), 36))
}

func (d *Disk) lock(key string) *sync.Mutex {
	return &d.locks[maphash.String(d.seed, key)%uint64(len(d.locks))]
}

// diskObj is a stored object: etag, metadata, data.
type diskObj struct {
	etag storagesvc.ETag
	meta storagesvc.Meta
	data []byte
}

// size is o's data and metadata in bytes (0 for no object).
func (o *diskObj) size() int64 {
	if o == nil {
		return 0
	}
	return int64(len(o.data) + storagesvc.MetaSize(o.meta))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (o *diskObj) encode() []byte {
	b := appendString(nil, string(o.etag))
	names := o.meta.Names()
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = appendString(appendString(b, k), o.meta[k])
	}
	return append(b, o.data...)
}

var errCorrupt = errors.New("svchost: hosted service: corrupt stored object")

func decodeObj(b []byte) (*diskObj, error) {
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	o := &diskObj{}
	e, ok := str()
	if !ok {
		return nil, errCorrupt
	}
	o.etag = storagesvc.ETag(e)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > storagesvc.MaxMetaBytes {
		return nil, errCorrupt
	}
	b = b[k:]
	for range n {
		name, ok1 := str()
		val, ok2 := str()
		if !ok1 || !ok2 {
			return nil, errCorrupt
		}
		if o.meta == nil {
			o.meta = storagesvc.Meta{}
		}
		o.meta[name] = val
	}
	o.data = slices.Clone(b)
	return o, nil
}

// load reads key's object (nil if absent).
func (d *Disk) load(key string) (*diskObj, error) {
	v, closer, err := d.db.Get([]byte(diskObjPrefix + key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", storagesvc.ErrUnavailable, err)
	}
	defer closer.Close()
	return decodeObj(v)
}

func checkCond(o *diskObj, cond storagesvc.Cond) error {
	switch {
	case cond.IfNoneMatch && o != nil:
		return storagesvc.ErrPreconditionFailed
	case cond.IfMatch != "" && (o == nil || o.etag != cond.IfMatch):
		return storagesvc.ErrPreconditionFailed
	}
	return nil
}

// Get implements storagesvc.Service.
func (d *Disk) Get(_ context.Context, key string) (*storagesvc.Object, error) {
	if err := storagesvc.CheckKey(key); err != nil {
		return nil, err
	}
	if !d.enter() {
		return nil, errClosed
	}
	defer d.open.RUnlock()
	o, err := d.load(key)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, storagesvc.ErrNotFound
	}
	return &storagesvc.Object{Key: key, Data: o.data, Meta: o.meta, ETag: o.etag, Size: int64(len(o.data))}, nil
}

// Head implements storagesvc.Service.
func (d *Disk) Head(ctx context.Context, key string) (*storagesvc.Object, error) {
	o, err := d.Get(ctx, key)
	if o != nil {
		o.Data = nil
	}
	return o, err
}

// write runs one conditional write of key under its lock: update returns
// the object to store (nil: delete it) from the current one.
func (d *Disk) write(key string, cond storagesvc.Cond, update func(cur *diskObj) (*diskObj, error)) (storagesvc.ETag, error) {
	if !d.enter() {
		return "", errClosed
	}
	defer d.open.RUnlock()
	mu := d.lock(key)
	mu.Lock()
	defer mu.Unlock()
	cur, err := d.load(key)
	if err != nil {
		return "", err
	}
	if err := checkCond(cur, cond); err != nil {
		return "", err
	}
	next, err := update(cur)
	if err != nil {
		return "", err
	}
	k := []byte(diskObjPrefix + key)
	if next == nil {
		if cur == nil {
			return "", nil
		}
		err = d.db.Delete(k, pebble.Sync)
	} else {
		next.etag = d.nextETag()
		err = d.db.Set(k, next.encode(), pebble.Sync)
	}
	if err != nil {
		// Pebble may or may not have logged it: outcome unknown.
		return "", fmt.Errorf("%w: %v", storagesvc.ErrUnavailable, err)
	}
	d.stored.Add(next.size() - cur.size())
	if next == nil {
		return "", nil
	}
	return next.etag, nil
}

// Put implements storagesvc.Service.
func (d *Disk) Put(_ context.Context, key string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := storagesvc.CheckWrite(key, data, meta, cond, false); err != nil {
		return "", err
	}
	return d.write(key, cond, func(*diskObj) (*diskObj, error) {
		return &diskObj{meta: meta, data: data}, nil
	})
}

// PutMeta implements storagesvc.Service.
func (d *Disk) PutMeta(_ context.Context, key string, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := storagesvc.CheckWrite(key, nil, meta, cond, true); err != nil {
		return "", err
	}
	return d.write(key, cond, func(cur *diskObj) (*diskObj, error) {
		if cur == nil {
			return nil, storagesvc.ErrNotFound
		}
		return &diskObj{meta: meta, data: cur.data}, nil
	})
}

// Delete implements storagesvc.Service.
func (d *Disk) Delete(_ context.Context, key string, cond storagesvc.Cond) error {
	if err := storagesvc.CheckDelete(key, cond); err != nil {
		return err
	}
	_, err := d.write(key, cond, func(*diskObj) (*diskObj, error) { return nil, nil })
	return err
}

// List implements storagesvc.Service.
func (d *Disk) List(_ context.Context, prefix, startAfter string, limit int) (*storagesvc.ListResult, error) {
	limit, err := storagesvc.CheckList(prefix, startAfter, limit)
	if err != nil {
		return nil, err
	}
	if !d.enter() {
		return nil, errClosed
	}
	defer d.open.RUnlock()
	lower := []byte(diskObjPrefix + max(startAfter, prefix))
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd([]byte(diskObjPrefix + prefix))})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", storagesvc.ErrUnavailable, err)
	}
	defer it.Close()
	res := &storagesvc.ListResult{}
	for ok := it.First(); ok; ok = it.Next() {
		key := string(it.Key()[len(diskObjPrefix):])
		if key == startAfter {
			continue // strictly after
		}
		if len(res.Entries) == limit {
			res.Truncated = true
			break
		}
		o, err := decodeObj(it.Value())
		if err != nil {
			return nil, err
		}
		res.Entries = append(res.Entries, storagesvc.Entry{Key: key, ETag: o.etag})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("%w: %v", storagesvc.ErrUnavailable, err)
	}
	return res, nil
}

// prefixEnd is the least key above every key starting with p.
func prefixEnd(p []byte) []byte {
	end := slices.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i]++; end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// pebbleLog drops Pebble's informational lines, logs its errors, and
// panics on a fatal one, as Pebble expects of Fatalf.
type pebbleLog struct{ log *slog.Logger }

func (pebbleLog) Infof(string, ...any) {}
func (l pebbleLog) Errorf(format string, args ...any) {
	l.log.Error("svchost: hosted service: " + fmt.Sprintf(format, args...))
}
func (pebbleLog) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("svchost: hosted service: "+format, args...))
}

var _ storagesvc.Service = (*Disk)(nil)
