package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/api/resp"
	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/store/disk"
)

// TestPublishedReadsLinearizable: on a real server, whose GETs of keys the
// loop answered and nobody wrote since are answered without the loop
// (node.Config.PublishReads), concurrent SETs and GETs of two keys from
// four clients stay linearizable, and many GETs did skip the loop.
func TestPublishedReadsLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	// Both ways of serving RESP connections: an event loop, and a
	// goroutine per connection.
	for _, loops := range []string{"1", "-1"} {
		t.Run("resp-event-loops="+loops, func(t *testing.T) {
			publishedReadsLinearizable(t, start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t), "--resp-event-loops", loops))
		})
	}
}

func publishedReadsLinearizable(t *testing.T, p *proc) {
	ctx := context.Background()
	keys := []string{"x", "y"}
	var clients []*redis.Client
	for range 4 {
		cl := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2})
		defer cl.Close()
		clients = append(clients, cl)
	}
	hist := setGetHistory(ctx, clients, 1500*time.Millisecond,
		func(i, seq int) string { return keys[(seq/3+i)%len(keys)] },
		func(i, seq int) bool { return (seq+i)%5 == 0 })
	reads, writes := completed(hist)
	if reads < 100 || writes < 20 {
		t.Fatalf("only %d reads and %d writes completed: too little to check", reads, writes)
	}
	res := check.Linearizable(hist, 30*time.Second)
	t.Logf("%d operations (%d reads, %d writes): %s %s", len(hist.Ops), reads, writes, res.Model, res.Verdict)
	if res.Verdict != check.Pass {
		t.Fatalf("linearizability: %s: %s", res.Verdict, res.Detail)
	}
	// Each request through the loop is one of its events; reads answered
	// from published replies are none.
	loop := scrapeSeries(t, p.http, "lightcone_loop_batch_events_", "default")["sum"]
	t.Logf("%d requests, %.0f of them through the loop", reads+writes, loop)
	if loop > float64(writes)+0.8*float64(reads) {
		t.Errorf("%.0f loop events for %d writes and %d reads; want a fifth of the reads or more answered without the loop", loop, writes, reads)
	}
	// The gauges show what is kept: a GET of a fresh key publishes it.
	if err := clients[0].Set(ctx, "z", "zv", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := clients[0].Get(ctx, "z").Err(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "lightcone_published_reads >= 1", 10*time.Second, func() error {
		g := scrapeSeries(t, p.http, "lightcone_published_read", "default")
		if g["s"] < 1 || g["_bytes"] < 3 {
			return fmt.Errorf("published reads gauges %v; want at least z's (1 key, 3 bytes)", g)
		}
		return nil
	})
}

// TestNoPublishedReads: with no_published_reads every GET goes through the
// node's loop (one loop event each), /status says so, and the published
// reads gauge stays at zero; with the default, repeated GETs of a key
// skip the loop. In-process, so -race sees the loop and the connections.
func TestNoPublishedReads(t *testing.T) {
	for _, off := range []bool{false, true} {
		ctx := context.Background()
		srv := startInProcess(t, server.Config{DataDir: t.TempDir(), RESPAddr: "127.0.0.1:0", GRPCAddr: "off", HTTPAddr: "127.0.0.1:0",
			Sync: "always", NoPublishedReads: off, Log: slog.New(slog.DiscardHandler)})
		a := srv.addrs
		cl := redis.NewClient(&redis.Options{Addr: a.RESP, Protocol: 2, PoolSize: 1})
		if err := cl.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := cl.Get(ctx, "k").Err(); err != nil {
			t.Fatal(err)
		}
		const gets = 50
		before := scrapeSeries(t, a.HTTP, "lightcone_loop_batch_events_", "default")["sum"]
		for range gets {
			if v, err := cl.Get(ctx, "k").Result(); err != nil || v != "v" {
				t.Fatalf("off=%v: GET k = %q, %v", off, v, err)
			}
		}
		through := scrapeSeries(t, a.HTTP, "lightcone_loop_batch_events_", "default")["sum"] - before
		if off && through < gets {
			t.Errorf("no_published_reads: %.0f loop events for %d GETs; want one each", through, gets)
		}
		if !off && through > gets/2 {
			t.Errorf("published reads on: %.0f of %d GETs went through the loop; want most answered without it", through, gets)
		}
		if status := httpBody(t, "http://"+a.HTTP+"/status"); !strings.Contains(status, fmt.Sprintf(`"published_reads": %v`, !off)) {
			t.Errorf("off=%v: /status does not say published_reads %v: %s", off, !off, status)
		}
		if off {
			if g := scrapeSeries(t, a.HTTP, "lightcone_published_read", "default"); g["s"] != 0 {
				t.Errorf("no_published_reads: lightcone_published_reads %v; want 0", g["s"])
			}
		}
		cl.Close()
		srv.stop(t)
	}
}

