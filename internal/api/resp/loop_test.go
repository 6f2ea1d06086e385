package resp

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/api"
)

// eventLoopsFlag sets Config.EventLoops for every test server whose
// config leaves it 0: one loop, whatever GOMAXPROCS; and
// TestGoroutinePerConnection reruns the package's tests with
// -resp.event-loops=-1, so both ways of serving a connection run every
// test.
var eventLoopsFlag = flag.Int("resp.event-loops", 1, "Config.EventLoops of test servers that leave it 0")

// loopSeed replays TestLoopMatchesGoroutines with one seed.
var loopSeed = flag.Uint64("resp.seed", 0, "TestLoopMatchesGoroutines's seed (0: from the clock)")

// loopInfo returns INFO's event-loop fields: loops, connections on them,
// connections detached; and connected_clients.
func loopInfo(t *testing.T, rdb *redis.Client) (loops, clients, detached, connected int) {
	t.Helper()
	info, err := rdb.Info(context.Background(), "clients").Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	field := func(name string) int {
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("INFO %s = %q", name, v)
				}
				return n
			}
		}
		t.Fatalf("INFO has no %s:\n%s", name, info)
		return 0
	}
	return field("lightcone_event_loops"), field("lightcone_event_loop_clients"), field("lightcone_event_loop_detached"), field("connected_clients")
}

func skipWithoutLoops(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("event loops are Linux's only")
	}
	if *eventLoopsFlag < 0 {
		t.Skip("-resp.event-loops < 0: no loops")
	}
}

// TestLoopKeepsSimpleClients: a client of GET, SET and the connection
// commands stays on its event loop, pipelined or not.
func TestLoopKeepsSimpleClients(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 2})
	rdb := ts.client(t, &redis.Options{PoolSize: 1})
	ctx := context.Background()
	for i := range 50 {
		k := fmt.Sprint("k", i%7)
		if err := rdb.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatalf("SET: %v", err)
		}
		if got, err := rdb.Get(ctx, k).Int(); err != nil || got != i {
			t.Fatalf("GET %s = %d, %v; want %d", k, got, err, i)
		}
	}
	p := rdb.Pipeline()
	var gets []*redis.StringCmd
	for i := range 200 {
		p.Set(ctx, fmt.Sprint("p", i), i, 0)
		gets = append(gets, p.Get(ctx, fmt.Sprint("p", i)))
	}
	mget := p.MGet(ctx, "p1", "nope", "p199")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	for i, g := range gets {
		if v, err := g.Int(); err != nil || v != i {
			t.Fatalf("pipelined GET p%d = %d, %v", i, v, err)
		}
	}
	if got := fmt.Sprint(mget.Val()); got != "[1 <nil> 199]" {
		t.Fatalf("MGET = %s", got)
	}
	// A pipeline longer than maxInflight and the read buffer, sent at
	// once: the loop waits for replies at 1024, then reads on.
	rc := ts.dial(t)
	var b strings.Builder
	for i := range 5000 {
		k := fmt.Sprint("p", i%200)
		fmt.Fprintf(&b, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
	}
	go rc.nc.Write([]byte(b.String()))
	for i := range 5000 {
		if got, want := rc.reply(), strconv.Quote(fmt.Sprint(i%200)); got != want {
			t.Fatalf("reply %d = %s; want %s", i, got, want)
		}
	}
	// (go-redis may use a connection of its own for a long pipeline.)
	loops, clients, detached, connected := loopInfo(t, rdb)
	if loops != 2 || clients != connected || detached != 0 {
		t.Fatalf("loops %d, clients on them %d of %d, detached %d; want 2, all, 0", loops, clients, connected, detached)
	}
}

