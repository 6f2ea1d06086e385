package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/topo"
)

// wan3OneWay is the one-way delay between the regions of wan3World: large
// enough that a request crossing the WAN stands out from a local one on a
// loaded machine.
const wan3OneWay = 40 * time.Millisecond

// wan3World is local3 with regions wan3OneWay apart.
var wan3World = fmt.Sprintf(`name: wan3
description: three regions %[1]d ms apart one way (tests)
nodes_per_region: 1
regions:
  - {name: a, provider: local, lat: 0, long: 0}
  - {name: b, provider: local, lat: 0, long: 0}
  - {name: c, provider: local, lat: 0, long: 0}
intra:
  one_way_ms: 0.05
  jitter: {dist: none}
links:
  - {from: a, to: b, one_way_ms: %[1]d, jitter: {dist: none}}
  - {from: a, to: c, one_way_ms: %[1]d, jitter: {dist: none}}
  - {from: b, to: c, one_way_ms: %[1]d, jitter: {dist: none}}
`, wan3OneWay.Milliseconds())

// wan3Setup writes wan3World to a file for the servers and returns it with
// its topology and a lease keyspace over it, to work out where keys'
// initial masters are.
func wan3Setup(t *testing.T) (string, *topo.Topology, *lease.Keyspace) {
	t.Helper()
	worldFile := filepath.Join(t.TempDir(), "wan3.yaml")
	if err := os.WriteFile(worldFile, []byte(wan3World), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := topo.Parse([]byte(wan3World))
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	lk, err := lease.NewKeyspace(tp, lease.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return worldFile, tp, lk
}

// TestLeaseMigrationOnRealServers: three real processes with WAN
// emulation and a passive lease keyspace. A key's writes from another
// region cross the WAN to its master; LC.MIGRATE moves the mastership
// there and replies that region; writes from it then complete locally (in
// well under one WAN round trip), and the new master's /metrics and
// /status count the migration, next to nonzero lease counters.
func TestLeaseMigrationOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	worldFile, tp, lk := wan3Setup(t)
	w := tp.World
	// The key's initial master, and a target in the next region.
	const key = "mk"
	from := tp.RegionOf(lk.Master(key))
	to := (from + 1) % len(w.Regions)
	target := w.Regions[to].Name
	targetNode, oldNode := target+"-0", w.Regions[from].Name+"-0"
	other := w.Regions[(to+1)%len(w.Regions)].Name + "-0"

	c := newClusterIn(t, worldFile, true, "keyspaces:\n  - {name: glob, protocol: lease, passive: true, lease_length: 2s, renew_timeout: 1s}\n")
	ctx := context.Background()
	clients := map[string]*redis.Client{}
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 20 * time.Second})
		t.Cleanup(func() { cl.Close() })
		if err := cl.Do(ctx, "LC.KEYSPACE", "glob").Err(); err != nil {
			t.Fatal(err)
		}
		clients[n] = cl
	}
	tc := clients[targetNode]
	timedSet := func(v string) (time.Duration, error) {
		start := time.Now()
		err := tc.Set(ctx, key, v, 0).Err()
		return time.Since(start), err
	}

	// Before: a write from the target's region goes to the master across
	// the WAN (the first one polls: the nodes may still be connecting).
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := timedSet("before")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SET %s at %s never succeeded: %v", key, targetNode, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d, err := timedSet("before2"); err != nil || d < 2*wan3OneWay {
		t.Fatalf("SET %s at %s with the master at %s took %v, %v; want at least one WAN round trip (%v)", key, targetNode, oldNode, d, err, 2*wan3OneWay)
	}

	// Migrate; UNAVAILABLE (the key is busy) is retryable.
	var got string
	var err error
	for {
		got, err = tc.Do(ctx, "LC.MIGRATE", key, target).Text()
		if err == nil || !strings.HasPrefix(err.Error(), "UNAVAILABLE") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || got != target {
		t.Fatalf("LC.MIGRATE %s %s = %q, %v; want %q", key, target, got, err, target)
	}
	if _, err := tc.Do(ctx, "LC.MIGRATE", key, "mars").Result(); err == nil || !strings.Contains(err.Error(), `unknown region "mars"`) {
		t.Errorf("LC.MIGRATE %s mars = %v; want an unknown-region error", key, err)
	}

	// After: the master is local, so a write completes without crossing
	// the WAN once any fence from the handoff has run out.
	var last time.Duration
	for i := 0; ; i++ {
		d, err := timedSet(fmt.Sprintf("after%d", i))
		if err == nil && d < wan3OneWay {
			break
		}
		last = d
		if time.Now().After(deadline) {
			t.Fatalf("after migrating %s to %s, SET at %s still takes %v (last error %v); want under %v (local master)", key, target, targetNode, last, err, wan3OneWay)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v, err := tc.Get(ctx, key).Result(); err != nil || !strings.HasPrefix(v, "after") {
		t.Fatalf("GET %s at %s = %q, %v; want the last write", key, targetNode, v, err)
	}
	// A read from the third region takes a lease from the new master.
	if v, err := clients[other].Get(ctx, key).Result(); err != nil || !strings.HasPrefix(v, "after") {
		t.Fatalf("GET %s at %s = %q, %v; want the last write", key, other, v, err)
	}

	m := scrapeLease(t, c.addrs[targetNode][2])
	if m["migrations_total"] < 1 {
		t.Errorf("%s /metrics: lightcone_lease_migrations_total = %v; want >= 1 (it became %s's master by migration)", targetNode, m["migrations_total"], key)
	}
	// The new master granted the third region's lease and masters the key.
	for _, name := range []string{"grants_total", "masters_held"} {
		if m[name] < 1 {
			t.Errorf("%s /metrics: lightcone_lease_%s = %v; want >= 1", targetNode, name, m[name])
		}
	}
	// The third region asked for that lease and holds it (2s long: the
	// scrape comes well within it).
	for _, name := range []string{"renewals_total", "leases_held"} {
		if v := scrapeLease(t, c.addrs[other][2])[name]; v < 1 {
			t.Errorf("%s /metrics: lightcone_lease_%s = %v; want >= 1 (it read %s from another region)", other, name, v, key)
		}
	}
	// The old master confirmed its master lease before writing, and did
	// not win the migration.
	if m := scrapeLease(t, c.addrs[oldNode][2]); m["confirms_total"] < 1 || m["migrations_total"] != 0 {
		t.Errorf("%s /metrics: lightcone_lease_confirms_total = %v, migrations_total = %v; want >= 1 and 0 (it mastered the key, then gave it away)",
			oldNode, m["confirms_total"], m["migrations_total"])
	}

	var st struct {
		Keyspaces []struct {
			Name, Protocol string
			Counters       map[string]float64
		}
	}
	body := httpBody(t, "http://"+c.addrs[targetNode][2]+"/status")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	found := false
	for _, k := range st.Keyspaces {
		switch {
		case k.Name == "glob" && (k.Protocol != "lease" || k.Counters["migrations_total"] < 1):
			t.Errorf("/status keyspace glob: protocol %s, counters %v; want lease with migrations_total >= 1\n%s", k.Protocol, k.Counters, body)
		case k.Name == "glob":
			found = true
		case k.Protocol != "quorum" || len(k.Counters) != 1 || k.Counters["commit_wait_seconds"] != 0.004:
			t.Errorf("/status keyspace %s: protocol %s, counters %v; want quorum with its commit wait, 2δ = 0.004 s, alone", k.Name, k.Protocol, k.Counters)
		}
	}
	if !found {
		t.Errorf("/status lacks the lease keyspace glob:\n%s", body)
	}
}

func httpBody(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, res.Status, err)
	}
	return string(b)
}

// scrapeLease returns the glob keyspace's lightcone_lease_* values on the
// node serving HTTP at addr, by name without the prefix.
func scrapeLease(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	return scrapeSeries(t, addr, "lightcone_lease_", "glob")
}

// scrapeSeries returns the series of /metrics named prefix* for keyspace ks,
// by name without the prefix; it fails the test if there are none.
func scrapeSeries(t *testing.T, addr, prefix, ks string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(httpBody(t, "http://"+addr+"/metrics"), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, prefix) || !strings.Contains(rest, `keyspace="`+ks+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[strings.TrimPrefix(name, prefix)] = v
	}
	if len(out) == 0 {
		t.Fatalf("%s /metrics has no %s* series for keyspace %s", addr, prefix, ks)
	}
	return out
}
