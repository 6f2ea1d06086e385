package resp

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/wire"
)

// TestCloseReleasesHolds: a connection that closes while it holds rows
// releases them (in the keyspace each was acquired in, as the same
// client); rows it released itself, and an acquire the backend refused,
// are not released again.
func TestCloseReleasesHolds(t *testing.T) {
	ts := startServer(t, Config{})
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		if r.Op == wire.OpAcquire && r.Key == "refused" {
			return &wire.Error{Code: wire.ErrUnavailable, Msg: "not granted"}
		}
		return nil
	})
	ctx := context.Background()
	c := ts.client(t, &redis.Options{PoolSize: 1, MaxRetries: -1})
	for _, cmd := range [][]any{
		{"LC.KEYSPACE", "rc"}, {"LC.ACQUIRE", "a"}, {"LC.ACQUIRE", "b"}, {"LC.RELEASE", "b"},
		{"LC.KEYSPACE", "rc2"}, {"LC.ACQUIRE", "c"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	if err := c.Do(ctx, "LC.ACQUIRE", "refused").Err(); err == nil {
		t.Fatal("LC.ACQUIRE refused: no error; want the backend's")
	}
	var client wire.ClientID
	for _, r := range ts.b.requests() {
		client = r.Client
	}
	c.Close()
	want := map[string]bool{"rc/a": true, "rc2/c": true}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := map[string]bool{}
		releasesOfB := 0
		for _, r := range ts.b.requests() {
			if r.Op != wire.OpRelease {
				continue
			}
			if r.Key == "b" {
				releasesOfB++
				continue
			}
			if r.Client != client {
				t.Fatalf("release of %s/%s by client %d; want the holder, client %d", r.Keyspace, r.Key, r.Client, client)
			}
			got[r.Keyspace+"/"+r.Key] = true
		}
		if releasesOfB != 1 {
			t.Fatalf("b was released %d times; want once (by LC.RELEASE)", releasesOfB)
		}
		if len(got) == len(want) && got["rc/a"] && got["rc2/c"] {
			return
		}
		if got["rc2/refused"] || got["rc/refused"] {
			t.Fatalf("released %v: a refused acquire is no hold", got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("releases after close: %v; want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
