package disk

import (
	"runtime"
	"testing"

	"github.com/lightcone/lightcone/internal/store"
)

// TestFsyncHoldsThread: with Options.FsyncHoldsThread every synced commit
// goes through the raw fsync (and none without it), and what was synced
// is there after a reopen.
func TestFsyncHoldsThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("raw fsyncs are Linux-only")
	}
	for _, hold := range []bool{false, true} {
		dir := t.TempDir()
		e, err := Open(dir, Options{Sync: SyncAlways, FsyncHoldsThread: hold})
		if err != nil {
			t.Fatal(err)
		}
		before := heldFsyncs.Load()
		const n = 20
		for i := range n {
			if err := e.Put("k", store.Record{Value: []byte{byte(i)}}); err != nil {
				t.Fatal(err)
			}
			if err := e.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		raw := heldFsyncs.Load() - before
		if hold && raw < n {
			t.Errorf("FsyncHoldsThread: %d raw fsyncs for %d synced commits; want at least one each", raw, n)
		}
		if !hold && raw != 0 {
			t.Errorf("without FsyncHoldsThread: %d raw fsyncs; want none", raw)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		e, err = Open(dir, Options{Sync: SyncAlways, FsyncHoldsThread: hold})
		if err != nil {
			t.Fatal(err)
		}
		r, ok, err := e.Get("k")
		if err != nil || !ok || len(r.Value) != 1 || r.Value[0] != n-1 {
			t.Errorf("hold=%v: after reopen Get(k) = %v, %v, %v; want the last synced value %d", hold, r, ok, err, n-1)
		}
		e.Close()
	}
}
