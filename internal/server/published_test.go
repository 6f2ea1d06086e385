package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/check"
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
	p := start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t))
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
