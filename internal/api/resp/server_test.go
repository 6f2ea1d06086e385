package resp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/wire"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type testServer struct {
	s     *Server
	b     *fakeBackend
	clock *fakeClock
	addr  string
}

// startServer serves cfg over a fake backend on a loopback listener.
func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	return startServerOver(t, cfg, func(b *fakeBackend) api.Backend { return b })
}

// startServerOver is startServer with the fake backend wrapped.
func startServerOver(t *testing.T, cfg Config, wrap func(*fakeBackend) api.Backend) *testServer {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.EventLoops == 0 {
		cfg.EventLoops = *eventLoopsFlag
	}
	b := newFakeBackend(t)
	if _, ok := cfg.Scanner.(fakeScan); ok {
		cfg.Scanner = b
	}
	s := NewServer(cfg, wrap(b))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve() = %v; want ErrServerClosed", err)
		}
	})
	return &testServer{s: s, b: b, clock: clock, addr: l.Addr().String()}
}

func (ts *testServer) client(t *testing.T, opt *redis.Options) *redis.Client {
	t.Helper()
	if opt == nil {
		opt = &redis.Options{}
	}
	opt.Addr = ts.addr
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// rawConn is a client speaking raw bytes, for protocol-level tests.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func (ts *testServer) dial(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.nc, s); err != nil {
		rc.t.Fatal(err)
	}
}

// reply reads one reply and renders it on one line: +OK, -ERR x, :1,
// "bulk", nil, [a b].
func (rc *rawConn) reply() string {
	rc.t.Helper()
	s, err := readReply(rc.br)
	if err != nil {
		rc.t.Fatalf("reading reply: %v", err)
	}
	return s
}

func readReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "nil", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		return strconv.Quote(string(buf[:n])), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "nil", nil
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = readReply(br); err != nil {
				return "", err
			}
		}
		return "[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("bad reply line %q", line)
}

// expectClosed checks that the server closed the connection.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	if b, err := rc.br.ReadByte(); err == nil {
		rc.t.Fatalf("read %q; want the connection closed", b)
	}
}

func TestGoRedisStrings(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	if err := rdb.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got, err := rdb.Get(ctx, "a").Result(); err != nil || got != "1" {
		t.Fatalf("Get(a) = %q, %v; want \"1\"", got, err)
	}
	if _, err := rdb.Get(ctx, "missing").Result(); err != redis.Nil {
		t.Fatalf("Get(missing) err = %v; want redis.Nil", err)
	}
	// A plain value is stored verbatim, for other front ends to read.
	if raw, _ := ts.b.raw("default", "a"); string(raw) != "1" {
		t.Errorf("stored a = %q; want \"1\"", raw)
	}
	if err := rdb.MSet(ctx, "b", "2", "c", "3").Err(); err != nil {
		t.Fatalf("MSet: %v", err)
	}
	got, err := rdb.MGet(ctx, "a", "b", "nope", "c").Result()
	if err != nil || fmt.Sprint(got) != "[1 2 <nil> 3]" {
		t.Fatalf("MGet = %v, %v; want [1 2 <nil> 3]", got, err)
	}
	if n, err := rdb.Exists(ctx, "a", "b", "nope").Result(); err != nil || n != 2 {
		t.Fatalf("Exists = %d, %v; want 2", n, err)
	}
	if n, err := rdb.Del(ctx, "a", "nope", "b").Result(); err != nil || n != 2 {
		t.Fatalf("Del = %d, %v; want 2", n, err)
	}
	if n, err := rdb.Exists(ctx, "a").Result(); err != nil || n != 0 {
		t.Fatalf("Exists(a) after Del = %d, %v; want 0", n, err)
	}
	if n, err := rdb.Incr(ctx, "ctr").Result(); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v; want 1", n, err)
	}
	if n, err := rdb.IncrBy(ctx, "ctr", 41).Result(); err != nil || n != 42 {
		t.Fatalf("IncrBy = %d, %v; want 42", n, err)
	}
	if n, err := rdb.Decr(ctx, "ctr").Result(); err != nil || n != 41 {
		t.Fatalf("Decr = %d, %v; want 41", n, err)
	}
	if err := rdb.Incr(ctx, "c").Err(); err != nil {
		t.Fatalf("Incr(c=3): %v", err)
	}
	rdb.Set(ctx, "s", "abc", 0)
	if err := rdb.Incr(ctx, "s").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Fatalf("Incr(non-integer) err = %v", err)
	}
	rdb.Set(ctx, "max", strconv.FormatInt(1<<63-1, 10), 0)
	if err := rdb.Incr(ctx, "max").Err(); err == nil || err.Error() != "ERR increment or decrement would overflow" {
		t.Fatalf("Incr(max) err = %v", err)
	}
	if s, err := rdb.Ping(ctx).Result(); err != nil || s != "PONG" {
		t.Fatalf("Ping = %q, %v", s, err)
	}
	if s, err := rdb.Echo(ctx, "hi").Result(); err != nil || s != "hi" {
		t.Fatalf("Echo = %q, %v", s, err)
	}
}

