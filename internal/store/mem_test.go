package store

import (
	"testing"

	"github.com/lightcone/lightcone/internal/wire"
)

func TestMemCrashKeepsOnlySynced(t *testing.T) {
	m := NewMem()
	put := func(k, v string) {
		if err := m.Put(k, Record{Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(k string) string {
		r, ok, err := m.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "<absent>"
		}
		return string(r.Value)
	}
	put("a", "1")
	put("b", "1")
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	put("a", "2")
	put("c", "2")
	if got := get("a"); got != "2" {
		t.Fatalf("Get(%q) before crash = %q; want %q", "a", got, "2")
	}
	if m.Unsynced() != 2 {
		t.Fatalf("Unsynced() = %d; want 2", m.Unsynced())
	}
	m.Crash()
	for _, tc := range []struct{ k, want string }{{"a", "1"}, {"b", "1"}, {"c", "<absent>"}} {
		if got := get(tc.k); got != tc.want {
			t.Errorf("Get(%q) after crash = %q; want %q", tc.k, got, tc.want)
		}
	}
	m.Load("d", Record{Value: []byte("x"), Version: wire.Version{Node: 1}})
	m.Crash()
	if got := get("d"); got != "x" {
		t.Errorf("Get(%q) after Load+crash = %q; want %q", "d", got, "x")
	}
}
