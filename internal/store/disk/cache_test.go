package disk

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestRowCacheAgainstMap drives the cache with random puts, drops and gets
// and checks every hit against a plain map, and the bounds after each step.
func TestRowCacheAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := newRowCache(64, 4096)
	ref := map[string]store.Record{}
	for i := 0; i < 100000; i++ {
		k := fmt.Sprintf("k%d", r.IntN(200))
		switch r.IntN(4) {
		case 0, 1:
			rec := store.Record{Value: make([]byte, r.IntN(200))}
			rec.Version.Node = 7
			c.put(k, rec, true)
			ref[k] = rec
		case 2:
			c.drop(k)
		case 3:
			if rec, found, ok := c.get(k); ok {
				want, exists := ref[k]
				if found != exists || (found && len(rec.Value) != len(want.Value)) {
					t.Fatalf("step %d: get(%q) = %d bytes, found %v; reference has %d, %v", i, k, len(rec.Value), found, len(want.Value), exists)
				}
			}
		}
		if len(c.entries) > 64 || c.bytes > 4096 || c.bytes < 0 {
			t.Fatalf("step %d: %d entries, %d bytes; bounds 64, 4096", i, len(c.entries), c.bytes)
		}
		n := 0
		for _, e := range c.ring {
			if e != nil {
				n++
				if c.entries[e.key] != e {
					t.Fatalf("step %d: ring slot for %q is stale", i, e.key)
				}
			}
		}
		if n != len(c.entries) {
			t.Fatalf("step %d: ring holds %d entries, map %d", i, n, len(c.entries))
		}
	}
}

// TestPebbleCacheSeesWrites: reads through the cache see every write,
// including absences cached before a key is written.
func TestPebbleCacheSeesWrites(t *testing.T) {
	p, err := OpenPebble(t.TempDir(), SyncNever)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, ok, _ := p.Get("k"); ok {
		t.Fatal("empty store found k")
	}
	buf := []byte("v1")
	if err := p.Put("k", store.Record{Value: buf}); err != nil {
		t.Fatal(err)
	}
	buf[1] = '9' // the caller reuses its buffer
	if r, ok, _ := p.Get("k"); !ok || string(r.Value) != "v1" {
		t.Fatalf("Get(k) = %q, %v; want v1 (the cache must not alias the caller's buffer)", r.Value, ok)
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	p.cache = newRowCache(DefaultCacheRows, DefaultCacheBytes) // cold cache: read from Pebble
	if r, ok, _ := p.Get("k"); !ok || string(r.Value) != "v1" {
		t.Fatalf("cold Get(k) = %q, %v; want v1", r.Value, ok)
	}
}

// TestRowCacheSize: Options.RowCacheBytes bounds the row cache's keys (one
// per RowCacheBytesPerKey) and its value bytes; the default is
// DefaultCacheBytes.
func TestRowCacheSize(t *testing.T) {
	for _, tc := range []struct {
		size     ByteSize
		wantRows int
	}{{0, DefaultCacheRows}, {64 << 10, 128}, {1 << 20, 2048}} {
		p, err := Open(t.TempDir(), Options{Sync: SyncNever, RowCacheBytes: tc.size})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(tc.size)
		if want == 0 {
			want = DefaultCacheBytes
		}
		if got := p.RowCacheBytes(); got != want {
			t.Errorf("RowCacheBytes(%d) = %d; want %d", tc.size, got, want)
		}
		if tc.size != 0 {
			v := wire.Version{TS: hlc.Timestamp{WallNanos: 1}, Node: 1}
			for i := range 4 * tc.wantRows {
				if err := p.Put(fmt.Sprintf("k%06d", i), store.Record{Value: []byte("v"), Version: v}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(p.cache.entries); n != tc.wantRows {
				t.Errorf("RowCacheBytes %d: the cache holds %d keys after %d writes; want %d", tc.size, n, 4*tc.wantRows, tc.wantRows)
			}
		}
		p.Close()
	}
}