func TestGoRedisSetOptions(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	if ok, err := rdb.SetNX(ctx, "k", "v1", 0).Result(); err != nil || !ok {
		t.Fatalf("SetNX(new) = %v, %v; want true", ok, err)
	}
	if ok, err := rdb.SetNX(ctx, "k", "v2", 0).Result(); err != nil || ok {
		t.Fatalf("SetNX(existing) = %v, %v; want false", ok, err)
	}
	if ok, err := rdb.SetXX(ctx, "nokey", "v", 0).Result(); err != nil || ok {
		t.Fatalf("SetXX(missing) = %v, %v; want false", ok, err)
	}
	if ok, err := rdb.SetXX(ctx, "k", "v3", 0).Result(); err != nil || !ok {
		t.Fatalf("SetXX(existing) = %v, %v; want true", ok, err)
	}
	old, err := rdb.SetArgs(ctx, "k", "v4", redis.SetArgs{Get: true}).Result()
	if err != nil || old != "v3" {
		t.Fatalf("SET GET = %q, %v; want v3", old, err)
	}
	if _, err := rdb.SetArgs(ctx, "fresh", "v", redis.SetArgs{Get: true}).Result(); err != redis.Nil {
		t.Fatalf("SET GET on a missing key err = %v; want redis.Nil", err)
	}
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"set", "k", "v", "nx", "xx"}, "ERR syntax error"},
		{[]any{"set", "k", "v", "ex", "0"}, "ERR invalid expire time in 'set' command"},
		{[]any{"set", "k", "v", "ex", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"set", "k", "v", "ex", "1", "px", "1"}, "ERR syntax error"},
		{[]any{"set", "k", "v", "bogus"}, "ERR syntax error"},
		{[]any{"set", "k"}, "ERR wrong number of arguments for 'set' command"},
	} {
		if err := rdb.Do(ctx, tc.args...).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: err = %v; want %q", tc.args, err, tc.want)
		}
	}
}

func TestGoRedisExpiry(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	if err := rdb.Set(ctx, "e", "v", 10*time.Second).Err(); err != nil {
		t.Fatalf("Set EX: %v", err)
	}
	if got, err := rdb.Get(ctx, "e").Result(); err != nil || got != "v" {
		t.Fatalf("Get(e) = %q, %v; want v", got, err)
	}
	if d, err := rdb.TTL(ctx, "e").Result(); err != nil || d != 10*time.Second {
		t.Fatalf("TTL(e) = %v, %v; want 10s", d, err)
	}
	ts.clock.Advance(2500 * time.Millisecond)
	if d, err := rdb.PTTL(ctx, "e").Result(); err != nil || d != 7500*time.Millisecond {
		t.Fatalf("PTTL(e) = %v, %v; want 7.5s", d, err)
	}
	ts.clock.Advance(7500 * time.Millisecond)
	if _, err := rdb.Get(ctx, "e").Result(); err != redis.Nil {
		t.Fatalf("Get(e) after expiry err = %v; want redis.Nil", err)
	}
	if n, _ := rdb.Exists(ctx, "e").Result(); n != 0 {
		t.Errorf("Exists(e) after expiry = %d; want 0", n)
	}
	if d, _ := rdb.TTL(ctx, "e").Result(); d != -2 {
		t.Errorf("TTL(e) after expiry = %v; want -2", d)
	}
	// SET NX treats an expired key as absent.
	if ok, err := rdb.SetNX(ctx, "e", "again", 0).Result(); err != nil || !ok {
		t.Fatalf("SetNX(expired) = %v, %v; want true", ok, err)
	}
	if d, _ := rdb.TTL(ctx, "e").Result(); d != -1 {
		t.Errorf("TTL(persistent) = %v; want -1", d)
	}
	// INCR and KEEPTTL keep the TTL.
	rdb.Set(ctx, "n", "5", time.Minute)
	if n, err := rdb.Incr(ctx, "n").Result(); err != nil || n != 6 {
		t.Fatalf("Incr(n) = %d, %v; want 6", n, err)
	}
	if d, _ := rdb.TTL(ctx, "n").Result(); d != time.Minute {
		t.Errorf("TTL(n) after Incr = %v; want 1m", d)
	}
	rdb.SetArgs(ctx, "n", "7", redis.SetArgs{KeepTTL: true})
	if d, _ := rdb.TTL(ctx, "n").Result(); d != time.Minute {
		t.Errorf("TTL(n) after SET KEEPTTL = %v; want 1m", d)
	}
	// EXAT in absolute time.
	at := ts.clock.Now().Add(time.Hour)
	rdb.SetArgs(ctx, "x", "v", redis.SetArgs{ExpireAt: at})
	if d, _ := rdb.TTL(ctx, "x").Result(); d != time.Hour {
		t.Errorf("TTL(x) after EXAT = %v; want 1h", d)
	}
}

