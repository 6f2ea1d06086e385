package disk

import (
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
// Only while hold is set (Pebble.HoldThread); otherwise the files sync as
// the inner FS's do.
type holdingFS struct {
	vfs.FS
	hold *atomic.Bool
}

func (fs holdingFS) Create(name string) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name))
}

func (fs holdingFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname))
}

func (fs holdingFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, opts...))
}

// Unwrap returns the inner FS (vfs.Root uses it).
func (fs holdingFS) Unwrap() vfs.FS { return fs.FS }

func (fs holdingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil || f.Fd() == vfs.InvalidFd {
		return f, err
	}
	return holdingFile{f, fs.hold}, nil
}

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
