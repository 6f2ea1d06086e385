package resp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/wire"
)

// fakeBackend is an in-memory api.Backend. Like a node, it runs requests on
// one event-loop goroutine, in submission order, and calls done from there.
type fakeBackend struct {
	loop    chan func()
	stopped chan struct{}
	clients atomic.Int64

	// Owned by the loop goroutine.
	data map[string]fakeRecord // keyspace + "\x00" + key
	ts   int64

	mu   sync.Mutex
	fail func(*wire.Request) *wire.Error // if set and non-nil for a request, it fails with that error
	seen []wire.Request                  // every request, in order (Value omitted)
}

type fakeRecord struct {
	val []byte
	ver wire.Version
}

func newFakeBackend(t *testing.T) *fakeBackend {
	b := &fakeBackend{
		loop:    make(chan func(), 4096),
		stopped: make(chan struct{}),
		data:    make(map[string]fakeRecord),
	}
	go func() {
		defer close(b.stopped)
		for f := range b.loop {
			f()
		}
	}()
	t.Cleanup(func() {
		close(b.loop)
		<-b.stopped
	})
	return b
}

func (b *fakeBackend) NewClientID() wire.ClientID { return wire.ClientID(b.clients.Add(1)) }

func (b *fakeBackend) Submit(req *wire.Request, done func(*wire.Reply)) {
	r := *req
	b.loop <- func() { done(b.apply(&r)) }
}

func (b *fakeBackend) setFail(f func(*wire.Request) *wire.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fail = f
}

func (b *fakeBackend) requests() []wire.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]wire.Request(nil), b.seen...)
}

func (b *fakeBackend) apply(req *wire.Request) *wire.Reply {
	b.mu.Lock()
	fail := b.fail
	logged := *req
	logged.Value = nil
	b.seen = append(b.seen, logged)
	b.mu.Unlock()
	rep := &wire.Reply{ID: req.ID, Client: req.Client}
	if fail != nil {
		if e := fail(req); e != nil {
			rep.Err = e
			return rep
		}
	}
	k := req.Keyspace + "\x00" + req.Key
	switch req.Op {
	case wire.OpGet:
		rec, ok := b.data[k]
		rep.Found, rep.Value, rep.Version = ok, append([]byte(nil), rec.val...), rec.ver
	case wire.OpPut, wire.OpDelete:
		// One event loop orders every write, so conditional writes are
		// atomic here, as in a protocol that orders a key's writes.
		if rec, ok := b.data[k]; req.Cond && !req.Expected.Holds(rec.ver, ok, false) {
			rep.Version, rep.Err = rec.ver, &wire.Error{Code: wire.ErrConflict, Msg: fmt.Sprintf("fake: %q is at version %v", req.Key, rec.ver)}
			return rep
		}
		b.ts++
		rep.Version = wire.Version{TS: hlc.Timestamp{WallNanos: b.ts}, Node: 1}
		if req.Op == wire.OpPut {
			b.data[k] = fakeRecord{val: append([]byte(nil), req.Value...), ver: rep.Version}
		} else {
			delete(b.data, k)
		}
	case wire.OpMigrate:
		// Regions a, b and c, as a lease keyspace of the local3 world.
		if r := string(req.Value); r != "a" && r != "b" && r != "c" {
			rep.Err = &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: migrate %q: unknown region %q (valid: a, b, c)", req.Key, r)}
			return rep
		}
		rep.Value = append([]byte(nil), req.Value...)
	}
	return rep
}

// raw returns the stored bytes of key in keyspace ks, via the loop.
func (b *fakeBackend) raw(ks, key string) ([]byte, bool) {
	type result struct {
		v  []byte
		ok bool
	}
	ch := make(chan result, 1)
	b.loop <- func() {
		rec, ok := b.data[ks+"\x00"+key]
		ch <- result{rec.val, ok}
	}
	r := <-ch
	return r.v, r.ok
}

// fakeScan as Config.Scanner asks startServer for the fake backend's.
type fakeScan struct{ api.Scanner }

// Scan implements api.Scanner over the keys of keyspace ks, on the loop:
// the cursor is the next key to examine.
func (b *fakeBackend) Scan(ctx context.Context, ks, cursor string, count int) ([]api.KeyValue, string, error) {
	type result struct {
		page []api.KeyValue
		next string
	}
	ch := make(chan result, 1)
	b.loop <- func() {
		var keys []string
		for k := range b.data { // lint:order-independent: sorted below
			if space, key, _ := strings.Cut(k, "\x00"); space == ks && key >= cursor {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		var r result
		for i, k := range keys {
			if i == count {
				r.next = k
				break
			}
			r.page = append(r.page, api.KeyValue{Key: k, Value: append([]byte(nil), b.data[ks+"\x00"+k].val...)})
		}
		ch <- r
	}
	select {
	case r := <-ch:
		return r.page, r.next, nil
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
}

// cachingBackend is the fake backend as a node with published reads: a
// GET's reply is published (on the loop, before it is given), and any
// other request withdraws every published reply before it runs (on the
// loop, so before its reply), as a node's store Put withdraws its key's.
// unsafeIgnoreInFlight makes it a backend whose connections would read the
// published replies even with their own requests in flight (teeth).
type cachingBackend struct {
	*fakeBackend
	mu     sync.Mutex
	reads  map[string]*wire.Reply // keyspace + "\x00" + key + "\x00" + level
	served atomic.Int64
}

func newCachingBackend(b *fakeBackend) *cachingBackend {
	return &cachingBackend{fakeBackend: b, reads: map[string]*wire.Reply{}}
}

func cacheKey(ks, key string, l wire.Level) string { return ks + "\x00" + key + "\x00" + l.String() }

func (c *cachingBackend) Submit(req *wire.Request, done func(*wire.Reply)) {
	r := *req
	c.loop <- func() {
		if r.Op != wire.OpGet {
			c.mu.Lock()
			clear(c.reads)
			c.mu.Unlock()
			done(c.apply(&r))
			return
		}
		rep := c.apply(&r)
		if rep.Err == nil {
			pub := *rep
			c.mu.Lock()
			c.reads[cacheKey(r.Keyspace, r.Key, r.Level)] = &pub
			c.mu.Unlock()
		}
		done(rep)
	}
}

func (c *cachingBackend) CachedRead(ks string, key []byte, l wire.Level) (*wire.Reply, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reads[cacheKey(ks, string(key), l)]
	return r, ok
}

func (c *cachingBackend) CachedReadsServed(_ wire.Level, n int) { c.served.Add(int64(n)) }

var _ api.CachedReader = (*cachingBackend)(nil)
