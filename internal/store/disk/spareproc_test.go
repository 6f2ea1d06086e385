package disk

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// spareState reads the counters under the lock.
func spareState() (active, raised, peak int) {
	spareProc.mu.Lock()
	defer spareProc.mu.Unlock()
	return spareProc.active, spareProc.raised, spareProc.peak
}

// flushSome writes a few keys and flushes them into a table.
func flushSome(t *testing.T, p *Pebble) {
	t.Helper()
	v := wire.Version{TS: hlc.Timestamp{WallNanos: 10}, Node: 1}
	for i := range 100 {
		if err := p.Put(fmt.Sprintf("k-%04d", i), store.Record{Value: []byte("v"), Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := p.db.Flush(); err != nil {
		t.Fatal(err)
	}
	// Pebble reports the flush's end before Flush returns, but poll rather
	// than rely on it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if active, _, _ := spareState(); active == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a flush or compaction was still running 10 s after Flush returned")
		}
	}
}

// TestSpareProc: with Options.SpareProc a flush runs at GOMAXPROCS+1 and
// the process is back at its GOMAXPROCS after it; without, GOMAXPROCS is
// left alone.
func TestSpareProc(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: no spare core to raise GOMAXPROCS to")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	off, err := Open(t.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	_, raised0, _ := spareState()
	flushSome(t, off)
	if _, raised, _ := spareState(); raised != raised0 {
		t.Fatalf("without SpareProc a flush raised GOMAXPROCS (%d times)", raised-raised0)
	}

	on, err := Open(t.TempDir(), Options{Sync: SyncNever, SpareProc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	spareProc.mu.Lock()
	spareProc.peak = 0
	spareProc.mu.Unlock()
	flushSome(t, on)
	_, raised, peak := spareState()
	if raised == raised0 {
		t.Fatal("with SpareProc a flush did not raise GOMAXPROCS")
	}
	if peak != 2 {
		t.Fatalf("GOMAXPROCS as the flush ended = %d; want 2 (1 + the spare)", peak)
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS after the flush = %d; want 1, as before it", n)
	}
}