func TestGoRedisHashes(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	if n, err := rdb.HSet(ctx, "h", "f2", "b", "f1", "a").Result(); err != nil || n != 2 {
		t.Fatalf("HSet = %d, %v; want 2", n, err)
	}
	if n, err := rdb.HSet(ctx, "h", "f1", "A", "f3", "c").Result(); err != nil || n != 1 {
		t.Fatalf("HSet(update) = %d, %v; want 1", n, err)
	}
	all, err := rdb.HGetAll(ctx, "h").Result()
	if err != nil || fmt.Sprint(all) != "map[f1:A f2:b f3:c]" {
		t.Fatalf("HGetAll = %v, %v", all, err)
	}
	vals, err := rdb.HMGet(ctx, "h", "f3", "nope", "f1").Result()
	if err != nil || fmt.Sprint(vals) != "[c <nil> A]" {
		t.Fatalf("HMGet = %v, %v", vals, err)
	}
	if v, err := rdb.HGet(ctx, "h", "f2").Result(); err != nil || v != "b" {
		t.Fatalf("HGet = %q, %v", v, err)
	}
	if _, err := rdb.HGet(ctx, "h", "nope").Result(); err != redis.Nil {
		t.Fatalf("HGet(missing field) err = %v; want redis.Nil", err)
	}
	if ok, _ := rdb.HExists(ctx, "h", "f1").Result(); !ok {
		t.Errorf("HExists(f1) = false")
	}
	if n, _ := rdb.HLen(ctx, "h").Result(); n != 3 {
		t.Errorf("HLen = %d; want 3", n)
	}
	if ok, err := rdb.HMSet(ctx, "h", "f4", "d").Result(); err != nil || !ok {
		t.Fatalf("HMSet = %v, %v", ok, err)
	}
	if n, err := rdb.HDel(ctx, "h", "f1", "nope").Result(); err != nil || n != 1 {
		t.Fatalf("HDel = %d, %v; want 1", n, err)
	}
	if err := rdb.Get(ctx, "h").Err(); err == nil || err.Error() != msgWrongType {
		t.Errorf("Get(hash) err = %v; want WRONGTYPE", err)
	}
	rdb.Set(ctx, "str", "v", 0)
	if err := rdb.HSet(ctx, "str", "f", "v").Err(); err == nil || err.Error() != msgWrongType {
		t.Errorf("HSet(string) err = %v; want WRONGTYPE", err)
	}
	if err := rdb.HGetAll(ctx, "str").Err(); err == nil || err.Error() != msgWrongType {
		t.Errorf("HGetAll(string) err = %v; want WRONGTYPE", err)
	}
	if all, err := rdb.HGetAll(ctx, "none").Result(); err != nil || len(all) != 0 {
		t.Errorf("HGetAll(missing) = %v, %v; want empty", all, err)
	}
	rdb.HDel(ctx, "h", "f2", "f3", "f4")
	if n, _ := rdb.Exists(ctx, "h").Result(); n != 0 {
		t.Errorf("Exists(emptied hash) = %d; want 0", n)
	}
	if err := rdb.Do(ctx, "hset", "h", "f").Err(); err == nil || err.Error() != "ERR wrong number of arguments for 'hset' command" {
		t.Errorf("HSET odd args err = %v", err)
	}
}

