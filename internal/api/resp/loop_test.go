package resp

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// eventLoopsFlag sets Config.EventLoops for every test server whose
// config leaves it 0: TestGoroutinePerConnection reruns the package's
// tests with -resp.event-loops=-1, so both ways of serving a connection
// run every test.
var eventLoopsFlag = flag.Int("resp.event-loops", 0, "Config.EventLoops of test servers that leave it 0")

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
