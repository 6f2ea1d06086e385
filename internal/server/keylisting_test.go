package server_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestKeyListing lists the keys of a real single-node server (quorum on
// Pebble, no configuration) through SCAN, KEYS and DBSIZE: every key
// written and not deleted is listed once, deleted and expired ones are
// not, and after a restart the keys are read back from disk.
func TestKeyListing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	bin, dir := buildBinary(t), t.TempDir()
	p := start(t, bin, dir, freeAddr(t), freeAddr(t))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2})
	defer c.Close()
	var want []string
	for i := range 300 {
		k := fmt.Sprintf("user:%03d", i)
		if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if err := c.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want = append(want, k)
	}
	for _, err := range []error{
		c.SAdd(ctx, "k/set", "m").Err(), // escaped in the default keyspace's store
		c.Set(ctx, "expired", "v", time.Millisecond).Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, "k/set")
	slices.Sort(want)
	// "expired" expires 1ms after its write: poll, with a bound, until
	// EXISTS says so.
	deadline := time.Now().Add(5 * time.Second)
	for c.Exists(ctx, "expired").Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("key with a 1ms TTL still exists after 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	check := func(when string) {
		t.Helper()
		got, err := scanAll(ctx, c, "", 25)
		if err != nil {
			t.Fatalf("%s: SCAN: %v", when, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: SCAN listed %d keys %q...; want %d keys, each once", when, len(got), got[:min(5, len(got))], len(want))
		}
		// The issue's own words: SCAN 0 MATCH user:* COUNT 100 lists every
		// user key written (and not deleted), each once.
		users := slices.DeleteFunc(slices.Clone(want), func(k string) bool { return !strings.HasPrefix(k, "user:") })
		if got, err := scanAll(ctx, c, "user:*", 100); err != nil || !slices.Equal(got, users) {
			t.Errorf("%s: SCAN MATCH user:* COUNT 100 listed %d keys, %v; want the %d user keys, each once", when, len(got), err, len(users))
		}
		if n, err := c.DBSize(ctx).Result(); err != nil || n != int64(len(want)) {
			t.Errorf("%s: DBSIZE = %d, %v; want %d", when, n, err, len(want))
		}
		keys, err := c.Keys(ctx, "user:29?").Result()
		slices.Sort(keys)
		if w := []string{"user:291", "user:292", "user:293", "user:294", "user:295", "user:296", "user:297", "user:298", "user:299"}; err != nil || !slices.Equal(keys, w) {
			t.Errorf("%s: KEYS user:29? = %q, %v; want %q", when, keys, err, w)
		}
		if got, err := c.Type(ctx, "k/set").Result(); err != nil || got != "set" {
			t.Errorf("%s: TYPE k/set = %q, %v; want set", when, got, err)
		}
	}
	check("running")
	// redis-cli's own cursor loop.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		host, port, _ := strings.Cut(p.resp, ":")
		out, err := exec.Command(cli, "-h", host, "-p", port, "--scan", "--pattern", "user:1*").CombinedOutput()
		got := strings.Fields(string(out))
		slices.Sort(got)
		var w []string
		for _, k := range want {
			if strings.HasPrefix(k, "user:1") {
				w = append(w, k)
			}
		}
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("redis-cli --scan --pattern user:1* = %q, %v; want %q", got, err, w)
		}
	}
	c.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log)
	}
	p = start(t, bin, dir, freeAddr(t), freeAddr(t))
	c = redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2})
	check("after a restart")
}

// scanAll lists keys with go-redis's SCAN cursor loop, sorted.
func scanAll(ctx context.Context, c *redis.Client, match string, count int64) ([]string, error) {
	var got []string
	iter := c.Scan(ctx, 0, match, count).Iterator()
	for iter.Next(ctx) {
		got = append(got, iter.Val())
	}
	slices.Sort(got)
	return got, iter.Err()
}