func TestGoRedisPipelineOrder(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	const n = 1000
	pipe := rdb.Pipeline()
	sets := make([]*redis.StatusCmd, n)
	gets := make([]*redis.StringCmd, n)
	for i := range n {
		k := "p" + strconv.Itoa(i)
		sets[i] = pipe.Set(ctx, k, strconv.Itoa(i*i), 0)
	}
	for i := range n {
		gets[i] = pipe.Get(ctx, "p"+strconv.Itoa(i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	for i := range n {
		if err := sets[i].Err(); err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
		if got := gets[i].Val(); got != strconv.Itoa(i*i) {
			t.Fatalf("Get(p%d) = %q; want %q", i, got, strconv.Itoa(i*i))
		}
	}
	// Interleave an error and a multi-step command in a pipeline.
	pipe = rdb.Pipeline()
	a := pipe.Set(ctx, "q", "1", 0)
	b := pipe.Incr(ctx, "q")
	c := pipe.Do(ctx, "nosuch")
	d := pipe.Get(ctx, "q")
	pipe.Exec(ctx)
	if a.Err() != nil || b.Val() != 2 || c.Err() == nil || d.Val() != "2" {
		t.Fatalf("pipeline = %v, %v, %v, %v", a, b, c, d)
	}
	// The pipeline's requests were submitted without waiting for replies:
	// all of one connection's requests carry increasing IDs.
	var last wire.RequestID
	reqs := ts.b.requests()
	for _, r := range reqs {
		if r.Client == reqs[0].Client {
			if r.ID <= last {
				t.Fatalf("request IDs not increasing: %d after %d", r.ID, last)
			}
			last = r.ID
		}
	}
}

// TestPipelineInFlight checks that a pipeline's commands are all submitted
// before any reply is awaited: the gate releases no reply until it has
// seen all 16 requests, so a server that waited per command would hang.
func TestPipelineInFlight(t *testing.T) {
	fake := newFakeBackend(t)
	gate := &gatedBackend{fakeBackend: fake, want: 16}
	s := NewServer(Config{}, gate)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	ts := &testServer{s: s, b: fake, addr: l.Addr().String()}
	rc := ts.dial(t)
	rc.nc.SetDeadline(time.Now().Add(5 * time.Second))
	var sb strings.Builder
	for i := range 16 {
		k := "k" + strconv.Itoa(i)
		fmt.Fprintf(&sb, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
	}
	rc.send(sb.String())
	for range 16 {
		if got := rc.reply(); got != "nil" {
			t.Fatalf("reply = %s; want nil", got)
		}
	}
}

// gatedBackend holds submissions until want of them have arrived, then
// passes them all on.
type gatedBackend struct {
	*fakeBackend
	want int
	mu   sync.Mutex
	held []func()
}

func (g *gatedBackend) Submit(req *wire.Request, done func(*wire.Reply)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := *req
	g.held = append(g.held, func() { g.fakeBackend.Submit(&r, done) })
	if len(g.held) == g.want {
		for _, f := range g.held {
			f()
		}
	} else if len(g.held) > g.want {
		g.fakeBackend.Submit(&r, done)
	}
}

func TestAuth(t *testing.T) {
	ts := startServer(t, Config{RequirePass: "sekret"})
	rc := ts.dial(t)
	steps := []struct{ send, want string }{
		{"GET a\r\n", "-NOAUTH Authentication required."},
		{"PING\r\n", "-NOAUTH Authentication required."},
		{"HELLO 2\r\n", "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"},
		{"AUTH wrong\r\n", "-WRONGPASS invalid username-password pair or user is disabled."},
		{"AUTH bob sekret\r\n", "-WRONGPASS invalid username-password pair or user is disabled."},
		{"AUTH sekret\r\n", "+OK"},
		{"PING\r\n", "+PONG"},
	}
	for _, s := range steps {
		rc.send(s.send)
		if got := rc.reply(); got != s.want {
			t.Fatalf("%q: reply %s; want %s", s.send, got, s.want)
		}
	}
	// go-redis authenticates with HELLO 3 AUTH (refused: RESP2 only),
	// then falls back to AUTH.
	ctx := context.Background()
	rdb := ts.client(t, &redis.Options{Password: "sekret"})
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("Set with password: %v", err)
	}
	bad := ts.client(t, &redis.Options{Password: "nope"})
	if err := bad.Get(ctx, "k").Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("Get with a wrong password err = %v; want WRONGPASS", err)
	}
	// HELLO 2 AUTH authenticates and replies the server map.
	rc = ts.dial(t)
	rc.send("HELLO 2 AUTH default sekret SETNAME me\r\n")
	got := rc.reply()
	if !strings.HasPrefix(got, `["server" "lightcone" "version" "7.0.0-lightcone" "proto" :2 "id" :`) ||
		!strings.HasSuffix(got, `"mode" "standalone" "role" "master" "modules" []]`) {
		t.Fatalf("HELLO reply = %s", got)
	}
	rc.send("CLIENT GETNAME\r\nHELLO 3\r\n")
	if got := rc.reply(); got != `"me"` {
		t.Errorf("CLIENT GETNAME = %s; want \"me\"", got)
	}
	if got := rc.reply(); got != "-NOPROTO sorry, this protocol version is not supported" {
		t.Errorf("HELLO 3 = %s", got)
	}
}

func TestAuthWithoutPassword(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.dial(t)
	rc.send("AUTH x\r\nAUTH default x\r\n")
	if got := rc.reply(); !strings.HasPrefix(got, "-ERR AUTH <password> called without any password configured") {
		t.Errorf("AUTH x = %s", got)
	}
	if got := rc.reply(); got != "+OK" {
		t.Errorf("AUTH default x = %s; want +OK", got)
	}
}

func TestProtocolErrorClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ send, want string }{
		{"*1\r\nx\r\n", "-ERR Protocol error: expected '$', got 'x'"},
		{"*abc\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$-2\r\n", "-ERR Protocol error: invalid bulk length"},
		{"SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request"},
		{"PING\r\n*1\r\n$999999999999\r\n", "+PONG"}, // the reply before the error still arrives
	} {
		rc := ts.dial(t)
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
		if strings.HasPrefix(tc.send, "PING") {
			if got := rc.reply(); got != "-ERR Protocol error: invalid bulk length" {
				t.Errorf("%q: second reply %s", tc.send, got)
			}
		}
		rc.expectClosed()
		if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
			t.Fatalf("other connection: Get = %q, %v", got, err)
		}
	}
}

