package resp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestMaxClients: with MaxClients connections open, one more is told
// "ERR max number of clients reached" and closed; once one leaves, a new
// client is served.
func TestMaxClients(t *testing.T) {
	const max = 3
	ts := startServer(t, Config{MaxClients: max})
	var conns []*rawConn
	for range max {
		rc := ts.dial(t)
		rc.send("PING\r\n")
		if got := rc.reply(); got != "+PONG" {
			t.Fatalf("PING = %s; want +PONG", got)
		}
		conns = append(conns, rc)
	}
	extra := ts.dial(t)
	if got := extra.reply(); got != "-"+msgMaxClients {
		t.Fatalf("connection %d: %s; want -%s", max+1, got, msgMaxClients)
	}
	if _, err := extra.br.ReadByte(); err != io.EOF {
		t.Fatalf("after the refusal: %v; want the connection closed (EOF)", err)
	}
	if got := ts.s.rejected.Load(); got != 1 {
		t.Errorf("rejected = %d; want 1", got)
	}
	conns[0].nc.Close()
	// The server notices the close asynchronously: poll, bounded.
	c := ts.client(t, &redis.Options{MaxRetries: -1, PoolSize: 1})
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			break
		}
		// Refused (ERR max number...) or closed under the write (broken
		// pipe, reset) while the server has not yet seen the close.
		if time.Now().After(deadline) {
			t.Fatalf("PING after a client left: %v; want PONG", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMaxClientsFor(t *testing.T) {
	for _, tc := range []struct {
		want   int
		nofile uint64
		got    int
	}{
		{10000, 1 << 20, 10000},
		{10000, 1 << 62, 10000},
		{10000, 10000, 10000 - ReservedFDs},
		{10000, 1024, 1024 - ReservedFDs},
		{10000, 300, 150},
		{100, 1024, 100},
		{10, 0, 1},
	} {
		if got := MaxClientsFor(tc.want, tc.nofile); got != tc.got {
			t.Errorf("MaxClientsFor(%d, %d) = %d; want %d", tc.want, tc.nofile, got, tc.got)
		}
	}
}

// TestOversizedArgumentDiscarded: an argument over the value limit is
// refused with an error, nothing is written, and the connection goes on.
func TestOversizedArgumentDiscarded(t *testing.T) {
	ts := startServer(t, Config{MaxValueBytes: 1 << 10, MaxKeyBytes: 512})
	rc := ts.dial(t)
	big := strings.Repeat("x", 100<<10)
	rc.send(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\nPING\r\n", len(big), big))
	if got, want := rc.reply(), fmt.Sprintf("-ERR argument too large (%d bytes; max %d)", len(big), 1<<10); got != want {
		t.Fatalf("SET of %d bytes = %s; want %s", len(big), got, want)
	}
	if got := rc.reply(); got != "+PONG" {
		t.Fatalf("PING after the refusal = %s; want +PONG", got)
	}
	if _, ok := ts.b.raw(DefaultKeyspace, "k"); ok {
		t.Error("the refused SET wrote k")
	}
	if got := ts.released(); got != 0 {
		t.Errorf("server holds %d bytes after the refusal; want 0", got)
	}
}

// released waits, bounded, for the server to hold no buffered bytes (a
// command's are released just after its reply is written, which the
// client may read first), and returns what it holds.
func (ts *testServer) released() int64 {
	deadline := time.Now().Add(5 * time.Second)
	for ts.s.buffered.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return ts.s.buffered.Load()
}

// TestQueryBufferLimit: one command over the connection's limit is
// refused; a pipeline whose commands together exceed it is served.
func TestQueryBufferLimit(t *testing.T) {
	const limit = 64 << 10
	ts := startServer(t, Config{QueryBufferLimit: limit})
	ctx := context.Background()
	c := ts.client(t, &redis.Options{PoolSize: 1})
	val := strings.Repeat("v", 20<<10)
	err := c.MSet(ctx, "a", val, "b", val, "c", val, "d", val).Err()
	if err == nil || !strings.Contains(err.Error(), "client-query-buffer-limit") {
		t.Fatalf("MSET of 80 KiB with a 64 KiB limit: %v; want ERR command too large", err)
	}
	pipe := c.Pipeline()
	for i := range 10 {
		pipe.Set(ctx, fmt.Sprintf("p%d", i), val, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipeline of ten 20 KiB SETs: %v", err)
	}
	if v, err := c.Get(ctx, "p9").Result(); err != nil || v != val {
		t.Fatalf("GET p9 = %d bytes, %v; want the 20 KiB value", len(v), err)
	}
	if err := c.Get(ctx, "a").Err(); err != redis.Nil {
		t.Fatalf("GET a after the refused MSET: %v; want nil (nothing written)", err)
	}
}

// TestBufferBudget: a command the server-wide budget cannot hold gets an
// OOM error; when every connection has written what it owes, the server
// holds nothing.
func TestBufferBudget(t *testing.T) {
	ts := startServer(t, Config{BufferBudget: 8 << 10})
	ctx := context.Background()
	c := ts.client(t, &redis.Options{PoolSize: 1})
	err := c.Set(ctx, "k", strings.Repeat("v", 16<<10), 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
		t.Fatalf("SET of 16 KiB with an 8 KiB budget: %v; want OOM ...", err)
	}
	if err := c.Set(ctx, "k", "small", 0).Err(); err != nil {
		t.Fatalf("SET of a small value: %v", err)
	}
	if got := ts.released(); got != 0 {
		t.Errorf("server holds %d bytes with no command running; want 0", got)
	}
}

// batchRecorder is a Backend that records the largest hand-off.
type batchRecorder struct {
	*fakeBackend
	mu       sync.Mutex
	maxBatch int
}

func (b *batchRecorder) SubmitBatch(reqs []*wire.Request, done func(*wire.Reply)) {
	b.mu.Lock()
	b.maxBatch = max(b.maxBatch, len(reqs))
	b.mu.Unlock()
	for _, r := range reqs {
		b.fakeBackend.Submit(r, done)
	}
}

func (b *batchRecorder) Submit(req *wire.Request, done func(*wire.Reply)) {
	b.SubmitBatch([]*wire.Request{req}, done)
}

// TestMultiKeyInSlices: MGET, EXISTS, DEL and MSET of thousands of keys
// give the answers of Redis, while no hand-off to the backend carries more
// than multiKeySlice requests.
func TestMultiKeyInSlices(t *testing.T) {
	var b *batchRecorder
	ts := startServerOver(t, Config{}, func(fb *fakeBackend) api.Backend {
		b = &batchRecorder{fakeBackend: fb}
		return b
	})
	ctx := context.Background()
	c := ts.client(t, &redis.Options{PoolSize: 1})

	const n = 2*multiKeySlice + 500
	var pairs, keys []any
	for i := range n {
		pairs = append(pairs, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
	}
	if err := c.MSet(ctx, pairs...).Err(); err != nil {
		t.Fatalf("MSET of %d pairs: %v", n, err)
	}
	var names []string
	for i := range n + 10 { // ten absent keys at the end
		names = append(names, fmt.Sprintf("k%d", i))
	}
	vals, err := c.MGet(ctx, names...).Result()
	if err != nil || len(vals) != n+10 {
		t.Fatalf("MGET of %d keys: %d values, %v", n+10, len(vals), err)
	}
	for i, v := range vals {
		want := any(fmt.Sprintf("v%d", i))
		if i >= n {
			want = nil
		}
		if v != want {
			t.Fatalf("MGET element %d = %v; want %v", i, v, want)
		}
	}
	for _, k := range names {
		keys = append(keys, k)
	}
	if got, err := c.Exists(ctx, names...).Result(); err != nil || got != n {
		t.Fatalf("EXISTS of %d keys (%d present) = %d, %v", len(names), n, got, err)
	}
	// k0 again past the first slice: deleted by then, counted once.
	if got, err := c.Del(ctx, append(names, "k0")...).Result(); err != nil || got != n {
		t.Fatalf("DEL of %d keys (%d present, one repeated) = %d, %v; want %d", len(names)+1, n, got, err, n)
	}
	if got, err := c.Exists(ctx, names...).Result(); err != nil || got != 0 {
		t.Fatalf("EXISTS after DEL = %d, %v; want 0", got, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.maxBatch > multiKeySlice {
		t.Errorf("largest hand-off to the backend: %d requests; want at most %d", b.maxBatch, multiKeySlice)
	}
}

// TestLargeMGetErrorElement: a large MGET whose later key fails carries
// that key's error as its element; one whose first slice fails is an
// error reply.
func TestLargeMGetErrorElement(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	c := ts.client(t, &redis.Options{PoolSize: 1})
	var names []string
	for i := range multiKeySlice + 10 {
		names = append(names, fmt.Sprintf("k%d", i))
	}
	fail := func(key string) {
		ts.b.setFail(func(r *wire.Request) *wire.Error {
			if r.Key == key {
				return &wire.Error{Code: wire.ErrUnavailable, Msg: "injected"}
			}
			return nil
		})
	}
	fail(names[multiKeySlice+5])
	vals, err := c.MGet(ctx, names...).Result()
	if err != nil {
		t.Fatalf("MGET with a failing key in the second slice: %v; want an array", err)
	}
	var re redis.Error
	if e, ok := vals[multiKeySlice+5].(error); !ok || !errors.As(e, &re) || !strings.Contains(e.Error(), "UNAVAILABLE injected") {
		t.Errorf("element of the failing key = %v; want the UNAVAILABLE error", vals[multiKeySlice+5])
	}
	if vals[0] != nil || vals[len(vals)-1] != nil {
		t.Errorf("other elements = %v, %v; want nil", vals[0], vals[len(vals)-1])
	}
	fail(names[3])
	if err := c.MGet(ctx, names...).Err(); err == nil || !strings.Contains(err.Error(), "UNAVAILABLE injected") {
		t.Errorf("MGET with a failing key in the first slice: %v; want the UNAVAILABLE error", err)
	}
}

// TestOutOfDescriptors: when the process has no descriptor left to accept
// with (EMFILE), a new client is still told "ERR max number of clients
// reached" and closed (with the spare descriptor), not left hanging in the
// listen backlog; once descriptors are free again clients are served.
func TestOutOfDescriptors(t *testing.T) {
	ts := startServer(t, Config{})
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	const served = 2
	var conns []*rawConn
	for range served {
		rc := ts.dial(t)
		rc.send("PING\r\n")
		if got := rc.reply(); got != "+PONG" {
			t.Fatalf("PING = %s; want +PONG", got)
		}
		conns = append(conns, rc)
	}
	// RLIMIT_NOFILE bounds descriptor numbers, and a new descriptor takes
	// the lowest free one: with the limit just above it, the next client's
	// end takes it and the server's accept finds none.
	probe, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	lowest := probe.Fd()
	probe.Close()
	lim := old
	lim.Cur = uint64(lowest) + 1
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	restore := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restore RLIMIT_NOFILE: %v", err)
		}
	}
	defer restore()
	refused := false
	for try := 0; try < 16 && !refused; try++ {
		extra := ts.dial(t)
		extra.send("PING\r\n")
		switch got := extra.reply(); got {
		case "+PONG":
			conns = append(conns, extra)
		case "-" + msgMaxClients:
			refused = true
			extra.nc.Close()
		default:
			t.Fatalf("client past the descriptor limit: %q; want -%s", got, msgMaxClients)
		}
	}
	if !refused {
		t.Fatalf("no client was refused with %q though descriptors ran out", msgMaxClients)
	}
	if got := ts.s.rejected.Load(); got != 1 {
		t.Errorf("rejected = %d; want 1", got)
	}
	restore()
	rc := ts.dial(t)
	rc.send("PING\r\n")
	if got := rc.reply(); got != "+PONG" {
		t.Fatalf("PING after descriptors returned = %s; want +PONG", got)
	}
	for _, c := range conns {
		c.nc.Close()
	}
}

// TestConfigValidate: limits that would refuse the largest legal command,
// or a budget below one client's limit, are configuration errors.
func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if err := (Config{QueryBufferLimit: DefaultMaxValueBytes}).Validate(); err == nil || !strings.Contains(err.Error(), "client_query_buffer_limit") {
		t.Errorf("query limit = the value limit: %v; want an error naming client_query_buffer_limit", err)
	}
	if err := (Config{BufferBudget: DefaultQueryBufferLimit / 2}).Validate(); err == nil || !strings.Contains(err.Error(), "client_buffer_budget") {
		t.Errorf("budget below a client's limit: %v; want an error naming client_buffer_budget", err)
	}
}
