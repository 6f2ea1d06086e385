package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/server"
)

// TestLeaseStatsInProcess runs a standalone server in the test's process
// (so -race sees the event loop) and scrapes /metrics and /status while
// clients write to a lease keyspace and a meteor one: the counters are read
// on the loop, the default quorum keyspace shows none, the lease gauges
// count the keys this node masters, and the meteor counters the writes it
// applied.
func TestLeaseStatsInProcess(t *testing.T) {
	ctx := context.Background()
	srv := startInProcess(t, server.Config{DataDir: t.TempDir(), RESPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", Sync: "never",
		Keyspaces: []server.KeyspacePolicy{{Name: "glob", Protocol: "lease"}, {Name: "ms", Protocol: "meteor"}},
		Log:       slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { srv.stop(t) })
	addrs := srv.addrs
	const keys = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := redis.NewClient(&redis.Options{Addr: addrs.RESP, Protocol: 2, PoolSize: 1, MaxRetries: -1})
			defer cl.Close()
			for _, ks := range []string{"glob", "ms"} {
				if err := cl.Do(ctx, "LC.KEYSPACE", ks).Err(); err != nil {
					errs <- err
					return
				}
				for i := w; i < keys; i += 2 {
					if err := cl.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
						errs <- fmt.Errorf("%s: %w", ks, err)
						return
					}
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
	if m := scrapeSeries(t, addrs.HTTP, "lightcone_meteor_", "ms"); m["applied_total"] < keys || m["reads_waiting"] != 0 {
		t.Errorf("/metrics: lightcone_meteor_applied_total = %v, reads_waiting = %v; want at least %d and 0", m["applied_total"], m["reads_waiting"], keys)
	}
	var st struct {
		Protocol  string
		Keyspaces []struct {
			Name, Protocol string
			Counters       map[string]float64
		}
	}
	body := httpBody(t, "http://"+addrs.HTTP+"/status")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	if len(st.Keyspaces) != 3 || st.Protocol != "quorum" ||
		st.Keyspaces[0].Name != "default" || st.Keyspaces[0].Protocol != "quorum" || len(st.Keyspaces[0].Counters) != 0 ||
		st.Keyspaces[1].Name != "glob" || st.Keyspaces[1].Protocol != "lease" || st.Keyspaces[1].Counters["masters_held"] != keys ||
		st.Keyspaces[2].Name != "ms" || st.Keyspaces[2].Protocol != "meteor" || st.Keyspaces[2].Counters["applied_total"] < keys {
		t.Errorf("/status: want protocol quorum (the default keyspace's); keyspaces default (quorum) without counters, glob (lease) with masters_held %d, ms (meteor) with applied_total >= %d; got\n%s", keys, keys, body)
	}
	conn, err := grpc.NewClient(addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gst, err := lightconev1.NewKVClient(conn).Status(ctx, &lightconev1.StatusRequest{})
	if err != nil {
		t.Fatalf("gRPC Status: %v", err)
	}
	counters := map[string]map[string]float64{}
	for _, k := range gst.Keyspaces {
		counters[k.Name] = k.Counters
	}
	if gst.Protocol != "quorum,lease,meteor" {
		t.Errorf("gRPC Status protocol = %q; want %q (each keyspace's, the default's first)", gst.Protocol, "quorum,lease,meteor")
	}
	if len(counters["default"]) != 0 || counters["glob"]["lease_masters_held"] != keys || counters["ms"]["meteor_applied_total"] < keys {
		t.Errorf("gRPC Status counters: want none for default, lease_masters_held %d for glob, meteor_applied_total >= %d for ms; got %v", keys, keys, counters)
	}
}