func TestOversizedBulkRejectedBeforeAllocation(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.dial(t)
	// 999,999,999,999 bytes is far past the 512 MiB limit: refused on the
	// length line, without waiting for (or allocating) the data.
	rc.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$999999999999\r\n")
	if got := rc.reply(); got != "-ERR Protocol error: invalid bulk length" {
		t.Fatalf("reply %s", got)
	}
	rc.expectClosed()

	// Within the protocol limit but over MaxValueBytes: an error reply,
	// and the connection stays open.
	ts = startServer(t, Config{MaxValueBytes: 10, MaxKeyBytes: 4})
	rc = ts.dial(t)
	rc.send("SET k 12345678901\r\nSET kkkkk v\r\nMSET a 1 b 12345678901\r\nPING\r\n")
	for _, want := range []string{
		"-ERR value too large (11 bytes; max 10)",
		"-ERR key too large (5 bytes; max 4)",
		"-ERR value too large (11 bytes; max 10)",
		"+PONG",
	} {
		if got := rc.reply(); got != want {
			t.Errorf("reply %s; want %s", got, want)
		}
	}
}

func TestInlineAndMisc(t *testing.T) {
	ts := startServer(t, Config{Info: func() map[string]string { return map[string]string{"node": "n1", "dc": "eu"} }})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"PING\r\n", "+PONG"},
		{"ping hello\n", `"hello"`},
		{"SET a b\r\n", "+OK"},
		{"get a\r\n", `"b"`},
		{"set 'sp ace' \"x\\ty\"\r\n", "+OK"},
		{"GET \"sp ace\"\r\n", `"x\ty"`},
		{"\r\n\r\nEXISTS a a\r\n", ":2"},
		{"foo a b\r\n", "-ERR unknown command 'foo', with args beginning with: 'a' 'b' "},
		{"foo\r\n", "-ERR unknown command 'foo', with args beginning with: "},
		{"GET\r\n", "-ERR wrong number of arguments for 'get' command"},
		{"SELECT 0\r\n", "+OK"},
		{"SELECT 1\r\n", "-ERR DB index is out of range"},
		{"DBSIZE\r\n", "-ERR not supported by lightcone"},
		{"FLUSHALL\r\n", "-ERR not supported by lightcone"},
		{"FLUSHDB\r\n", "-ERR not supported by lightcone"},
		{"XADD s * f v\r\n", "-ERR unknown command 'XADD', with args beginning with: 's' '*' 'f' 'v' "},
		{"CONFIG GET save\r\n", `["save" ""]`},
		{"CONFIG GET appendonly\r\n", `["appendonly" "no"]`},
		{"CONFIG GET maxmemory\r\n", `[]`},
		{"COMMAND DOCS\r\n", `[]`},
		{"CLIENT SETNAME app\r\n", "+OK"},
		{"CLIENT GETNAME\r\n", `"app"`},
		{"CLIENT SETNAME \"a b\"\r\n", "-ERR Client names cannot contain spaces, newlines or special characters."},
		{"CLIENT SETINFO LIB-NAME x\r\n", "+OK"},
		{"CLIENT NOPE\r\n", "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP."},
		{"CLIENT SETNAME\r\n", "-ERR wrong number of arguments for 'client|setname' command"},
		{"TTL nokey\r\n", ":-2"},
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
	rc.send("INFO\r\n")
	info := rc.reply()
	for _, want := range []string{`# Server\r\nredis_version:7.0.0-lightcone\r\n`, `connected_clients:1`, `# Lightcone\r\n`, `dc:eu\r\nnode:n1\r\n`} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	rc.send("INFO clients\r\n")
	if got := rc.reply(); strings.Contains(got, "Server") || !strings.Contains(got, "connected_clients") {
		t.Errorf("INFO clients = %s", got)
	}
	rc.send("QUIT\r\n")
	if got := rc.reply(); got != "+OK" {
		t.Errorf("QUIT = %s", got)
	}
	rc.expectClosed()
}