// TestLoopDetaches: a command that waits for replies while it runs moves
// its connection to a goroutine, in order with the commands pipelined
// around it, and the connection goes on working.
func TestLoopDetaches(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	rc := ts.dial(t)
	// SET, then INCR (a read and a conditional write), then GET, in one
	// write: INCR must see the SET and GET the INCR.
	rc.send("*3\r\n$3\r\nSET\r\n$1\r\nn\r\n$2\r\n41\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*2\r\n$3\r\nGET\r\n$1\r\nn\r\n")
	for _, want := range []string{"+OK", ":42", `"42"`} {
		if got := rc.reply(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	rc.send("*2\r\n$3\r\nGET\r\n$1\r\nn\r\n")
	if got := rc.reply(); got != `"42"` {
		t.Fatalf("GET after detaching = %q", got)
	}
	rdb := ts.client(t, &redis.Options{PoolSize: 1})
	if _, clients, detached, _ := loopInfo(t, rdb); clients != 1 || detached != 1 {
		t.Fatalf("clients on loops %d, detached %d; want 1 (INFO's own), 1", clients, detached)
	}
}

// TestLoopDetachesOnLargeCommands: a command larger than the read buffer,
// and an inline command, are read on a goroutine.
func TestLoopDetachesOnLargeCommands(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	big := strings.Repeat("v", 100<<10)
	rc := ts.dial(t)
	rc.send("*2\r\n$3\r\nGET\r\n$1\r\nb\r\n")
	rc.send(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$%d\r\n%s\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nb\r\n", len(big), big))
	for _, want := range []string{"nil", "+OK", ":102400"} {
		if got := rc.reply(); got != want {
			t.Fatalf("reply %.40q; want %q", got, want)
		}
	}
	in := ts.dial(t)
	in.send("PING\r\n")
	if got := in.reply(); got != "+PONG" {
		t.Fatalf("inline PING = %q", got)
	}
	rdb := ts.client(t, &redis.Options{PoolSize: 1})
	if _, _, detached, _ := loopInfo(t, rdb); detached != 2 {
		t.Fatalf("detached %d; want 2", detached)
	}
}

// TestLoopSlowReader: a client that pipelines more replies than its socket
// takes, reading nothing until it has sent everything, gets every reply,
// in order; its connection leaves the loop, which goes on serving others.
func TestLoopSlowReader(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	val := strings.Repeat("x", 60<<10)
	rc := ts.dial(t)
	rc.send(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nv\r\n$%d\r\n%s\r\n", len(val), val))
	if got := rc.reply(); got != "+OK" {
		t.Fatalf("SET = %q", got)
	}
	const n = 400 // 24 MB of replies
	done := make(chan error, 1)
	go func() {
		var b strings.Builder
		for range n {
			b.WriteString("*2\r\n$3\r\nGET\r\n$1\r\nv\r\n")
		}
		_, err := rc.nc.Write([]byte(b.String()))
		done <- err
	}()
	// Another client is served meanwhile.
	other := ts.client(t, &redis.Options{PoolSize: 1})
	if err := other.Set(context.Background(), "o", "1", 0).Err(); err != nil {
		t.Fatalf("other client's SET: %v", err)
	}
	rc.nc.SetDeadline(time.Now().Add(30 * time.Second))
	want := strconv.Quote(val)
	for i := range n {
		if got := rc.reply(); got != want {
			t.Fatalf("reply %d = %.40q", i, got)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("writing the pipeline: %v", err)
	}
	if _, _, detached, _ := loopInfo(t, other); detached != 1 {
		t.Fatalf("detached %d; want 1", detached)
	}
}

// TestLoopQuitAndEOF: QUIT's reply comes after the replies owed, then the
// server closes; a client that half-closes after a pipeline gets its
// replies.
func TestLoopQuitAndEOF(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	rc := ts.dial(t)
	rc.send("*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$1\r\n1\r\n*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n")
	for _, want := range []string{"+OK", "+OK"} {
		if got := rc.reply(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	rc.expectClosed()

	hc := ts.dial(t)
	hc.send("*2\r\n$3\r\nGET\r\n$1\r\nq\r\n*1\r\n$4\r\nPING\r\n")
	hc.nc.(interface{ CloseWrite() error }).CloseWrite()
	for _, want := range []string{`"1"`, "+PONG"} {
		if got := hc.reply(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	hc.expectClosed()
}

func TestScanCommand(t *testing.T) {
	for _, tc := range []struct {
		in          string
		size, nargs int
		st          scanStatus
	}{
		{"", 0, 0, scanIncomplete},
		{"*", 0, 0, scanIncomplete},
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, 2, scanComplete},
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1", 20, 2, scanComplete},
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r", 0, 0, scanIncomplete},
		{"*2\r\n$3\r\nGET\r\n$1\r\n", 0, 0, scanIncomplete},
		{"*2\r\n$3\r\nGET\r\n$", 0, 0, scanIncomplete},
		{"*2\r\n$3\r\nGET\r\n", 0, 0, scanIncomplete},
		{"PING\r\n", 0, 0, scanOther},          // inline
		{"*0\r\n", 0, 0, scanOther},            // empty
		{"*-1\r\n", 0, 0, scanOther},           // empty
		{"*2\n$3\r\nGET\r\n", 0, 0, scanOther}, // bare LF
		{"*1\r\n:3\r\n", 0, 0, scanOther},      // not a bulk
		{"*1\r\n$3\r\nGETX\r\n", 0, 0, scanOther},
		{"*1\r\n$9\r\nGET\r\n", 0, 0, scanIncomplete},
		{"*1\r\n$11\r\n", 0, 0, scanOther}, // over maxArg
		{"*3\r\n", 0, 0, scanOther},        // over maxArgs
		{"*1\r\n$" + strings.Repeat("1", 30), 0, 0, scanOther},
	} {
		size, nargs, st := scanCommand([]byte(tc.in), 10, 2)
		if size != tc.size || nargs != tc.nargs || st != tc.st {
			t.Errorf("scanCommand(%q) = %d, %d, %d; want %d, %d, %d", tc.in, size, nargs, st, tc.size, tc.nargs, tc.st)
		}
	}
}

// TestGoroutinePerConnection reruns this package's tests with
// Config.EventLoops -1 wherever a test leaves it 0: every connection on a
// goroutine of its own, as on platforms without event loops and over TLS.
func TestGoroutinePerConnection(t *testing.T) {
	if *eventLoopsFlag < 0 {
		t.Skip("this is the rerun")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^Test", "-test.skip=^TestGoroutinePerConnection$", "-resp.event-loops=-1", "-test.timeout=10m")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the package's tests with -resp.event-loops=-1: %v\n%s", err, out)
	}
}

// TestLoopMatchesGoroutines sends the same random command streams, cut
// into random pieces, to a server whose connections stay on event loops
// as long as they can and to one with a goroutine per connection, and
// checks that both send back the same bytes.
func TestLoopMatchesGoroutines(t *testing.T) {
	skipWithoutLoops(t)
	seed := *loopSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./internal/api/resp -run TestLoopMatchesGoroutines -resp.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	bulk := func(b *strings.Builder, args ...string) {
		fmt.Fprintf(b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	key := func() string { return fmt.Sprint("k", rng.IntN(4)) }
	// The commands a loop runs, and the ones that move a connection to a
	// goroutine: some rounds send only the first kind, some send the
	// second only near their end, some mix them throughout.
	const onLoop, kinds = 7, 16
	for round := range 30 {
		var b strings.Builder
		mix := rng.IntN(3)
		for i := range 200 {
			kind := rng.IntN(kinds)
			if mix == 0 || mix == 1 && i < 180 {
				kind = rng.IntN(onLoop + 1)
				if kind == onLoop {
					kind = kinds - 1 // an unknown command: an error reply, on the loop
				}
			}
			switch kind {
			case 0:
				bulk(&b, "PING")
			case 1:
				bulk(&b, "ECHO", strings.Repeat("e", rng.IntN(40)))
			case 2, 3:
				bulk(&b, "SET", key(), fmt.Sprint(rng.IntN(100)))
			case 4, 5:
				bulk(&b, "GET", key())
			case 6:
				bulk(&b, "MGET", key(), key(), key())
			case 7:
				bulk(&b, "INCR", key())
			case 8:
				bulk(&b, "DEL", key())
			case 9:
				bulk(&b, "SET", key(), "v", "NX")
			case 10:
				bulk(&b, "HSET", "h"+key(), "f", "v")
			case 11:
				bulk(&b, "MULTI")
				bulk(&b, "SET", key(), "m")
				bulk(&b, "GET", key())
				bulk(&b, "EXEC")
			case 12:
				b.WriteString("PING inline\r\n")
			case 13:
				bulk(&b, "SET", key(), strings.Repeat("L", 20<<10))
			case 14:
				b.WriteString("*0\r\n")
			case 15:
				bulk(&b, "NOSUCH", "x")
			}
		}
		bulk(&b, "QUIT")
		stream := []byte(b.String())
		var cuts []int
		for at := 0; at < len(stream); {
			at += 1 + rng.IntN(3000)
			cuts = append(cuts, min(at, len(stream)))
		}
		var got [2][]byte
		for i, loops := range []int{1, -1} {
			// Odd rounds answer GETs from published replies (CachedReader).
			ts := startServerOver(t, Config{EventLoops: loops}, func(b *fakeBackend) api.Backend {
				if round%2 == 1 {
					return newCachingBackend(b)
				}
				return b
			})
			rc := ts.dial(t)
			go func() {
				from := 0
				for _, to := range cuts {
					if _, err := rc.nc.Write(stream[from:to]); err != nil {
						return
					}
					from = to
				}
			}()
			out, err := io.ReadAll(rc.br)
			if err != nil {
				t.Fatalf("round %d, EventLoops %d: %v", round, loops, err)
			}
			got[i] = out
			if d := ts.s.detached.Load(); loops > 0 && mix == 0 && d != 0 {
				t.Fatalf("round %d: %d connections left the loop; want none", round, d)
			}
		}
		if !bytes.Equal(got[0], got[1]) {
			n := 0
			for n < min(len(got[0]), len(got[1])) && got[0][n] == got[1][n] {
				n++
			}
			t.Fatalf("round %d: the loop's replies differ from the goroutine's at byte %d of %d / %d:\nloop:      %.200q\ngoroutine: %.200q",
				round, n, len(got[0]), len(got[1]), got[0][n:], got[1][n:])
		}
	}
}

// TestLoopCachedReads: on a loop, GETs of published keys are answered at
// once, in order with the commands around them.
func TestLoopCachedReads(t *testing.T) {
	skipWithoutLoops(t)
	var cb *cachingBackend
	ts := startServerOver(t, Config{EventLoops: 1}, func(b *fakeBackend) api.Backend {
		cb = newCachingBackend(b)
		return cb
	})
	rc := ts.dial(t)
	get := "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
	rc.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n" + get)
	for _, want := range []string{"+OK", `"v1"`} {
		if got := rc.reply(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	// Published now: each GET is answered without the backend's loop.
	for i := range 3 {
		rc.send(get + "*1\r\n$4\r\nPING\r\n" + get)
		for _, want := range []string{`"v1"`, "+PONG", `"v1"`} {
			if got := rc.reply(); got != want {
				t.Fatalf("round %d: reply %q; want %q", i, got, want)
			}
		}
	}
	if n := cb.served.Load(); n < 3 {
		t.Fatalf("%d GETs answered from published replies; want at least 3", n)
	}
	if d := ts.s.detached.Load(); d != 0 {
		t.Fatalf("detached %d; want 0", d)
	}
}

// TestLoopRunsWhatLimitsHeldBack: commands read in one go past
// maxInflight whose replies need no backend (so nothing owed wakes the
// connection again) all run, and so does a SET after them.
func TestLoopRunsWhatLimitsHeldBack(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	rc := ts.dial(t)
	const n = maxInflight + 76
	rc.send(strings.Repeat("*1\r\n$4\r\nPING\r\n", n) + "*3\r\n$3\r\nSET\r\n$1\r\nz\r\n$1\r\n1\r\n")
	for i := range n {
		if got := rc.reply(); got != "+PONG" {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
	if got := rc.reply(); got != "+OK" {
		t.Fatalf("SET after the PINGs = %q", got)
	}
}

// TestLoopSeesHalfClose: a client that sends a command and half-closes at
// once gets its reply and then the server's close, every time (its FIN
// may come in the same edge as its bytes).
func TestLoopSeesHalfClose(t *testing.T) {
	skipWithoutLoops(t)
	ts := startServer(t, Config{EventLoops: 1})
	for i := range 100 {
		rc := ts.dial(t)
		rc.send("*1\r\n$4\r\nPING\r\n")
		rc.nc.(interface{ CloseWrite() error }).CloseWrite()
		if got := rc.reply(); got != "+PONG" {
			t.Fatalf("%d: reply %q", i, got)
		}
		rc.expectClosed()
		rc.nc.Close()
	}
}
