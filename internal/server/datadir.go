package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the file in a data directory that the server using it
// holds locked (flock) and writes its pid into.
const LockFile = "lightcone.lock"

// dataDir is a node's data directory, held by this process.
type dataDir struct {
	path    string
	created bool     // the directory did not exist before this start
	lock    *os.File // flocked for as long as the server runs
}

// openDataDir creates dir if needed and locks it, so that two servers
// never share one store. If another process holds the lock, the error
// names the lock file and that process's pid.
func openDataDir(dir string) (*dataDir, error) {
	d := &dataDir{path: dir}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		d.created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	name := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data dir: %w", err), d.remove())
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another server"
		if b, rerr := os.ReadFile(name); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("another server (pid %d)", pid)
			}
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			err = fmt.Errorf("data dir %s is in use: %s holds its lock file %s", dir, holder, name)
		} else {
			err = fmt.Errorf("data dir: lock %s: %w", name, err)
		}
		return nil, errors.Join(err, f.Close())
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data dir: lock %s: %w", name, err), f.Close(), d.remove())
	}
	d.lock = f
	return d, nil
}

// close releases the lock. The file stays; the next holder overwrites
// its pid.
func (d *dataDir) close() error { return d.lock.Close() }

// remove deletes the directory if this start created it: a start that
// failed leaves no empty store behind.
func (d *dataDir) remove() error {
	if !d.created {
		return nil
	}
	return os.RemoveAll(d.path)
}