func TestExtensionCommands(t *testing.T) {
	ts := startServer(t, Config{Write: wire.Quorum})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"LC.CONSISTENCY\r\n", `["READ" "DEFAULT" "WRITE" "QUORUM"]`},
		{"LC.CONSISTENCY READ one WRITE local-quorum\r\n", "+OK"},
		{"LC.CONSISTENCY\r\n", `["READ" "ONE" "WRITE" "LOCAL_QUORUM"]`},
		{"LC.CONSISTENCY READ most\r\n", `-ERR unknown consistency level "most" (valid: ONE, TWO, THREE, QUORUM, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM, ALL)`},
		{"LC.CONSISTENCY READ\r\n", "-ERR syntax error"},
		{"LC.KEYSPACE\r\n", `"default"`},
		{"LC.KEYSPACE ks2\r\n", "+OK"},
		{"LC.SET k v LEVEL all\r\n", `"1.0@n1"`},
		{"LC.GET k\r\n", `["v" "1.0@n1"]`},
		{"LC.GET nope\r\n", "nil"},
		{"LC.GETAT k\r\n", `["v" "1.0@n1" :0]`},
		{"LC.GETAT nope\r\n", `[nil "0.0@n0" :0]`},
		{"GET k\r\n", `"v"`},
		{"LC.DEL k\r\n", `"2.0@n1"`},
		{"LC.GET k LEVEL\r\n", "-ERR syntax error"},
		{"LC.SET k w UPDATE passive LEVEL one\r\n", `"3.0@n1"`},
		{"LC.SET k w UPDATE lazy\r\n", `-ERR unknown update mode "lazy" (valid: ACTIVE, PASSIVE, DEFAULT)`},
		{"LC.GET k UPDATE active\r\n", "-ERR syntax error"},
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
	var levels []string
	for _, r := range ts.b.requests() {
		if r.Keyspace != "ks2" {
			t.Errorf("request %v in keyspace %q; want ks2", r.Op, r.Keyspace)
		}
		levels = append(levels, r.Op.String()+"/"+r.Level.String())
		if r.Update != wire.UpdateDefault {
			levels = append(levels, r.Update.String())
		}
	}
	want := "put/ALL get/ONE get/ONE get/ONE get/ONE get/ONE delete/LOCAL_QUORUM put/ONE PASSIVE"
	if got := strings.Join(levels, " "); got != want {
		t.Errorf("requests = %s; want %s", got, want)
	}
}

