package lease

import (
	"testing"

	"github.com/lightcone/lightcone/internal/store"
)

// TestUserRecord checks the key listing's view of a lease store: user keys
// as they are, live unless a tombstone, and the replica's own state (under
// metaPrefix: ballots, the active marker, the incarnation) not listed.
func TestUserRecord(t *testing.T) {
	var l registered
	for _, tc := range []struct {
		stored   string
		tomb     bool
		ok, live bool
	}{
		{"user", false, true, true},
		{"gone", true, true, false},
		{metaPrefix + "user", false, false, false},
		{activeKey, false, false, false},
		{incKey, false, false, false},
	} {
		key, val, live, ok := l.UserRecord(tc.stored, store.Record{Value: []byte("v"), Tombstone: tc.tomb})
		if ok != tc.ok || ok && (key != tc.stored || live != tc.live || string(val) != "v") {
			t.Errorf("UserRecord(%q, tombstone %v) = %q, %q, %v, %v; want ok %v, live %v", tc.stored, tc.tomb, key, val, live, ok, tc.ok, tc.live)
		}
	}
}
