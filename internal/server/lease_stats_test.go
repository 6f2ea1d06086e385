package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/server"
)

// TestLeaseStatsInProcess runs a standalone server in the test's process
// (so -race sees the event loop) and scrapes /metrics and /status while
// clients write to a lease keyspace: the counters are read on the loop,
// the default quorum keyspace shows none, and the lease gauges count the
// keys this node masters.
func TestLeaseStatsInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Addrs, 1)
	done := make(chan error, 1)
	cfg := server.Config{DataDir: t.TempDir(), RESPAddr: "127.0.0.1:0", GRPCAddr: "off", HTTPAddr: "127.0.0.1:0", Sync: "never",
		Keyspaces: []server.KeyspacePolicy{{Name: "glob", Protocol: "lease"}},
		Log:       slog.New(slog.DiscardHandler), Ready: func(a server.Addrs) { ready <- a }}
	go func() { done <- server.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	var addrs server.Addrs
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server not ready after 20s")
	}
	const keys = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := redis.NewClient(&redis.Options{Addr: addrs.RESP, Protocol: 2, PoolSize: 1, MaxRetries: -1})
			defer cl.Close()
			if err := cl.Do(ctx, "LC.KEYSPACE", "glob").Err(); err != nil {
				errs <- err
				return
			}
			for i := w; i < keys; i += 2 {
				if err := cl.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 5 { // scrapes racing the writes
		scrapeLease(t, addrs.HTTP)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("SET in the lease keyspace: %v", err)
	}
	if m := scrapeLease(t, addrs.HTTP); m["masters_held"] != keys {
		t.Errorf("/metrics: lightcone_lease_masters_held = %v; want %d (every key written here: one node masters all)", m["masters_held"], keys)
	}
	var st struct {
		Keyspaces []struct {
			Name  string
			Lease *struct {
				MastersHeld int `json:"masters_held"`
			} `json:"lease"`
		}
	}
	body := httpBody(t, "http://"+addrs.HTTP+"/status")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	if len(st.Keyspaces) != 2 || st.Keyspaces[0].Name != "default" || st.Keyspaces[0].Lease != nil ||
		st.Keyspaces[1].Name != "glob" || st.Keyspaces[1].Lease == nil || st.Keyspaces[1].Lease.MastersHeld != keys {
		t.Errorf("/status keyspaces: want default without lease counters and glob with masters_held %d; got\n%s", keys, body)
	}
}
