package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLeaseElectionOnRealServers: the protocol's master failover on real
// processes. A key's master is killed (-9); the other two regions elect a
// new master — after the old one's master lease and the election timeout —
// and go on reading and, once the old master's leases have surely expired,
// writing. The old master restarts, learns it was replaced, and serves the
// newest value.
func TestLeaseElectionOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	worldFile, tp, lk := wan3Setup(t)
	const key = "ek"
	master := tp.Nodes[lk.Master(key)].Name
	var others []string
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		if n != master {
			others = append(others, n)
		}
	}
	c := newClusterIn(t, worldFile, true,
		"keyspaces:\n  - {name: glob, protocol: lease, lease_length: 2s, renew_timeout: 500ms, master_lease: 1s, election_timeout: 1s}\n")
	ctx := context.Background()
	client := func(n string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 20 * time.Second})
		t.Cleanup(func() { cl.Close() })
		if err := cl.Do(ctx, "LC.KEYSPACE", "glob").Err(); err != nil {
			t.Fatal(err)
		}
		return cl
	}
	x, y := client(others[0]), client(others[1])
	until := func(what string, limit time.Duration, f func() error) {
		t.Helper()
		pollUntil(t, what, limit, f)
	}
	want := func(cl *redis.Client, v string) func() error {
		return func() error {
			got, err := cl.Get(ctx, key).Result()
			if err == nil && got != v {
				t.Fatalf("GET %s = %q; want %q (never an older value)", key, got, v)
			}
			return err
		}
	}
	until("first write", 30*time.Second, func() error { return x.Set(ctx, key, "v1", 0).Err() })
	until("read in a third region", 10*time.Second, want(y, "v1"))

	c.kill(master)
	killed := time.Now()
	until("read after the master was killed", 20*time.Second, want(x, "v1"))
	until("write after the master was killed", 20*time.Second, func() error { return y.Set(ctx, key, "v2", 0).Err() })
	t.Logf("writes resumed %v after the master was killed", time.Since(killed).Round(100*time.Millisecond))
	until("read of the new value", 10*time.Second, want(x, "v2"))
	elections := 0.0
	for _, n := range others {
		elections += scrapeLease(t, c.addrs[n][2])["elections_total"]
	}
	if elections < 1 {
		t.Errorf("lightcone_lease_elections_total on %v: %v; want >= 1", others, elections)
	}

	c.start(master)
	m := client(master)
	until("read at the restarted old master", 30*time.Second, want(m, "v2"))
}
