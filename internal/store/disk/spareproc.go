package disk

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// spareProcs gives the process one more Go scheduler slot (P) while an
// engine that asked for it (Options.SpareProc) flushes or compacts. With
// GOMAXPROCS=1 the background work then runs beside the goroutines that
// serve requests instead of taking their one P, as Redis's AOF rewrite runs
// in a forked child beside its one thread; between jobs the process runs at
// the GOMAXPROCS it had before the first of them began.
//
// Pebble reports a job's start and end (begin, end) with its own mutex
// held, and changing GOMAXPROCS stops the world, which waits for a garbage
// collection under way and for a thread holding its P through an fsync
// (FsyncHoldsThread). So begin and end only count. The raise is made as a
// job creates its first table (Pebble's TableCreated, reported without its
// mutex, before the job's CPU work), on the job's own goroutine: a
// goroutine started for it would wait for the one P the job holds. The
// restore is made by a goroutine of its own once the last job ends. Jobs
// that write no table (moves, deletions) change nothing.
type spareProcs struct {
	procs func(n int) int // runtime.GOMAXPROCS: sets n > 0, returns the previous
	cpus  int             // the most Ps to raise to (runtime.NumCPU)
	// spawn runs end's apply; nil: on a goroutine of its own (tests run
	// it in place, to see every change in order).
	spawn func(func())

	active atomic.Int64 // flushes and compactions running

	mu     sync.Mutex // apply's: one change at a time
	raised bool       // a raise is in force: GOMAXPROCS was set to base+1
	base   int        // GOMAXPROCS before the raise in force
}

// spare is the process's spareProcs, shared by every engine that opts in:
// GOMAXPROCS is process-wide.
var spare = &spareProcs{procs: runtime.GOMAXPROCS, cpus: runtime.NumCPU()}

// begin is called as a flush or compaction begins (Pebble's FlushBegin and
// CompactionBegin events; each is followed by its End, on every path).
func (s *spareProcs) begin() { s.active.Add(1) }

// tableCreated is called as a flush or compaction creates a table.
func (s *spareProcs) tableCreated() {
	if s.active.Load() > 0 {
		s.apply()
	}
}

// end is called as a flush or compaction ends.
func (s *spareProcs) end() {
	s.active.Add(-1)
	s.run()
}

// run runs apply through spawn.
func (s *spareProcs) run() {
	if s.spawn != nil {
		s.spawn(s.apply)
		return
	}
	go s.apply()
}

// apply brings GOMAXPROCS to what the jobs running call for: one more than
// the base while any runs (if below cpus), the base when none does. A
// GOMAXPROCS someone else changed meanwhile is left as they set it.
func (s *spareProcs) apply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch running := s.active.Load() > 0; {
	case running && !s.raised:
		if base := s.procs(0); base < s.cpus {
			s.procs(base + 1)
			s.base, s.raised = base, true
		}
	case !running && s.raised:
		if s.procs(0) == s.base+1 {
			s.procs(s.base)
		}
		s.raised = false
	}
}