func TestBackendErrors(t *testing.T) {
	ts := startServer(t, Config{})
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		switch r.Key {
		case "t":
			return &wire.Error{Code: wire.ErrTimeout, Msg: "no quorum in 2s"}
		case "u":
			return &wire.Error{Code: wire.ErrUnavailable, Msg: "2 of 3 replicas down"}
		case "i":
			return &wire.Error{Code: wire.ErrInvalid, Msg: "level ALL not allowed"}
		}
		return nil
	})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"SET t v\r\n", "-TIMEOUT outcome unknown: no quorum in 2s"},
		{"GET u\r\n", "-UNAVAILABLE 2 of 3 replicas down"},
		{"GET i\r\n", "-ERR level ALL not allowed"},
		{"MGET a u\r\n", "-UNAVAILABLE 2 of 3 replicas down"},
		{"INCR t\r\n", "-TIMEOUT outcome unknown: no quorum in 2s"},
		{"HSET u f v\r\n", "-UNAVAILABLE 2 of 3 replicas down"},
		{"PING\r\n", "+PONG"},
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
}

// TestValueEnvelopeEscaping checks that a value starting with the envelope
// magic round-trips through SET/GET while being stored escaped.
func TestValueEnvelopeEscaping(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()
	tricky := envelopeMagic + "h\x00"
	if err := rdb.Set(ctx, "t", tricky, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "t").Result(); err != nil || got != tricky {
		t.Fatalf("Get(t) = %q, %v; want %q", got, err, tricky)
	}
	if raw, _ := ts.b.raw("default", "t"); string(raw) == tricky {
		t.Errorf("stored %q verbatim; want it escaped", raw)
	}
	// A corrupt envelope written through LC.SET reads as an error.
	rdb.Do(ctx, "lc.set", "bad", envelopeMagic+"h\x05")
	if err := rdb.Get(ctx, "bad").Err(); err == nil || err.Error() != msgCorrupt {
		t.Errorf("Get(corrupt) err = %v; want %q", err, msgCorrupt)
	}
}

func TestCloseWithOutstandingRequest(t *testing.T) {
	// A backend that never replies: Close must not wait for it.
	hang := &hangingBackend{}
	s := NewServer(Config{}, hang)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	io.WriteString(nc, "GET hang\r\n")
	for hang.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a request outstanding")
	}
}

type hangingBackend struct {
	mu sync.Mutex
	n  int
}

func (h *hangingBackend) NewClientID() wire.ClientID { return 1 }

func (h *hangingBackend) Submit(req *wire.Request, done func(*wire.Reply)) {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *hangingBackend) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func TestRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed (install redis-tools to run this test)")
	}
	ts := startServer(t, Config{})
	_, port, _ := net.SplitHostPort(ts.addr)
	run := func(args ...string) string {
		out, err := exec.Command(cli, append([]string{"-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("set", "k", "v"); got != "OK" {
		t.Errorf("redis-cli set k v = %q; want OK", got)
	}
	if got := run("get", "k"); got != "v" {
		t.Errorf("redis-cli get k = %q; want v", got)
	}
	if got := run("hset", "h", "f", "v"); got != "1" {
		t.Errorf("redis-cli hset = %q; want 1", got)
	}
	if got := run("hgetall", "h"); got != "f\nv" {
		t.Errorf("redis-cli hgetall = %q; want f, v", got)
	}
	// Commands on stdin, as a script would pipe them.
	cmd := exec.Command(cli, "-p", port)
	cmd.Stdin = strings.NewReader("set a 1\nincr a\nget a\nlc.consistency read one\n")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK\n2\n2\nOK" {
		t.Errorf("redis-cli < script = %q, %v", out, err)
	}
}

func TestRedisBenchmark(t *testing.T) {
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not installed (install redis-tools to run this test)")
	}
	ts := startServer(t, Config{})
	_, port, _ := net.SplitHostPort(ts.addr)
	out, err := exec.Command(bench, "-p", port, "-t", "get,set", "-n", "2000", "-c", "4", "-P", "16", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	for _, want := range []string{"SET: ", "GET: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("redis-benchmark output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "ERR") || strings.Contains(string(out), "WARN") {
		t.Errorf("redis-benchmark reported a problem:\n%s", out)
	}
	t.Logf("redis-benchmark:\n%s", out)
}

// TestLCMigrate: LC.MIGRATE sends one OpMigrate for the key, with the
// region as its value, in the connection's keyspace, and replies the new
// master's region or the backend's error.
func TestLCMigrate(t *testing.T) {
	ts := startServer(t, Config{})
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		if r.Key == "busy" {
			return &wire.Error{Code: wire.ErrUnavailable, Msg: "lease: key busy (migration in progress)"}
		}
		return nil
	})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"LC.KEYSPACE glob\r\n", "+OK"},
		{"LC.MIGRATE k b\r\n", `"b"`},
		{"LC.MIGRATE k mars\r\n", `-ERR lease: migrate "k": unknown region "mars" (valid: a, b, c)`},
		{"LC.MIGRATE busy a\r\n", "-UNAVAILABLE lease: key busy (migration in progress)"},
		{"LC.MIGRATE k \"\"\r\n", "-ERR region name must not be empty"},
		{"LC.MIGRATE k\r\n", "-ERR wrong number of arguments for 'lc.migrate' command"},
		{"LC.MIGRATE k b c\r\n", "-ERR wrong number of arguments for 'lc.migrate' command"},
	} {
		rc.send(tc.send)
		if got := rc.reply(); got != tc.want {
			t.Errorf("%q: reply %s; want %s", tc.send, got, tc.want)
		}
	}
	var got []string
	for _, r := range ts.b.requests() {
		if r.Op != wire.OpMigrate || r.Keyspace != "glob" {
			t.Errorf("request %v in keyspace %q; want migrate in glob", r.Op, r.Keyspace)
		}
		got = append(got, r.Key)
	}
	if want := "k k busy"; strings.Join(got, " ") != want {
		t.Errorf("migrated keys = %q; want %q", strings.Join(got, " "), want)
	}
}

