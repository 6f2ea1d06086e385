package disk

import (
	"os"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/vfs"
)

// FillingFS is a test seam: a vfs.FS over another one with a settable
// capacity. Bytes written, preallocated or created count against it; a
// write past it fails with ENOSPC (as a full disk's does, so
// vfs.IsNoSpaceError and vfs.OnDiskFull recognise it) and writes nothing;
// removing a file frees its bytes. GetDiskUsage reports the capacity, the
// bytes in use and what is left, so the engine's free-space checks see the
// same disk the writes do. Raising the capacity is space returning.
//
// It counts only files created, reused or opened for writing through it,
// by the largest extent written or preallocated; use it on an empty
// directory.
type FillingFS struct {
	vfs.FS
	mu       sync.Mutex
	capacity int64
	used     int64
	extent   map[string]int64 // bytes counted per file path
}

// NewFillingFS wraps inner (vfs.Default, vfs.NewMem()) with capacity bytes.
func NewFillingFS(inner vfs.FS, capacity int64) *FillingFS {
	return &FillingFS{FS: inner, capacity: capacity, extent: map[string]int64{}}
}

// SetCapacity changes the capacity; below Used, every growing write fails.
func (fs *FillingFS) SetCapacity(n int64) {
	fs.mu.Lock()
	fs.capacity = n
	fs.mu.Unlock()
}

// Used returns the bytes counted against the capacity.
func (fs *FillingFS) Used() int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.used
}

// grow counts path's extent up to end, or fails with ENOSPC past capacity.
func (fs *FillingFS) grow(op, path string, end int64) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	add := end - fs.extent[path]
	if add <= 0 {
		return nil
	}
	if fs.used+add > fs.capacity {
		return &os.PathError{Op: op, Path: path, Err: syscall.ENOSPC}
	}
	fs.used += add
	fs.extent[path] = end
	return nil
}

func (fs *FillingFS) forget(path string) {
	fs.mu.Lock()
	fs.used -= fs.extent[path]
	delete(fs.extent, path)
	fs.mu.Unlock()
}

func (fs *FillingFS) move(from, to string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if e, ok := fs.extent[from]; ok {
		fs.used -= fs.extent[to]
		fs.extent[to] = e
		delete(fs.extent, from)
	}
}

// Create implements vfs.FS: a new or truncated file counts nothing yet.
func (fs *FillingFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	fs.forget(name)
	return &fillingFile{File: f, fs: fs, path: name}, nil
}

// OpenReadWrite implements vfs.FS.
func (fs *FillingFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, opts...)
	if err != nil {
		return nil, err
	}
	return &fillingFile{File: f, fs: fs, path: name}, nil
}

// ReuseForWrite implements vfs.FS: the old file's bytes move to the new name.
func (fs *FillingFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	fs.move(oldname, newname)
	return &fillingFile{File: f, fs: fs, path: newname}, nil
}

// Remove implements vfs.FS: the file's bytes are free again.
func (fs *FillingFS) Remove(name string) error {
	if err := fs.FS.Remove(name); err != nil {
		return err
	}
	fs.forget(name)
	return nil
}

// Rename implements vfs.FS.
func (fs *FillingFS) Rename(oldname, newname string) error {
	if err := fs.FS.Rename(oldname, newname); err != nil {
		return err
	}
	fs.move(oldname, newname)
	return nil
}

// GetDiskUsage implements vfs.FS: the capacity, not the inner disk's.
func (fs *FillingFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	u := vfs.DiskUsage{TotalBytes: uint64(max(fs.capacity, 0)), UsedBytes: uint64(fs.used)}
	if fs.capacity > fs.used {
		u.AvailBytes = uint64(fs.capacity - fs.used)
	}
	return u, nil
}

// Unwrap returns the inner FS (vfs.Root uses it).
func (fs *FillingFS) Unwrap() vfs.FS { return fs.FS }

type fillingFile struct {
	vfs.File
	fs   *FillingFS
	path string
	off  int64 // Write's offset
}

func (f *fillingFile) Write(p []byte) (int, error) {
	if err := f.fs.grow("write", f.path, f.off+int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.File.Write(p)
	f.off += int64(n)
	return n, err
}

func (f *fillingFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.grow("write", f.path, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *fillingFile) Preallocate(off, n int64) error {
	if err := f.fs.grow("fallocate", f.path, off+n); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}
