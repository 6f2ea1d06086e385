package disk

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

const testCapacity = 20 << 20 // the 20 MiB tmpfs of the disk-full report

func openFilling(t *testing.T, fs *FillingFS, dir string) *Pebble {
	t.Helper()
	p, err := Open(dir, Options{Sync: SyncAlways, FS: fs, CheckInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// putSync writes one key the way the node does a client write: asked
// Writable first, then Put and Sync.
func putSync(p *Pebble, i int, value []byte) error {
	if err := p.AdmitWrite(); err != nil {
		return err
	}
	v := wire.Version{TS: hlc.Timestamp{WallNanos: int64(i + 1)}, Node: 1}
	if err := p.Put(fmt.Sprintf("k%06d", i), store.Record{Value: value, Version: v}); err != nil {
		return err
	}
	return p.Sync()
}

// TestDiskFullRefusesBeforePebbleFails: on a 20 MiB filesystem, writes
// made the way the node makes them are refused with a *NoSpaceError
// before Pebble meets ENOSPC; reads keep working; once capacity returns
// writes are taken again on their own; every acknowledged write is there
// after a reopen.
func TestDiskFullRefusesBeforePebbleFails(t *testing.T) {
	fs := NewFillingFS(vfs.NewMem(), testCapacity)
	dir := "/data"
	p := openFilling(t, fs, dir)
	value := make([]byte, 4<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(value) // incompressible
	acked := 0
	var refused error
	for i := 0; i < 10000; i++ {
		if err := putSync(p, i, value); err != nil {
			refused = err
			break
		}
		acked++
	}
	var nse *NoSpaceError
	if !errors.As(refused, &nse) {
		t.Fatalf("after %d writes: error %v; want a *NoSpaceError", acked, refused)
	}
	if s := p.Space(); s.Writable || s.Reason == "" || s.Refused == 0 {
		t.Errorf("Space() = %+v; want not writable, with a reason and a refusal counted", s)
	}
	t.Logf("acked %d writes of %d bytes (%.1f MiB) before refusing: %v", acked, len(value), float64(acked*len(value))/(1<<20), refused)
	if acked*len(value) < testCapacity/2 {
		t.Errorf("only %d bytes acknowledged on a %d-byte filesystem; the reserve is too large", acked*len(value), testCapacity)
	}
	if r, ok, err := p.Get("k000000"); err != nil || !ok || len(r.Value) != len(value) {
		t.Fatalf("Get while full = %v, %v; want the value", ok, err)
	}
	fs.SetCapacity(2 * testCapacity)
	waitWritable(t, p)
	if err := putSync(p, acked, value); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}
	acked++
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = openFilling(t, fs, dir)
	defer p.Close()
	for i := range acked {
		if _, ok, err := p.Get(fmt.Sprintf("k%06d", i)); err != nil || !ok {
			t.Fatalf("acknowledged write %d missing after reopen: %v, %v", i, ok, err)
		}
	}
}

// TestDiskFullBallastSavesInternalWrite: when the disk fills under the
// engine (capacity drops below what is in use: another process filled it),
// a write that goes ahead anyway (the protocols' own writes are not asked
// Writable) meets ENOSPC, the ballast is released and the write succeeds;
// client writes stay refused until the ballast can be allocated again.
func TestDiskFullBallastSavesInternalWrite(t *testing.T) {
	fs := NewFillingFS(vfs.NewMem(), testCapacity)
	p := openFilling(t, fs, "/data")
	defer p.Close()
	if s := p.Space(); s.BallastBytes == 0 || !s.Writable {
		t.Fatalf("Space() at open = %+v; want a ballast and writable", s)
	}
	fs.SetCapacity(fs.Used())
	// Force a WAL rotation, the write Pebble cannot survive failing: a
	// batch over the memtable size goes to a new WAL and memtable.
	big := make([]byte, MemTableSize(testCapacity))
	v := wire.Version{TS: hlc.Timestamp{WallNanos: 1}, Node: 1}
	if err := p.Put("big", store.Record{Value: big, Version: v}); err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(); err != nil {
		t.Fatalf("Sync with the disk full and the ballast to release: %v", err)
	}
	var nse *NoSpaceError
	if err := p.Writable(); !errors.As(err, &nse) || !nse.BallastReleased {
		t.Fatalf("Writable() = %v; want a *NoSpaceError saying the ballast was released", err)
	}
	fs.SetCapacity(testCapacity * 2)
	waitWritable(t, p)
	if s := p.Space(); s.BallastBytes == 0 {
		t.Errorf("Space() after space returned = %+v; want the ballast back", s)
	}
}

// TestDiskFullCommitFailureIsNotFatal: with no ballast left, a commit that
// meets ENOSPC fails Sync (nothing acknowledged) instead of exiting the
// process, and the engine stays failed.
func TestDiskFullCommitFailureIsNotFatal(t *testing.T) {
	fs := NewFillingFS(vfs.NewMem(), testCapacity)
	p := openFilling(t, fs, "/data")
	fs.SetCapacity(0) // even the ballast's release cannot help
	big := make([]byte, MemTableSize(testCapacity))
	if err := p.Put("big", store.Record{Value: big}); err != nil {
		t.Fatal(err)
	}
	err := p.Sync()
	if err == nil {
		t.Fatal("Sync on a filesystem of capacity 0 succeeded")
	}
	if err2 := p.Sync(); err2 == nil {
		t.Error("second Sync after a failed commit succeeded; the failure must stick")
	}
	if p.Writable() == nil {
		t.Error("Writable() = nil after a failed commit")
	}
	if _, ok, _ := p.Get("big"); ok {
		t.Error("Get(big) found the write whose commit failed")
	}
	if cerr := p.Close(); cerr == nil {
		t.Error("Close after a failed commit returned nil")
	}
	t.Logf("Sync: %v", err)
}

func TestReserveScales(t *testing.T) {
	for _, c := range []struct{ total, mem, reserve uint64 }{
		{20 << 20, 320 << 10, 1280 << 10},
		{1 << 30, 4 << 20, 1 << 30 / 20},
		{1 << 40, 4 << 20, 1 << 30},
		{1 << 20, 256 << 10, 1 << 20},
	} {
		if got := MemTableSize(c.total); got != c.mem {
			t.Errorf("MemTableSize(%s) = %s; want %s", Bytes(c.total), Bytes(got), Bytes(c.mem))
		}
		if got := DefaultReserve(c.total); got != c.reserve {
			t.Errorf("DefaultReserve(%s) = %s; want %s", Bytes(c.total), Bytes(got), Bytes(c.reserve))
		}
	}
}

func waitWritable(t *testing.T, p *Pebble) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.Writable() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still refusing writes 5s after space returned: %v", p.Writable())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"1048576": 1 << 20, "64MiB": 64 << 20, "1 GiB": 1 << 30, "2MB": 2e6, "1.5KiB": 1536, "0": 0, "10B": 10} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "12 parsecs", "1e30GiB"} {
		if got, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) = %d; want an error", in, got)
		}
	}
}
