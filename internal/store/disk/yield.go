package disk

import (
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/vfs"
)

// yieldingFS is a vfs.FS whose sstable files yield the processor after
// every write. Only Pebble's flushes and compactions write sstables, in
// background goroutines, and a flush or compaction is CPU work (merging,
// compressing, filtering) between its writes. Go preempts a goroutine that
// does not block only after a 10 ms slice, so on a server with one P
// (GOMAXPROCS=1, the event loop's and the connections' core) a compaction
// held that P for whole slices while requests waited: over a million
// random keys, SET -P 16's p99 was 80 ms and its slowest request 118 ms.
// Yielding after each block written puts the compaction behind the
// goroutines that are ready, a block at a time: p99 13 ms, slowest 20 ms,
// at the same requests per second (docs/performance.md, "Writes to many
// keys"). Reads of sstables are not wrapped: the loop makes them.
type yieldingFS struct{ vfs.FS }

func (fs yieldingFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !isTable(name) {
		return f, err
	}
	return yieldingFile{f}, nil
}

// Unwrap returns the inner FS (vfs.Root uses it).
func (fs yieldingFS) Unwrap() vfs.FS { return fs.FS }

// isTable reports whether name is one of Pebble's sstables (NNNNNN.sst).
func isTable(name string) bool { return strings.HasSuffix(name, ".sst") }

// yieldingFile is an sstable being written by a flush or compaction.
type yieldingFile struct{ vfs.File }

// tableYields counts the yields made, for tests.
var tableYields atomic.Int64

func (f yieldingFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	tableYields.Add(1)
	runtime.Gosched()
	return n, err
}
