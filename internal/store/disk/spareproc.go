package disk

import (
	"runtime"
	"sync"
)

// spareProc gives the process one more Go scheduler slot (P) while an
// engine that asked for it (Options.SpareProc) flushes or compacts. With
// GOMAXPROCS=1 the background work then runs beside the goroutines that
// serve requests instead of taking their one P, as Redis's AOF rewrite runs
// in a forked child beside its one thread; between jobs the process runs
// at the GOMAXPROCS it had before the first of them began. It is
// process-wide, as GOMAXPROCS is, and shared by every engine that opts in.
// Each change of GOMAXPROCS stops the world briefly (microseconds, or until
// a thread holding its P through an fsync returns: FsyncHoldsThread).
var spareProc struct {
	mu     sync.Mutex
	active int // flushes and compactions running
	base   int // GOMAXPROCS before the first of them began
	raised int // times GOMAXPROCS was raised, for tests
	peak   int // the most GOMAXPROCS seen as a job ended, for tests
}

// spareProcBegin is called as a flush or compaction begins (Pebble's
// FlushBegin and CompactionBegin events; each is followed by its End).
func spareProcBegin() {
	s := &spareProc
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active++
	if s.active > 1 {
		return
	}
	s.base = runtime.GOMAXPROCS(0)
	if s.base < runtime.NumCPU() {
		runtime.GOMAXPROCS(s.base + 1)
		s.raised++
	}
}

// spareProcEnd is called as a flush or compaction ends.
func spareProcEnd() {
	s := &spareProc
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	s.peak = max(s.peak, runtime.GOMAXPROCS(0))
	if s.active == 0 && runtime.GOMAXPROCS(0) != s.base {
		runtime.GOMAXPROCS(s.base)
	}
}
