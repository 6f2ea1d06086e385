package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/store"
)

// metaLister is a protocol.Lister whose own state lives under "\x00meta/".
type metaLister struct{}

func (metaLister) UserRecord(stored string, rec store.Record) (string, []byte, bool, bool) {
	if strings.HasPrefix(stored, "\x00meta/") {
		return "", nil, false, false
	}
	return stored, rec.Value, !rec.Tombstone, true
}

// TestScanSpans lists two keyspaces of one store page by page and checks
// that each lists its own live user keys exactly once: not the other
// keyspace's, not deleted ones, not the protocol's state, whatever the page
// size.
func TestScanSpans(t *testing.T) {
	mem := store.NewMem()
	put := func(stored string, tomb bool) {
		if err := mem.Put(stored, store.Record{Value: []byte("v:" + stored), Tombstone: tomb}); err != nil {
			t.Fatal(err)
		}
	}
	// The default keyspace: its keys as they are, "k/..." escaped.
	for _, k := range []string{"a", "b", "k//x", "z", "\x00meta/state"} {
		put(k, false)
	}
	put("deleted", true)
	// Keyspace "ks" under "k/ks/".
	for _, k := range []string{"k/ks/a", "k/ks/q", "k/ks/\x00meta/x"} {
		put(k, false)
	}
	put("k/ks/gone", true)
	mem.Sync()
	put("new", false) // not yet synced: listed too

	for _, tc := range []struct {
		first bool
		name  string
		want  []string
	}{
		{true, "default", []string{"a", "b", "k/x", "new", "z"}},
		{false, "ks", []string{"a", "q"}},
	} {
		for _, count := range []int{1, 2, 3, 100} {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("%s count %d: no end after 20 pages", tc.name, count)
				}
				page, next, err := scanSpans(mem, keyspace.Spans(tc.first, tc.name), metaLister{}, cursor, count)
				if err != nil {
					t.Fatal(err)
				}
				for _, kv := range page {
					if want := "v:"; !strings.HasPrefix(string(kv.Value), want) {
						t.Errorf("%s: value of %q = %q", tc.name, kv.Key, kv.Value)
					}
					got = append(got, kv.Key)
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s count %d: listed %q; want %q", tc.name, count, got, tc.want)
			}
		}
	}
}
