package keyspace

import (
	"slices"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
)

// storeEnv is an Env that has only a store.
type storeEnv struct {
	env.Env
	st store.Store
}

func (e storeEnv) Store() store.Store { return e.st }

// viewOver is what a keyspace with prefix ("" for the default keyspace)
// sees of st.
func viewOver(st store.Store, prefix string) store.Store {
	s := &subEnv{Env: storeEnv{st: st}, prefix: prefix}
	s.view.s = s
	return s.Store()
}

// TestSpans checks that Spans covers exactly the stored keys of each
// keyspace and maps them back to the keys the keyspace's store was given.
func TestSpans(t *testing.T) {
	mem := store.NewMem()
	def := viewOver(mem, "")
	named := viewOver(mem, "k/ks/")
	other := viewOver(mem, "k/ks2/")
	keys := []string{"", "a", "k", "k/", "k/x", "k//y", "k0", "k/ks/z", "zz", "\xff"}
	for _, k := range keys {
		for _, s := range []store.Store{def, named, other} {
			if err := s.Put(k, store.Record{Value: []byte(k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		first bool
		name  string
	}{{true, "default"}, {false, "ks"}, {false, "ks2"}} {
		var got []string
		for _, sp := range Spans(tc.first, tc.name) {
			mem.Scan(sp.From, sp.To, func(stored string, rec store.Record) bool {
				if k := sp.Key(stored); k != string(rec.Value) {
					t.Errorf("%s: stored %q maps to %q; want %q", tc.name, stored, k, rec.Value)
				}
				got = append(got, sp.Key(stored))
				return true
			})
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(keys))
		if !slices.Equal(got, want) {
			t.Errorf("%s: keys %q; want %q", tc.name, got, want)
		}
	}
}