// TestEngineOptionsConfig: row_cache_size and spare_proc in the YAML file
// reach the storage engine, and /status reports what is in force (the
// defaults without them).
func TestEngineOptionsConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string // in /status
	}{
		{"", []string{fmt.Sprintf(`"row_cache_bytes": %d`, disk.DefaultCacheBytes), `"spare_proc": false`}},
		{"row_cache_size: 1GiB\n", []string{fmt.Sprintf(`"row_cache_bytes": %d`, 1<<30)}},
		{"spare_proc: true\n", []string{`"spare_proc": true`}},
	} {
		if strings.Contains(tc.yaml, "spare_proc") {
			// It acts only under an explicit GOMAXPROCS (disk.Options.SpareProc).
			t.Setenv("GOMAXPROCS", "1")
		}
		srv := startYAML(t, tc.yaml, "off")
		status := httpBody(t, "http://"+srv.addrs.HTTP+"/status")
		for _, want := range tc.want {
			if !strings.Contains(status, want) {
				t.Errorf("%q: /status does not say %s: %s", tc.yaml, want, status)
			}
		}
		srv.stop(t)
	}
}

// TestRESPEventLoopsConfig: resp_event_loops reaches the RESP server (INFO
// clients), and by default a Linux server runs resp.DefaultEventLoops.
func TestRESPEventLoopsConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string
	}{
		{"", "lightcone_event_loops:" + map[bool]string{true: fmt.Sprint(resp.DefaultEventLoops(runtime.GOMAXPROCS(0))), false: "0"}[runtime.GOOS == "linux"]},
		{"resp_event_loops: -1\n", "lightcone_event_loops:0"},
		{"resp_event_loops: 2\n", "lightcone_event_loops:" + map[bool]string{true: "2", false: "0"}[runtime.GOOS == "linux"]},
	} {
		srv := startYAML(t, tc.yaml, "127.0.0.1:0")
		cl := redis.NewClient(&redis.Options{Addr: srv.addrs.RESP, Protocol: 2, PoolSize: 1})
		info, err := cl.Info(context.Background(), "clients").Result()
		cl.Close()
		if err != nil {
			t.Fatalf("%q: INFO: %v", tc.yaml, err)
		}
		if !strings.Contains(info, tc.want+"\r\n") {
			t.Errorf("%q: INFO clients does not say %s:\n%s", tc.yaml, tc.want, info)
		}
		srv.stop(t)
	}
}

// startYAML starts an in-process server configured by the YAML yaml (with
// sync: never), its RESP listener on respAddr ("off": none), HTTP on a free
// loopback port, no gRPC.
func startYAML(t *testing.T, yaml, respAddr string) *diskServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml+"sync: never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.RESPAddr, cfg.GRPCAddr, cfg.HTTPAddr = t.TempDir(), respAddr, "off", "127.0.0.1:0"
	cfg.Log = slog.New(slog.DiscardHandler)
	return startInProcess(t, cfg)
}
