package disk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/vfs"

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

// TestPebbleCommitDurableWhenWaited: under SyncAlways, Commit's writes are
// visible at once, and once its durable func returns they survive a crash
// (Pebble's strict in-memory filesystem keeps only what was synced), even
// while later commits are still in flight.
func TestPebbleCommitDurableWhenWaited(t *testing.T) {
	mem := vfs.NewStrictMem()
	open := func() *Pebble {
		t.Helper()
		p, err := Open("/data", Options{Sync: SyncAlways, FS: NewFillingFS(mem, 1<<30)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The data directory's own entry must survive the crash too.
	if err := mem.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := mem.OpenDir("/")
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(root.Sync(), root.Close()); err != nil {
		t.Fatal(err)
	}
	p := open()
	var waits []func() error
	for i := range 3 {
		key := fmt.Sprint("k", i)
		if err := p.Put(key, store.Record{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		wait, err := p.Commit()
		if err != nil || wait == nil {
			t.Fatalf("Commit = %v, %v; want a durable func", wait != nil, err)
		}
		if _, ok, err := p.Get(key); !ok || err != nil {
			t.Fatalf("Get(%s) after Commit = %v, %v; want it visible before it is durable", key, ok, err)
		}
		// Past the row cache too: a key it evicted is read from Pebble.
		_, closer, err := p.db.Get([]byte(dataPrefix + key))
		if err != nil {
			t.Fatalf("Pebble Get(%s) after Commit: %v; want it visible before it is durable", key, err)
		}
		closer.Close()
		waits = append(waits, wait)
	}
	if wait, err := p.Commit(); wait != nil || err != nil {
		t.Fatalf("Commit with no writes = %v, %v; want nil, nil", wait != nil, err)
	}
	for _, wait := range waits[:2] {
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	}
	mem.SetIgnoreSyncs(true) // the crash: nothing written from now on is synced
	if err := waits[2](); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	mem.ResetToSyncedState()
	mem.SetIgnoreSyncs(false)
	p = open()
	defer p.Close()
	for _, key := range []string{"k0", "k1"} {
		if _, ok, err := p.Get(key); !ok || err != nil {
			t.Errorf("Get(%s) after the crash = %v, %v; want the write whose durable func returned", key, ok, err)
		}
	}
}
