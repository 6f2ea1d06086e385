//go:build !linux

package disk

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/vfs"
)

// holdingFS is the FS itself off Linux: Options.FsyncHoldsThread changes
// nothing there.
type holdingFS struct {
	vfs.FS
	hold *atomic.Bool
}

// Unwrap returns the inner FS (vfs.Root uses it).
func (fs holdingFS) Unwrap() vfs.FS { return fs.FS }

var heldFsyncs atomic.Int64
