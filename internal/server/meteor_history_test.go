package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/check"
)

// TestMeteorHistoryOnRealServers: clients on three real processes with WAN
// emulation read and write three keys of a MeteorShower keyspace at once;
// the recorded history must be sequentially consistent across keys (the
// package's claim, internal/protocol/meteor/doc.go), checked without any
// hint from the protocol.
func TestMeteorHistoryOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, true, "keyspaces:\n  - {name: ms, protocol: meteor, mode: M2, dispatch_interval: 5ms}\n")
	ctx := context.Background()
	start := time.Now()
	var (
		mu   sync.Mutex
		hist check.History
		wg   sync.WaitGroup
	)
	keys := []string{"x", "y", "z"}
	// Wait until the keyspace takes writes on every node.
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1})
		deadline := time.Now().Add(15 * time.Second)
		for cl.Do(ctx, "LC.KEYSPACE", "ms").Err() != nil || cl.Get(ctx, "warm").Err() != redis.Nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s never served the meteor keyspace", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cl.Close()
	}
	const perNode = 2
	session := int64(0)
	for i, n := range []string{"a-0", "b-0", "c-0", "a-0", "b-0", "c-0"}[:3*perNode] {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			var cl *redis.Client
			var sess int64
			open := func() {
				if cl != nil {
					cl.Close()
				}
				cl = redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
				if err := cl.Do(ctx, "LC.KEYSPACE", "ms").Err(); err != nil {
					t.Errorf("%s: LC.KEYSPACE: %v", n, err)
				}
				mu.Lock()
				session++
				sess = session
				mu.Unlock()
			}
			open()
			defer func() { cl.Close() }()
			for seq := 0; time.Since(start) < 6*time.Second; seq++ {
				key := keys[rng.IntN(len(keys))]
				op := check.Op{Client: sess, Key: key, Call: int64(time.Since(start)), Outcome: check.OK}
				if rng.IntN(2) == 0 {
					v := fmt.Sprintf("c%d-%d", i, seq)
					err := cl.Set(ctx, key, v, 0).Err()
					op.Kind, op.Value, op.Found, op.Return = check.Write, v, true, int64(time.Since(start))
					if err != nil {
						// The write may still take effect: a new session
						// keeps program order true.
						op.Outcome, op.Return = check.Unknown, check.Never
						mu.Lock()
						hist.Ops = append(hist.Ops, op)
						mu.Unlock()
						open()
						continue
					}
				} else {
					v, err := cl.Get(ctx, key).Result()
					op.Return = int64(time.Since(start))
					setRead(&op, v, err)
				}
				mu.Lock()
				hist.Ops = append(hist.Ops, op)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	reads, writes := completed(hist)
	if reads < 100 || writes < 50 {
		t.Fatalf("only %d reads and %d writes completed: too little to check", reads, writes)
	}
	res := check.Sequential(hist, 0)
	t.Logf("%d operations (%d reads, %d writes completed): %s %s", len(hist.Ops), reads, writes, res.Model, res.Verdict)
	if res.Verdict != check.Pass {
		t.Fatalf("global sequential consistency: %s: %s", res.Verdict, res.Detail)
	}
}
