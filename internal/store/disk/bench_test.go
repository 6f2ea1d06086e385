package disk

import (
	"strconv"
	"testing"

	"github.com/lightcone/lightcone/internal/store"
)

// BenchmarkPut: Puts of 1000-byte values (YCSB's size) into the engine's
// batch, committed without fsync every 32 (a group commit's worth), so
// the figure is the Put path and the commit, not the disk.
func BenchmarkPut(b *testing.B) {
	e, err := Open(b.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
	}
	rec := store.Record{Value: make([]byte, 1000)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := e.Put(keys[i%len(keys)], rec); err != nil {
			b.Fatal(err)
		}
		if i%32 == 31 {
			if err := e.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
