package storagesvc

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// Mem is the reference storage service: every object in memory, every
// operation atomic and applied in call order, so it is linearizable by
// construction and deterministic (ETags are a counter). The simulator runs
// one per region; the server hosts one per region whose backend is
// "hosted" (internal/svchost, which serializes calls). Mem itself is not
// safe for concurrent use: it has no locks, so that protocol-side
// deterministic code may use it.
type Mem struct {
	epoch uint64
	seq   uint64
	objs  map[string]*memObj
	keys  []string // sorted
	stats MemStats
}

// MemStats counts a Mem's requests by operation (what a price table
// charges) and the bytes it stores.
type MemStats struct {
	Requests    [OpDelete + 1]int64 // by Op
	StoredBytes int64               // data and metadata of every object
}

type memObj struct {
	data []byte
	meta Meta
	etag ETag
}

func (o *memObj) bytes() int64 { return int64(len(o.data) + MetaSize(o.meta)) }

// NewMem returns an empty service. Its ETags are "<epoch>.<n>" in base 36,
// n counting its writes: a service that restarts empty (the server's
// hosted one) must start with a new epoch, so that an ETag read before the
// restart never matches an object written after it.
func NewMem(epoch uint64) *Mem {
	return &Mem{epoch: epoch, objs: make(map[string]*memObj)}
}

// Stats returns the requests served so far and the bytes stored.
func (m *Mem) Stats() MemStats { return m.stats }

// Len is the number of objects.
func (m *Mem) Len() int { return len(m.keys) }

func (m *Mem) nextETag() ETag {
	m.seq++
	return ETag(strconv.FormatUint(m.epoch, 36) + "." + strconv.FormatUint(m.seq, 36))
}

// check applies cond to the object under key (nil if absent).
func check(o *memObj, cond Cond) error {
	switch {
	case cond.IfNoneMatch && o != nil:
		return ErrPreconditionFailed
	case cond.IfMatch != "" && (o == nil || o.etag != cond.IfMatch):
		return ErrPreconditionFailed
	}
	return nil
}

// read counts a read and finds key's object.
func (m *Mem) read(op Op, key string) (*memObj, error) {
	m.stats.Requests[op]++
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	o := m.objs[key]
	if o == nil {
		return nil, ErrNotFound
	}
	return o, nil
}

// Get implements Service.
func (m *Mem) Get(_ context.Context, key string) (*Object, error) {
	o, err := m.read(OpGet, key)
	if err != nil {
		return nil, err
	}
	return &Object{Key: key, Data: slices.Clone(o.data), Meta: o.meta.Clone(), ETag: o.etag, Size: int64(len(o.data))}, nil
}

// Head implements Service.
func (m *Mem) Head(_ context.Context, key string) (*Object, error) {
	o, err := m.read(OpHead, key)
	if err != nil {
		return nil, err
	}
	return &Object{Key: key, Meta: o.meta.Clone(), ETag: o.etag, Size: int64(len(o.data))}, nil
}

// write counts a put or put_meta, checks it and its condition, and
// returns key's object (nil if absent).
func (m *Mem) write(op Op, key string, data []byte, meta Meta, cond Cond) (*memObj, error) {
	m.stats.Requests[op]++
	if err := CheckWrite(key, data, meta, cond, op == OpPutMeta); err != nil {
		return nil, err
	}
	o := m.objs[key]
	return o, check(o, cond)
}

// Put implements Service.
func (m *Mem) Put(_ context.Context, key string, data []byte, meta Meta, cond Cond) (ETag, error) {
	o, err := m.write(OpPut, key, data, meta, cond)
	if err != nil {
		return "", err
	}
	if o == nil {
		o = &memObj{}
		m.objs[key] = o
		i, _ := slices.BinarySearch(m.keys, key)
		m.keys = slices.Insert(m.keys, i, key)
	} else {
		m.stats.StoredBytes -= o.bytes()
	}
	o.data, o.meta, o.etag = slices.Clone(data), meta.Clone(), m.nextETag()
	m.stats.StoredBytes += o.bytes()
	return o.etag, nil
}

// PutMeta implements Service.
func (m *Mem) PutMeta(_ context.Context, key string, meta Meta, cond Cond) (ETag, error) {
	o, err := m.write(OpPutMeta, key, nil, meta, cond)
	if err != nil {
		return "", err
	}
	if o == nil {
		return "", ErrNotFound
	}
	m.stats.StoredBytes -= o.bytes()
	o.meta, o.etag = meta.Clone(), m.nextETag()
	m.stats.StoredBytes += o.bytes()
	return o.etag, nil
}

// List implements Service.
func (m *Mem) List(_ context.Context, prefix, startAfter string, limit int) (*ListResult, error) {
	m.stats.Requests[OpList]++
	limit, err := CheckList(prefix, startAfter, limit)
	if err != nil {
		return nil, err
	}
	from := max(startAfter, prefix)
	i, found := slices.BinarySearch(m.keys, from)
	if found && from == startAfter {
		i++ // strictly after
	}
	res := &ListResult{}
	for ; i < len(m.keys) && strings.HasPrefix(m.keys[i], prefix); i++ {
		if len(res.Entries) == limit {
			res.Truncated = true
			break
		}
		o := m.objs[m.keys[i]]
		res.Entries = append(res.Entries, Entry{Key: m.keys[i], ETag: o.etag})
	}
	return res, nil
}

// Delete implements Service.
func (m *Mem) Delete(_ context.Context, key string, cond Cond) error {
	m.stats.Requests[OpDelete]++
	if err := CheckDelete(key, cond); err != nil {
		return err
	}
	o := m.objs[key]
	if err := check(o, cond); err != nil {
		return err
	}
	if o == nil {
		return nil
	}
	m.stats.StoredBytes -= o.bytes()
	delete(m.objs, key)
	i, _ := slices.BinarySearch(m.keys, key)
	m.keys = slices.Delete(m.keys, i, i+1)
	return nil
}

var _ Service = (*Mem)(nil)
