package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/api/resp"
)

// Bounds TestMemoryBoundedUnderHostileClient asserts. On the server
// before the limits, the same test measured 1303 MiB over idle and a p99
// of 2.9 s; with them, about 210 MiB and 50-160 ms on an idle machine
// (docs/limits.md), and a p99 of up to 0.92 s while other tests loaded
// both cores: the latency bound leaves room for that, and still fails on
// the old server.
const (
	rssOverIdleMaxBytes = 256 << 20
	otherClientP99Max   = 1500 * time.Millisecond
)

// TestMemoryBoundedUnderHostileClient: one connection sends two 400 MiB
// bulk strings (over the 64 MiB value limit) and then an MGET of a million
// keys, while another client issues a GET every 5 ms. The server process
// (the real binary, so its RSS is its own) must stay within
// rssOverIdleMaxBytes of its idle RSS at its peak (VmHWM), the hostile
// connection must get its errors and its MGET reply, and the other
// client's p99 latency (measured from each request's scheduled time, so a
// stall counts once per request it delays) must stay under
// otherClientP99Max.
func TestMemoryBoundedUnderHostileClient(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	p := start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t))
	ctx := context.Background()
	other := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2, PoolSize: 4})
	defer other.Close()
	if err := other.Set(ctx, "probe", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	idle := procStatusKiB(t, p.cmd.Process.Pid, "VmRSS") << 10
	t.Logf("idle RSS %d MiB", idle>>20)

	// The other client: a GET every 5 ms, on its own schedule (open loop),
	// until the hostile connection is done.
	stop := make(chan struct{})
	var lat []time.Duration
	var probeErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		const every = 5 * time.Millisecond
		next := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if d := time.Until(next); d > 0 {
				time.Sleep(d) // pacing the open-loop schedule, not waiting for state
			}
			if err := other.Get(ctx, "probe").Err(); err != nil && probeErr == nil {
				probeErr = err
			}
			lat = append(lat, time.Since(next))
			next = next.Add(every)
		}
	}()

	nc, err := net.Dial("tcp", p.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	replies := bufio.NewReader(nc)
	const big = 400 << 20
	for i := range 2 {
		if err := sendBigSet(nc, "big", big); err != nil {
			t.Fatalf("sending 400 MiB value %d: %v", i, err)
		}
		line, err := replies.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "-ERR") || !strings.Contains(line, "too large") {
			t.Fatalf("reply to a 400 MiB SET = %q, %v; want an ERR ... too large", line, err)
		}
	}
	t.Logf("after two 400 MiB SETs: VmHWM %d MiB", procStatusKiB(t, p.cmd.Process.Pid, "VmHWM")>>10)
	const nkeys = 1_000_000
	if err := sendMGet(nc, nkeys); err != nil {
		t.Fatalf("sending MGET: %v", err)
	}
	if n, err := readNullArray(replies); err != nil || n != nkeys {
		t.Fatalf("MGET of %d absent keys: %d nils, %v", nkeys, n, err)
	}
	close(stop)
	wg.Wait()

	peak := procStatusKiB(t, p.cmd.Process.Pid, "VmHWM") << 10
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("peak RSS (VmHWM) %d MiB, %d MiB over idle (bound %d MiB); other client: %d GETs, p99 %v, max %v (bound %v)",
		peak>>20, (peak-idle)>>20, rssOverIdleMaxBytes>>20, len(lat), p99, lat[len(lat)-1], otherClientP99Max)
	if probeErr != nil {
		t.Errorf("other client's GET: %v", probeErr)
	}
	if peak-idle > rssOverIdleMaxBytes {
		t.Errorf("peak RSS %d MiB over idle; want at most %d MiB", (peak-idle)>>20, rssOverIdleMaxBytes>>20)
	}
	if p99 > otherClientP99Max {
		t.Errorf("other client's p99 = %v; want at most %v", p99, otherClientP99Max)
	}
}

// procStatusKiB reads a "Name: N kB" field of /proc/pid/status.
func procStatusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status %s: %v", pid, l, err)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// sendBigSet sends SET key <size bytes> without holding the value in
// memory: the test must not need the memory it checks the server for.
func sendBigSet(w io.Writer, key string, size int) error {
	if _, err := fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, size); err != nil {
		return err
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	for sent := 0; sent < size; {
		n, err := w.Write(chunk[:min(len(chunk), size-sent)])
		sent += n
		if err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\r\n")
	return err
}

// sendMGet sends MGET of keys mem:0 ... mem:n-1.
func sendMGet(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "*%d\r\n$4\r\nMGET\r\n", n+1)
	for i := range n {
		k := "mem:" + strconv.Itoa(i)
		fmt.Fprintf(bw, "$%d\r\n%s\r\n", len(k), k)
	}
	return bw.Flush()
}

// readNullArray reads an array reply and counts its null elements; any
// other element is an error.
func readNullArray(r *bufio.Reader) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if !strings.HasPrefix(line, "*") {
		return 0, fmt.Errorf("reply %q; want an array", strings.TrimSpace(line))
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return 0, err
	}
	for i := range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return i, err
		}
		if line != "$-1\r\n" {
			return i, fmt.Errorf("element %d = %q; want nil", i, strings.TrimSpace(line))
		}
	}
	return n, nil
}

// TestMaxClientsProcess: the real server refuses the connection past
// --maxclients with Redis's error, and lowers a maxclients the open file
// limit cannot serve, saying so in its log.
func TestMaxClientsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	p := start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t), "--maxclients", "5")
	for i := range 5 {
		nc, err := net.Dial("tcp", p.resp)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		if _, err := io.WriteString(nc, "PING\r\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
			t.Fatalf("client %d: PING = %q, %v; want +PONG", i+1, line, err)
		}
	}
	nc, err := net.Dial("tcp", p.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	if line, err := br.ReadString('\n'); err != nil || line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("client 6 of --maxclients 5: %q, %v; want -ERR max number of clients reached", line, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("client 6 after the error: %v; want EOF (closed)", err)
	}

	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Max >= 1<<31 {
		t.Skipf("open file limit %d: maxclients is never lowered", rl.Max)
	}
	// The child starts with our limit and Go raises its soft limit to the
	// hard one, as it did ours.
	want := 4 * int(rl.Max)
	p2 := start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t), "--maxclients", strconv.Itoa(want))
	// The line may follow the listeners' readiness, so wait for it (bounded).
	got := fmt.Sprintf("maxclients=%d wanted=%d", resp.MaxClientsFor(want, rl.Max), want)
	pollUntil(t, fmt.Sprintf("log of a server with --maxclients %d and RLIMIT_NOFILE %d", want, rl.Max), 10*time.Second, func() error {
		if !strings.Contains(p2.log.String(), got) {
			return fmt.Errorf("lacks %q:\n%s", got, p2.log)
		}
		return nil
	})
}
