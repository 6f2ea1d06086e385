package rsm

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// The storage tests cut a change of the stored log (a compaction, a
// snapshot install) after each of its writes, as a torn crash may
// (store.Mem.CrashTorn keeps a prefix of the unsynced writes), and load
// what is left: it must be the log before the change or the log after it,
// never an error or a third log, and loading must leave no entry the
// snapshot covers.

// cutStore applies the first n Puts and drops the rest.
type cutStore struct {
	store.Store
	n int
}

func (c *cutStore) Put(key string, rec store.Record) error {
	if c.n == 0 {
		return nil
	}
	c.n--
	return c.Store.Put(key, rec)
}

// storeEnv is an Env with only a store (compact uses nothing else).
type storeEnv struct {
	env.Env
	st store.Store
}

func (s storeEnv) Store() store.Store { return s.st }

// fixedSM is a state machine whose snapshot is its name.
type fixedSM struct{ name string }

func (fixedSM) Apply(env.Env, uint64, []byte) []byte { return nil }
func (fixedSM) Applied(env.Env, uint64, []byte)      {}
func (fixedSM) Readable(env.Env, uint64)             {}
func (s fixedSM) Snapshot(env.Env) []byte            { return []byte(s.name) }
func (fixedSM) Restore(env.Env, []byte) error        { return nil }

// testGroup is a member of a group of 3 loaded from st.
func testGroup(t *testing.T, st store.Store) *Group {
	t.Helper()
	g := New(Config{Group: "t", Members: []wire.NodeID{0, 1, 2}}, fixedSM{"state"})
	ms, snap, hi, err := g.load(st)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	g.ms, g.hi, g.applied, g.snapIndex = ms, hi, bootIndex, bootIndex
	if snap != nil {
		g.applied, g.snapIndex = snap.GetMetadata().GetIndex(), snap.GetMetadata().GetIndex()
	}
	return g
}

// ents are entries from..to of term.
func ents(term, from, to uint64) []*pb.Entry {
	var es []*pb.Entry
	for i := from; i <= to; i++ {
		es = append(es, &pb.Entry{Index: new(i), Term: new(term), Data: fmt.Appendf(nil, "c%d.%d", term, i)})
	}
	return es
}

func hardState(term, commit uint64) *pb.HardState {
	return &pb.HardState{Term: new(term), Vote: new(uint64(1)), Commit: new(commit)}
}

func snapshot(index, term uint64) *pb.Snapshot {
	return &pb.Snapshot{Data: []byte("leader's"), Metadata: &pb.SnapshotMetadata{
		ConfState: &pb.ConfState{Voters: []uint64{1, 2, 3}}, Index: new(index), Term: new(term)}}
}

// view loads st and prints what it holds: the snapshot's index and term,
// then each entry's index and term. It fails t if the load fails, if a
// covered entry is left in the store, or if a second load differs.
func view(t *testing.T, st store.Store) string {
	t.Helper()
	v := func() string {
		g := testGroup(t, st)
		s, _ := g.ms.Snapshot()
		var b strings.Builder
		fmt.Fprintf(&b, "snap %d/%d:", s.GetMetadata().GetIndex(), s.GetMetadata().GetTerm())
		first, _ := g.ms.FirstIndex()
		last, _ := g.ms.LastIndex()
		if last >= first {
			es, err := g.ms.Entries(first, last+1, math.MaxUint64)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				fmt.Fprintf(&b, " %d/%d", e.GetIndex(), e.GetTerm())
			}
		}
		for i := uint64(bootIndex + 1); i <= s.GetMetadata().GetIndex(); i++ {
			if _, live, err := g.getEntry(st, i); err != nil || live {
				t.Fatalf("%s: entry %d is covered by the snapshot but still stored (%v)", b.String(), i, err)
			}
		}
		return b.String()
	}
	first := v()
	if again := v(); again != first {
		t.Fatalf("loaded %q, then %q", first, again)
	}
	return first
}

