package resp

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestScanPages scans in small pages with go-redis's cursor loop and checks
// that every key comes back exactly once, that expired keys and other
// keyspaces' keys are not listed, and that KEYS and DBSIZE agree.
func TestScanPages(t *testing.T) {
	ts := startServer(t, Config{Scanner: fakeScan{}})
	rdb := ts.client(t, nil)
	ctx := context.Background()
	var want []string
	for i := range 50 {
		k := fmt.Sprintf("key:%02d", i)
		want = append(want, k)
		if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Set(ctx, "soon", "v", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	rc := ts.dial(t)
	rc.send("LC.KEYSPACE other\r\nSET elsewhere v\r\n")
	rc.reply()
	rc.reply()
	ts.clock.Advance(2 * time.Second) // "soon" expires

	var got []string
	var cursor uint64
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("SCAN did not finish in 100 pages; keys so far %q", got)
		}
		keys, next, err := rdb.Scan(ctx, cursor, "", 7).Result()
		if err != nil {
			t.Fatalf("SCAN %d: %v", cursor, err)
		}
		if len(keys) > 7 {
			t.Errorf("SCAN COUNT 7 returned %d keys", len(keys))
		}
		got = append(got, keys...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("SCAN returned %q; want %q, each once", got, want)
	}
	keys, err := rdb.Keys(ctx, "key:1*").Result()
	if slices.Sort(keys); err != nil || !slices.Equal(keys, want[10:20]) {
		t.Errorf("KEYS key:1* = %q, %v; want %q", keys, err, want[10:20])
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 50 {
		t.Errorf("DBSIZE = %d, %v; want 50", n, err)
	}
}

// TestScanCursors checks that a cursor is good once, in its keyspace, and
// that a forgotten or foreign one is refused rather than ending the scan
// early.
func TestScanCursors(t *testing.T) {
	ts := startServer(t, Config{Scanner: fakeScan{}})
	rc := ts.dial(t)
	rc.send("MSET a 1 b 2 c 3\r\n")
	rc.reply()
	rc.send("SCAN 0 COUNT 1\r\n")
	if got := rc.reply(); got != `["1" ["a"]]` {
		t.Fatalf("SCAN 0 COUNT 1 = %s; want [\"1\" [\"a\"]]", got)
	}
	for _, tc := range []struct{ send, want string }{
		{"SCAN 1 COUNT 1\r\n", `["2" ["b"]]`},
		{"SCAN 1 COUNT 1\r\n", "-ERR invalid cursor"}, // already used
		{"SCAN 99\r\n", "-ERR invalid cursor"},
		{"LC.KEYSPACE other\r\n", "+OK"},
		{"SCAN 2\r\n", "-ERR invalid cursor"}, // another keyspace's
		{"LC.KEYSPACE default\r\n", "+OK"},
		{"SCAN 2\r\n", "-ERR invalid cursor"}, // spent by the refusal
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
	// The table forgets the oldest cursor past maxCursors.
	var cs cursors
	first := cs.save(scanCursor{pos: "x"})
	for range maxCursors {
		cs.save(scanCursor{pos: "y"})
	}
	if _, ok := cs.take(first); ok {
		t.Errorf("cursor %d still known after %d newer ones", first, maxCursors)
	}
	if len(cs.pos) != maxCursors {
		t.Errorf("%d cursors kept; want %d", len(cs.pos), maxCursors)
	}
}
