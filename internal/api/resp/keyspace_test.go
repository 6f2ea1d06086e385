package resp

import "testing"

// TestLCKeyspaceRefusesUnknown: with Config.Keyspaces set, LC.KEYSPACE
// refuses a name it lacks at once, naming the valid ones, and keeps the
// connection's keyspace; a known name is accepted.
func TestLCKeyspaceRefusesUnknown(t *testing.T) {
	ts := startServer(t, Config{Keyspaces: []string{"default", "glob"}})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"LC.KEYSPACE nope\r\n", `-ERR unknown keyspace "nope" (keyspaces: default, glob)`},
		{"LC.KEYSPACE\r\n", `"default"`},
		{"LC.KEYSPACE glob\r\n", "+OK"},
		{"LC.KEYSPACE\r\n", `"glob"`},
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
}
