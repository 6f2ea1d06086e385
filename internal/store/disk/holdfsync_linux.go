package disk

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/vfs"
	"golang.org/x/sys/unix"
)

// holdingFS is a vfs.FS whose files fsync with raw system calls: the
// calling goroutine's thread keeps its P while the disk flushes
// (Options.FsyncHoldsThread). Go's syscall.Fdatasync enters the scheduler's
// syscall state instead: after 20 µs sysmon hands the P to another thread
// (a futex wake-up and a context switch), and the fsync's thread, back,
// finds the P taken and parks (another switch) — about four switches per
// fsync, and sysmon kept polling every 20 µs while fsyncs keep coming.
// Only while hold is set (Pebble.HoldThread), and only the write-ahead
// log's files, whose fsync is the one the loop waits for: a flush's or a
// compaction's fsyncs (sstables, the manifest) run in Pebble's background
// goroutines, and holding the P through them would keep the loop and the
// connections from running meanwhile. Other files sync as the inner FS's
// do.
type holdingFS struct {
	vfs.FS
	hold *atomic.Bool
}

func (fs holdingFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	return fs.wrap(name, f, err)
}

func (fs holdingFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	return fs.wrap(newname, f, err)
}

func (fs holdingFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, opts...)
	return fs.wrap(name, f, err)
}

// Unwrap returns the inner FS (vfs.Root uses it).
func (fs holdingFS) Unwrap() vfs.FS { return fs.FS }

func (fs holdingFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || f.Fd() == vfs.InvalidFd || !isWAL(name) {
		return f, err
	}
	return holdingFile{f, fs.hold}, nil
}

// isWAL reports whether name is one of Pebble's write-ahead log files
// (NNNNNN.log).
func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

// heldFsyncs counts the raw fsyncs made, for tests.
var heldFsyncs atomic.Int64

// holdingFile is a file whose Sync and SyncData hold the thread while
// hold is set.
type holdingFile struct {
	vfs.File
	hold *atomic.Bool
}

func (f holdingFile) SyncData() error {
	if !f.hold.Load() {
		return f.File.SyncData()
	}
	return rawSync(unix.SYS_FDATASYNC, f.Fd())
}

func (f holdingFile) Sync() error {
	if !f.hold.Load() {
		return f.File.Sync()
	}
	return rawSync(unix.SYS_FSYNC, f.Fd())
}

func rawSync(trap, fd uintptr) error {
	heldFsyncs.Add(1)
	for {
		_, _, e := unix.RawSyscall(trap, fd, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
