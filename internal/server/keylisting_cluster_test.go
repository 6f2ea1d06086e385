package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestKeyListingCluster lists keys on three real processes (local3: one
// node per region, quorum with one replica per region, so every node holds
// every key): keys written at ALL through one node are listed by every
// node, once, and by DBSIZE; a keyspace whose protocol keeps no key list
// (meteor) refuses SCAN, KEYS and DBSIZE with an error naming the protocol.
func TestKeyListingCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, false, "keyspaces:\n  - {name: ms, protocol: meteor}\n")
	ctx := context.Background()
	// One connection each: LC.CONSISTENCY and LC.KEYSPACE are per connection.
	one := func(n string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, PoolSize: 1})
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	w := one("a-0")
	if err := w.Do(ctx, "LC.CONSISTENCY", "WRITE", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		if err := w.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s at ALL: %v", k, err)
		}
		want = append(want, k)
	}
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		cl := c.client(n)
		got, err := scanAll(ctx, cl, "k*", 9)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SCAN at %s = %q, %v; want the %d keys written at ALL, each once", n, got, err, len(want))
		}
		if size, err := cl.DBSize(ctx).Result(); err != nil || size != int64(len(want)) {
			t.Errorf("DBSIZE at %s = %d, %v; want %d", n, size, err, len(want))
		}
	}
	ms := one("b-0")
	if err := ms.Do(ctx, "LC.KEYSPACE", "ms").Err(); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]any{{"SCAN", "0"}, {"KEYS", "*"}, {"DBSIZE"}} {
		err := ms.Do(ctx, cmd...).Err()
		if err == nil || !strings.Contains(err.Error(), "protocol meteor keeps no key list") {
			t.Errorf("%v in a meteor keyspace: %v; want the protocol's refusal", cmd, err)
		}
	}
}

// TestKeyListingPartial lists keys on two real nodes of one region that
// each hold half of the keys (quorum, one replica per region): each node
// lists only the keys it is a replica of, so the two listings are disjoint
// and together hold every key.
func TestKeyListingPartial(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	world := filepath.Join(t.TempDir(), "one2.yaml")
	if err := os.WriteFile(world, []byte(`name: one2
description: one region of two nodes
source: test
nodes_per_region: 2
regions:
  - {name: a, provider: local, lat: 0, long: 0}
intra:
  one_way_ms: 0.05
  jitter: {dist: none}
  source: loopback
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClusterOf(t, world, []string{"a-0", "a-1"}, false)
	ctx := context.Background()
	w := c.client("a-0")
	var want []string
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		if err := w.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		want = append(want, k)
	}
	var union []string
	for _, n := range []string{"a-0", "a-1"} {
		got, err := scanAll(ctx, c.client(n), "", 10)
		if err != nil {
			t.Fatalf("SCAN at %s: %v", n, err)
		}
		if len(got) == 0 || len(got) == len(want) {
			t.Errorf("SCAN at %s listed %d of %d keys; want the part it is a replica of", n, len(got), len(want))
		}
		union = append(union, got...)
	}
	slices.Sort(union)
	if !slices.Equal(union, want) {
		t.Errorf("the two nodes' listings together = %q; want every key once: %q", union, want)
	}
}