// TestStorageTornCrashes cuts each change after each of its writes.
func TestStorageTornCrashes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, g *Group, st store.Store)
		change func(g *Group, st store.Store) error
		// loads are what a load may find, in order: before the change,
		// perhaps midway, after it.
		loads []string
	}{{
		// A member's own snapshot at 8 of a log 2..10.
		name: "compaction",
		setup: func(t *testing.T, g *Group, st store.Store) {
			if err := g.save(st, hardState(1, 10), ents(1, 2, 10)); err != nil {
				t.Fatal(err)
			}
		},
		change: func(g *Group, st store.Store) error {
			g.applied = 8
			return g.compact(storeEnv{st: st})
		},
		loads: []string{"snap 1/1: 2/1 3/1 4/1 5/1 6/1 7/1 8/1 9/1 10/1", "snap 8/1: 9/1 10/1"},
	}, {
		// A second snapshot after a first.
		name: "second compaction",
		setup: func(t *testing.T, g *Group, st store.Store) {
			if err := g.save(st, hardState(1, 10), ents(1, 2, 10)); err != nil {
				t.Fatal(err)
			}
			g.applied = 4
			if err := g.compact(storeEnv{st: st}); err != nil {
				t.Fatal(err)
			}
		},
		change: func(g *Group, st store.Store) error {
			g.applied = 9
			return g.compact(storeEnv{st: st})
		},
		loads: []string{"snap 4/1: 5/1 6/1 7/1 8/1 9/1 10/1", "snap 9/1: 10/1"},
	}, {
		// A follower whose log 2..6 ends before the leader's snapshot at 12.
		name: "install beyond the log",
		setup: func(t *testing.T, g *Group, st store.Store) {
			if err := g.save(st, hardState(1, 4), ents(1, 2, 6)); err != nil {
				t.Fatal(err)
			}
		},
		change: func(g *Group, st store.Store) error {
			if err := g.install(st, snapshot(12, 3)); err != nil {
				return err
			}
			return g.save(st, hardState(3, 12), nil)
		},
		loads: []string{"snap 1/1: 2/1 3/1 4/1 5/1 6/1", "snap 12/3:"},
	}, {
		// A follower whose log 2..10 has entries of term 2 from 6 on, which
		// the leader's term-3 log does not: its snapshot at 8 replaces the
		// log.
		name: "install over a diverged log",
		setup: func(t *testing.T, g *Group, st store.Store) {
			if err := g.save(st, hardState(2, 5), append(ents(1, 2, 5), ents(2, 6, 10)...)); err != nil {
				t.Fatal(err)
			}
		},
		change: func(g *Group, st store.Store) error {
			if err := g.install(st, snapshot(8, 3)); err != nil {
				return err
			}
			return g.save(st, hardState(3, 8), ents(3, 9, 9))
		},
		loads: []string{"snap 1/1: 2/1 3/1 4/1 5/1 6/2 7/2 8/2 9/2 10/2", "snap 8/3:", "snap 8/3: 9/3"},
	}, {
		// A member whose log was truncated before it restarted (entries
		// 8..10 of term 1 are garbage above its log) installs a snapshot at
		// 9 and appends after it: the garbage is deleted, and its entry at
		// 9 does not make a later load take the log for a torn install's.
		name: "install over garbage",
		setup: func(t *testing.T, g *Group, st store.Store) {
			if err := g.save(st, hardState(1, 5), ents(1, 2, 10)); err != nil {
				t.Fatal(err)
			}
			if err := g.save(st, hardState(2, 5), ents(2, 6, 7)); err != nil {
				t.Fatal(err)
			}
		},
		change: func(g *Group, st store.Store) error {
			if g.hi != 10 {
				return fmt.Errorf("hi = %d after a restart; want 10 (the garbage above the log)", g.hi)
			}
			if err := g.install(st, snapshot(9, 3)); err != nil {
				return err
			}
			return g.save(st, hardState(3, 9), ents(3, 10, 11))
		},
		loads: []string{"snap 1/1: 2/1 3/1 4/1 5/1 6/2 7/2", "snap 9/3:", "snap 9/3: 10/3", "snap 9/3: 10/3 11/3"},
	}} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			for n := 0; ; n++ {
				st := store.NewMem()
				tc.setup(t, testGroup(t, st), st)
				cut := &cutStore{Store: st, n: n}
				if err := tc.change(testGroup(t, st), cut); err != nil {
					t.Fatal(err)
				}
				got := view(t, st)
				if !slices.Contains(tc.loads, got) {
					t.Fatalf("cut after %d writes: loaded %q; want one of %q", n, got, tc.loads)
				}
				if cut.n > 0 { // not cut: every write was made
					if want := tc.loads[len(tc.loads)-1]; got != want {
						t.Fatalf("uncut: loaded %q; want %q", got, want)
					}
					t.Logf("%d cuts, each loaded as one of %q", n, tc.loads)
					return
				}
			}
		})
	}
}
