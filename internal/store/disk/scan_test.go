package disk

import (
	"slices"
	"testing"

	"github.com/lightcone/lightcone/internal/store"
)

// TestScanEngines checks store.Lister on both engines against the same
// writes: keys in order within [from, to), synced and unsynced writes
// alike, the latest record of each, and an early stop.
func TestScanEngines(t *testing.T) {
	p, err := OpenPebble(t.TempDir(), SyncNever)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, e := range []interface {
		store.Engine
		store.Lister
	}{store.NewMem(), p} {
		put := func(k, v string, tomb bool) {
			if err := e.Put(k, store.Record{Value: []byte(v), Tombstone: tomb}); err != nil {
				t.Fatal(err)
			}
		}
		put("b", "old", false)
		put("a", "1", false)
		put("d", "", true)
		put("\xff", "ff", false)
		if err := e.Sync(); err != nil {
			t.Fatal(err)
		}
		put("b", "2", false) // unsynced, replacing a synced record
		put("c", "3", false)
		list := func(from, to string, limit int) []string {
			var got []string
			err := e.Scan(from, to, func(k string, rec store.Record) bool {
				s := k + "=" + string(rec.Value)
				if rec.Tombstone {
					s += "(deleted)"
				}
				got = append(got, s)
				return len(got) < limit
			})
			if err != nil {
				t.Fatalf("%T: Scan(%q, %q): %v", e, from, to, err)
			}
			return got
		}
		for _, tc := range []struct {
			from, to string
			limit    int
			want     []string
		}{
			{"", "", 100, []string{"a=1", "b=2", "c=3", "d=(deleted)", "\xff=ff"}},
			{"b", "d", 100, []string{"b=2", "c=3"}},
			{"bb", "", 2, []string{"c=3", "d=(deleted)"}},
			{"e", "f", 100, nil},
		} {
			if got := list(tc.from, tc.to, tc.limit); !slices.Equal(got, tc.want) {
				t.Errorf("%T: Scan(%q, %q) = %q; want %q", e, tc.from, tc.to, got, tc.want)
			}
		}
	}
}
