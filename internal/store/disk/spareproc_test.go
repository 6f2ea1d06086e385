package disk

import (
	"fmt"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// fakeProcs stands in for runtime.GOMAXPROCS.
type fakeProcs struct {
	n    int
	sets []int
}

func (f *fakeProcs) procs(n int) int {
	prev := f.n
	if n > 0 {
		f.n = n
		f.sets = append(f.sets, n)
	}
	return prev
}

// TestSpareProcsApply drives begin/end's decisions (apply, called
// synchronously here) over a fake GOMAXPROCS.
func TestSpareProcsApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start int    // GOMAXPROCS
		cpus  int    // the machine's
		steps string // b: a job begins, e: one ends, x: someone sets GOMAXPROCS to 4
		sets  string // every change of GOMAXPROCS, the x's included
	}{
		{"one job", 1, 2, "be", "[2 1]"},
		{"overlapping jobs raise once", 1, 2, "bbee", "[2 1]"},
		{"raised only while a job runs", 1, 2, "bebe", "[2 1 2 1]"},
		{"no spare core", 2, 2, "be", "[]"},
		{"one above, below the cpus", 3, 4, "be", "[4 3]"},
		{"a change by someone else stays", 1, 8, "bxe", "[2 4]"},
		{"a change while none runs is the new base", 1, 8, "bexbe", "[2 1 4 5 4]"},
	} {
		f := &fakeProcs{n: tc.start}
		s := &spareProcs{procs: f.procs, cpus: tc.cpus}
		for _, step := range tc.steps {
			switch step {
			case 'b':
				s.active.Add(1)
			case 'e':
				s.active.Add(-1)
			case 'x':
				f.procs(4)
				continue
			}
			s.apply()
		}
		if got := fmt.Sprint(f.sets); got != tc.sets {
			t.Errorf("%s: GOMAXPROCS set to %s; want %s", tc.name, got, tc.sets)
		}
	}
}

// TestSpareProc: with Options.SpareProc a flush raises GOMAXPROCS by one
// and the process is back where it was after it (over a fake GOMAXPROCS:
// the engine's Pebble listener drives it); without, nothing is asked.
func TestSpareProc(t *testing.T) {
	for _, on := range []bool{false, true} {
		f := &fakeProcs{n: 1}
		s := &spareProcs{procs: f.procs, cpus: 2, spawn: func(f func()) { f() }}
		p, err := Open(t.TempDir(), Options{Sync: SyncNever, SpareProc: on, spare: s})
		if err != nil {
			t.Fatal(err)
		}
		v := wire.Version{TS: hlc.Timestamp{WallNanos: 10}, Node: 1}
		for i := range 100 {
			if err := p.Put(fmt.Sprintf("k-%04d", i), store.Record{Value: []byte("v"), Version: v}); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := p.db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil { // waits for Pebble's jobs
			t.Fatal(err)
		}
		want := "[]"
		if on {
			want = "[2 1]" // the flush's
		}
		if got := fmt.Sprint(f.sets); got != want || s.active.Load() != 0 {
			t.Fatalf("SpareProc %v: GOMAXPROCS set to %s with %d jobs running; want %s and none", on, got, s.active.Load(), want)
		}
		if p.SpareProc() != on {
			t.Errorf("SpareProc() = %v; want %v", p.SpareProc(), on)
		}
	}
}

// TestSpareProcNeedsGOMAXPROCS: without the GOMAXPROCS environment
// variable, SpareProc is off (Go's default already follows the CPUs and
// any quota).
func TestSpareProcNeedsGOMAXPROCS(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	p, err := Open(t.TempDir(), Options{Sync: SyncNever, SpareProc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.SpareProc() {
		t.Fatal("SpareProc in effect without GOMAXPROCS set")
	}
}

// TestSpareProcsEvents: a job raises GOMAXPROCS when it creates its first
// table, not when it begins, and the last job's end restores it; a job that
// writes no table (a move) changes nothing.
func TestSpareProcsEvents(t *testing.T) {
	f := &fakeProcs{n: 1}
	s := &spareProcs{procs: f.procs, cpus: 2, spawn: func(f func()) { f() }}
	step := func(name string, fn func(), want string) {
		t.Helper()
		fn()
		if got := fmt.Sprint(f.sets); got != want {
			t.Fatalf("after %s: GOMAXPROCS set to %s; want %s", name, got, want)
		}
	}
	step("a move begins", s.begin, "[]")
	step("the move ends", s.end, "[]")
	step("a flush begins", s.begin, "[]")
	step("its table", s.tableCreated, "[2]")
	step("a compaction begins", s.begin, "[2]")
	step("its table", s.tableCreated, "[2]")
	step("the flush ends", s.end, "[2]")
	step("the compaction ends", s.end, "[2 1]")
}
