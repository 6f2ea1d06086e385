package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/check"
)

// dirKeyspaces are the directory protocols' keyspaces of
// TestDirectoryProtocolsOnRealServers: sc (strong consistency) and rc
// (release consistency, with a short hold_timeout so a silent holder is
// released within the test). Both put their directory in region c.
const dirKeyspaces = "keyspaces:\n" +
	"  - {name: sc, protocol: sc, directory_region: c}\n" +
	"  - {name: rc, protocol: rc, directory_region: c, hold_timeout: 4s, acquire_timeout: 3s}\n"

// TestDirectoryProtocolsOnRealServers: the directory protocols on three
// real processes (regions a, b and c, the directory's) with WAN emulation.
// sc: clients in two regions read and write two keys at once; the history
// must be linearizable. rc: LC.ACQUIRE / LC.RELEASE bracket reads and
// writes from two regions, and a read after an acquire sees the other
// region's released write. Bad input gets a clear error or a release,
// never a wedged row: a release without an acquire, an acquire in an
// unknown keyspace or in a keyspace without holds, a holder that stays
// connected and silent (released after hold_timeout), and one that
// disconnects (released when its connection closes).
func TestDirectoryProtocolsOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, true, dirKeyspaces)
	ctx := context.Background()
	// conn opens a one-connection client in keyspace ks: a hold belongs to
	// the connection that took it.
	conn := func(n, ks string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { cl.Close() })
		if err := cl.Do(ctx, "LC.KEYSPACE", ks).Err(); err != nil {
			t.Fatalf("%s: LC.KEYSPACE %s: %v", n, ks, err)
		}
		return cl
	}
	until := func(what string, limit time.Duration, f func() error) {
		t.Helper()
		pollUntil(t, what, limit, f)
	}
	// Wait until both keyspaces serve in every region.
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		sc, rc := conn(n, "sc"), conn(n, "rc")
		until(n+" serves sc", 20*time.Second, func() error {
			if err := sc.Get(ctx, "warm").Err(); err != redis.Nil {
				return fmt.Errorf("GET warm = %v; want nil", err)
			}
			return nil
		})
		until(n+" serves rc", 20*time.Second, func() error {
			if err := rc.Do(ctx, "LC.ACQUIRE", "warm-"+n).Err(); err != nil {
				return err
			}
			return rc.Do(ctx, "LC.RELEASE", "warm-"+n).Err()
		})
	}

	t.Run("sc linearizable", func(t *testing.T) {
		keys := []string{"x", "y"}
		var clients []*redis.Client
		for _, n := range []string{"a-0", "b-0", "a-0", "b-0"} {
			clients = append(clients, conn(n, "sc"))
		}
		hist := setGetHistory(ctx, clients, 4*time.Second,
			func(_, seq int) string { return keys[seq%len(keys)] },
			func(i, seq int) bool { return (seq+i)%3 == 0 })
		reads, writes := completed(hist)
		if reads < 20 || writes < 10 {
			t.Fatalf("only %d reads and %d writes completed: too little to check", reads, writes)
		}
		res := check.Linearizable(hist, 30*time.Second)
		t.Logf("%d operations (%d reads, %d writes completed): %s %s", len(hist.Ops), reads, writes, res.Model, res.Verdict)
		if res.Verdict != check.Pass {
			t.Fatalf("linearizability: %s: %s", res.Verdict, res.Detail)
		}
	})

	t.Run("rc acquire release", func(t *testing.T) {
		a, b := conn("a-0", "rc"), conn("b-0", "rc")
		do := func(cl *redis.Client, args ...any) {
			t.Helper()
			if err := cl.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
		get := func(cl *redis.Client, key, want string) {
			t.Helper()
			if v, err := cl.Get(ctx, key).Result(); err != nil || v != want {
				t.Fatalf("GET %s = %q, %v; want %q", key, v, err, want)
			}
		}
		for round := range 2 {
			va, vb := fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)
			do(a, "LC.ACQUIRE", "k")
			do(a, "SET", "k", va)
			get(a, "k", va)
			do(a, "LC.RELEASE", "k")
			do(b, "LC.ACQUIRE", "k")
			get(b, "k", va) // the other region's released write
			do(b, "SET", "k", vb)
			do(b, "LC.RELEASE", "k")
			do(a, "LC.ACQUIRE", "k")
			get(a, "k", vb)
			do(a, "LC.RELEASE", "k")
		}
	})

	t.Run("rc bad input", func(t *testing.T) {
		a := conn("a-0", "rc")
		wantErr := func(what, sub string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), sub) {
				t.Errorf("%s: %v; want an error containing %q", what, err, sub)
			}
		}
		wantErr("LC.RELEASE without LC.ACQUIRE", "without a hold", a.Do(ctx, "LC.RELEASE", "never").Err())
		wantErr("GET outside a hold", "acquire it first", a.Get(ctx, "never").Err())
		wantErr("SET outside a hold", "acquire it first", a.Set(ctx, "never", "v", 0).Err())
		// Keyspaces are chosen per connection with LC.KEYSPACE.
		wantErr("LC.KEYSPACE of an unknown keyspace", `unknown keyspace "nope"`, a.Do(ctx, "LC.KEYSPACE", "nope").Err())
		wantErr("LC.ACQUIRE in a keyspace without holds", "unknown operation", conn("a-0", "default").Do(ctx, "LC.ACQUIRE", "k").Err())
		wantErr("LC.ACQUIRE without a key", "wrong number of arguments", a.Do(ctx, "LC.ACQUIRE").Err())
	})

	// acquireFromB acquires key from region b, polling with a bound while
	// the former holder's hold lasts, checks it sees the holder's write and
	// releases it; it returns how long the acquire took.
	acquireFromB := func(t *testing.T, key string, limit time.Duration) time.Duration {
		t.Helper()
		b := conn("b-0", "rc")
		start := time.Now()
		until("acquire from b of "+key, limit, func() error { return b.Do(ctx, "LC.ACQUIRE", key).Err() })
		took := time.Since(start)
		if v, err := b.Get(ctx, key).Result(); err != nil || v != "held" {
			t.Errorf("GET %s after the holder left = %q, %v; want %q (its acknowledged write)", key, v, err, "held")
		}
		if err := b.Do(ctx, "LC.RELEASE", key).Err(); err != nil {
			t.Errorf("LC.RELEASE %s: %v", key, err)
		}
		return took
	}

	t.Run("rc silent holder is released", func(t *testing.T) {
		h := conn("a-0", "rc")
		if err := h.Do(ctx, "LC.ACQUIRE", "silent").Err(); err != nil {
			t.Fatal(err)
		}
		if err := h.Set(ctx, "silent", "held", 0).Err(); err != nil {
			t.Fatal(err)
		}
		// h stays connected and sends nothing: after hold_timeout (4s) its
		// frontend releases the row for it.
		took := acquireFromB(t, "silent", 10*time.Second)
		t.Logf("b acquired the silent holder's row after %v", took.Round(10*time.Millisecond))
		if err := h.Do(ctx, "LC.RELEASE", "silent").Err(); err == nil || !strings.Contains(err.Error(), "without a hold") {
			t.Errorf("LC.RELEASE by the released holder: %v; want an error saying it holds nothing", err)
		}
	})

	t.Run("rc disconnected holder is released", func(t *testing.T) {
		h := redis.NewClient(&redis.Options{Addr: c.addrs["a-0"][1], Protocol: 2, MaxRetries: -1, PoolSize: 1})
		if err := h.Do(ctx, "LC.KEYSPACE", "rc").Err(); err != nil {
			t.Fatal(err)
		}
		if err := h.Do(ctx, "LC.ACQUIRE", "gone").Err(); err != nil {
			t.Fatal(err)
		}
		if err := h.Set(ctx, "gone", "held", 0).Err(); err != nil {
			t.Fatal(err)
		}
		h.Close()
		// Closing the connection releases the row at once: b's acquire
		// waits for the WAN, not for hold_timeout.
		took := acquireFromB(t, "gone", 10*time.Second)
		t.Logf("b acquired the disconnected holder's row after %v", took.Round(10*time.Millisecond))
		if took >= 3*time.Second {
			t.Errorf("b acquired the row %v after its holder disconnected; want well under hold_timeout (4s): closing a connection releases its holds", took)
		}
	})

	t.Run("rc over gRPC", func(t *testing.T) {
		a, b := kvClient(t, c.procs["a-0"].grpc), kvClient(t, c.procs["b-0"].grpc)
		key := []byte("g")
		acq, err := a.Acquire(ctx, &lightconev1.AcquireRequest{Keyspace: "rc", Key: key})
		if err != nil || acq.Session == 0 {
			t.Fatalf("Acquire = %v, %v; want a session", acq, err)
		}
		if _, err := a.Put(ctx, &lightconev1.PutRequest{Keyspace: "rc", Key: key, Value: []byte("grpc"), Session: acq.Session}); err != nil {
			t.Fatalf("Put in the session: %v", err)
		}
		_, err = a.Get(ctx, &lightconev1.GetRequest{Keyspace: "rc", Key: key})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "acquire it first") {
			t.Errorf("Get without the session: %v; want InvalidArgument saying to acquire first", err)
		}
		if _, err := a.Release(ctx, &lightconev1.ReleaseRequest{Keyspace: "rc", Key: key}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("Release without a session: %v; want InvalidArgument", err)
		}
		if _, err := a.Release(ctx, &lightconev1.ReleaseRequest{Keyspace: "rc", Key: key, Session: acq.Session}); err != nil {
			t.Fatalf("Release: %v", err)
		}
		_, err = a.Release(ctx, &lightconev1.ReleaseRequest{Keyspace: "rc", Key: key, Session: acq.Session})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "without a hold") {
			t.Errorf("second Release: %v; want InvalidArgument saying there is no hold", err)
		}
		if _, err := a.Acquire(ctx, &lightconev1.AcquireRequest{Keyspace: "nope", Key: key}); status.Code(err) != codes.NotFound {
			t.Errorf("Acquire in an unknown keyspace: %v; want NotFound", err)
		}
		bs, err := b.Acquire(ctx, &lightconev1.AcquireRequest{Keyspace: "rc", Key: key})
		if err != nil {
			t.Fatalf("Acquire from b: %v", err)
		}
		got, err := b.Get(ctx, &lightconev1.GetRequest{Keyspace: "rc", Key: key, Session: bs.Session})
		if err != nil || string(got.Value) != "grpc" {
			t.Fatalf("Get from b after a's release = %v, %v; want grpc", got, err)
		}
		if _, err := b.Release(ctx, &lightconev1.ReleaseRequest{Keyspace: "rc", Key: key, Session: bs.Session}); err != nil {
			t.Fatalf("Release from b: %v", err)
		}
	})
}
