package disk

import (
	"fmt"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	for _, r := range []store.Record{
		{},
		{Value: []byte("v"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: 1 << 60, Logical: 7}, Node: 3}},
		{Tombstone: true, Version: wire.Version{TS: hlc.Timestamp{WallNanos: -5}, Node: -1}},
	} {
		got, err := DecodeRecord(AppendRecord(nil, r))
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != r.Version || got.Tombstone != r.Tombstone || string(got.Value) != string(r.Value) {
			t.Errorf("DecodeRecord(AppendRecord(%+v)) = %+v", r, got)
		}
	}
	if _, err := DecodeRecord([]byte{9, 0}); err == nil {
		t.Error("DecodeRecord(short) = nil error")
	}
	b := AppendRecord(nil, store.Record{})
	b[0] = 2
	if _, err := DecodeRecord(b); err == nil {
		t.Error("DecodeRecord(unknown format) = nil error")
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(AppendRecord(nil, store.Record{Value: []byte("x")}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		if again := AppendRecord(nil, r); string(again) != string(b) {
			t.Fatalf("re-encoding differs: %x vs %x", again, b)
		}
	})
}

// TestPebbleDurableAcrossReopen: what Sync committed is there after the
// store is reopened; a batch is visible to Get before it is synced.
func TestPebbleDurableAcrossReopen(t *testing.T) {
	for _, policy := range SyncPolicies() {
		t.Run(string(policy), func(t *testing.T) {
			dir := t.TempDir()
			p, err := OpenPebble(dir, policy)
			if err != nil {
				t.Fatal(err)
			}
			v := wire.Version{TS: hlc.Timestamp{WallNanos: 10}, Node: 1}
			if err := p.Put("k", store.Record{Value: []byte("v1"), Version: v}); err != nil {
				t.Fatal(err)
			}
			if r, ok, err := p.Get("k"); err != nil || !ok || string(r.Value) != "v1" {
				t.Fatalf("Get before Sync = %q, %v, %v; want v1", r.Value, ok, err)
			}
			if err := p.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := p.Put("gone", store.Record{Tombstone: true, Version: v}); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p, err = OpenPebble(dir, policy)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			r, ok, err := p.Get("k")
			if err != nil || !ok || string(r.Value) != "v1" || r.Version != v {
				t.Fatalf("Get after reopen = %+v, %v, %v; want v1 at %v", r, ok, err, v)
			}
			if _, ok, _ := p.Get("missing"); ok {
				t.Fatal("Get(missing) found a value")
			}
		})
	}
	if _, err := OpenPebble(t.TempDir(), "sometimes"); err == nil {
		t.Fatal("OpenPebble with an unknown policy: no error")
	}
}

// TestBloomFiltersSkipTables: reads of keys that no table holds are
// answered by the tables' bloom filters, without a data block (a write's
// read of a new key, below the row cache; docs/performance.md, "Writes to
// many keys"). Without filters Pebble counts no filter hits at all.
func TestBloomFiltersSkipTables(t *testing.T) {
	p, err := OpenPebble(t.TempDir(), SyncNever)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 1000
	v := wire.Version{TS: hlc.Timestamp{WallNanos: 10}, Node: 1}
	for i := range n {
		if err := p.Put(fmt.Sprintf("present-%04d", i), store.Record{Value: []byte("v"), Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := p.db.Flush(); err != nil { // into a table, out of the memtable
		t.Fatal(err)
	}
	before := p.db.Metrics().Filter.Hits
	for i := range n {
		if _, ok, err := p.Get(fmt.Sprintf("absent-%04d", i)); err != nil || ok {
			t.Fatalf("Get(absent-%04d) = %v, %v; want not found", i, ok, err)
		}
	}
	// 10 bits per key: about 1% false positives.
	if hits := p.db.Metrics().Filter.Hits - before; hits < n*9/10 {
		t.Errorf("%d of %d reads of absent keys were answered by a bloom filter; want at least %d", hits, n, n*9/10)
	}
	if r, ok, err := p.Get("present-0007"); err != nil || !ok || string(r.Value) != "v" {
		t.Fatalf("Get(present-0007) = %q, %v, %v; want v", r.Value, ok, err)
	}
}