// TestCommandNameCase checks that command names match in any case, on
// exec's GET/SET shortcut and through the table, and that names one letter
// off GET and SET are unknown.
func TestCommandNameCase(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.dial(t)
	for _, tc := range []struct{ send, want string }{
		{"SeT k v\r\n", "+OK"},
		{"gEt k\r\n", `"v"`},
		{"GET k\r\n", `"v"`},
		{"get k\r\n", `"v"`},
		{"sEt k w\r\n", "+OK"},
		{"StrLen k\r\n", ":1"},
		{"GEU k\r\n", "-ERR unknown command 'GEU', with args beginning with: 'k' "},
		{"GDT k\r\n", "-ERR unknown command 'GDT', with args beginning with: 'k' "},
		{"SE4 k\r\n", "-ERR unknown command 'SE4', with args beginning with: 'k' "},
	} {
		rc.send(tc.send)
		got := rc.reply()
		if got != tc.want {
			t.Errorf("%q: reply %q; want %q", tc.send, got, tc.want)
		}
	}
}

// TestCachedReadsFollowTheConnection: a read answered from a published
// reply (api.CachedReader) never overtakes the connection's own earlier
// commands: in a pipeline GET, SET, GET the second GET sees the SET, and
// another connection sees it after. With connections that read published
// replies whatever they have in flight, the second GET returns the old
// value (teeth).
func TestCachedReadsFollowTheConnection(t *testing.T) {
	for _, unsafe := range []bool{false, true} {
		var cb *cachingBackend
		ts := startServerOver(t, Config{}, func(b *fakeBackend) api.Backend { cb = newCachingBackend(b); return cb })
		ts.s.unsafeCachedInFlight.Store(unsafe)
		rc := ts.dial(t)
		cmd := func(args ...string) string {
			var b strings.Builder
			fmt.Fprintf(&b, "*%d\r\n", len(args))
			for _, a := range args {
				fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
			}
			return b.String()
		}
		rc.send(cmd("SET", "k", "v1"))
		rc.send(cmd("GET", "k")) // through the backend: published
		rc.send(cmd("GET", "k")) // published
		for _, want := range []string{"+OK", `"v1"`, `"v1"`} {
			if got := rc.reply(); got != want {
				t.Fatalf("unsafe=%v: reply %s; want %s", unsafe, got, want)
			}
		}
		rc.send(cmd("GET", "k") + cmd("SET", "k", "v2") + cmd("GET", "k") + cmd("GET", "k"))
		var got []string
		for range 4 {
			got = append(got, rc.reply())
		}
		want := []string{`"v1"`, "+OK", `"v2"`, `"v2"`}
		if !unsafe {
			if !slices.Equal(got, want) {
				t.Errorf("pipeline GET, SET, GET, GET = %v; want %v", got, want)
			}
			other := ts.dial(t)
			other.send(cmd("GET", "k"))
			if r := other.reply(); r != `"v2"` {
				t.Errorf("another connection's GET = %s; want \"v2\"", r)
			}
			if cb.served.Load() == 0 {
				t.Error("no read was answered from a published reply")
			}
		} else if got[2] != `"v1"` {
			t.Errorf("teeth: with reads skipping the connection's in-flight SET the pipeline gave %v; want the stale \"v1\" third", got)
		}
	}
}
