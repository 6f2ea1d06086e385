package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/store/disk"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// diskServer is an in-process server whose data directory is on fs.
type diskServer struct {
	addrs  server.Addrs
	cancel context.CancelFunc
	done   chan error
}

func startOnFS(t *testing.T, fs vfs.FS, dir string, log io.Writer) *diskServer {
	t.Helper()
	return startInProcess(t, server.Config{DataDir: dir, FS: fs, RESPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(log, nil))})
}

// startInProcess runs a server of cfg in the test's process (its Ready is
// set here) and waits until it serves.
func startInProcess(t *testing.T, cfg server.Config) *diskServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Addrs, 1)
	s := &diskServer{cancel: cancel, done: make(chan error, 1)}
	cfg.Ready = func(a server.Addrs) { ready <- a }
	go func() { s.done <- server.Run(ctx, cfg) }()
	select {
	case s.addrs = <-ready:
	case err := <-s.done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server not ready after 20s")
	}
	return s
}

// alive fails the test if the server has stopped on its own.
func (s *diskServer) alive(t *testing.T, when string) {
	t.Helper()
	select {
	case err := <-s.done:
		t.Fatalf("%s: the server exited on its own: %v", when, err)
	default:
	}
}

func (s *diskServer) stop(t *testing.T) {
	t.Helper()
	s.alive(t, "before stop")
	s.cancel()
	if err := <-s.done; err != nil {
		t.Errorf("server stopped with %v", err)
	}
}

func readyz(t *testing.T, httpAddr string) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + httpAddr + "/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestDiskFullRefusesWritesAndRecovers is the disk-full report replayed
// against a real server: its data directory is on a 20 MiB filesystem that
// fills (disk.FillingFS: ENOSPC past the capacity, GetDiskUsage reporting
// it). Writes get a clear, retryable error (RESP "ERR disk full: …", gRPC
// RESOURCE_EXHAUSTED) while reads keep being served; /readyz says the node
// cannot take writes and /status why; the log says so a bounded number of
// times, not once per refused write; once space returns the node takes
// writes again on its own; every acknowledged write is present, also
// after a restart; and the server never exits on its own.
func TestDiskFullRefusesWritesAndRecovers(t *testing.T) {
	const capacity = 20 << 20
	fs := disk.NewFillingFS(vfs.Default, capacity)
	dir := t.TempDir()
	var log syncBuffer
	s := startOnFS(t, fs, dir, &log)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: s.addrs.RESP, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	kv := kvClient(t, s.addrs.GRPC)

	// Fill: incompressible 64 KiB values until a write is refused.
	rng := rand.NewChaCha8([32]byte{7})
	acked := map[string][]byte{}
	var refusal error
	for i := 0; i < 2*capacity/(64<<10) && refusal == nil; i++ {
		v := make([]byte, 64<<10)
		_, _ = rng.Read(v)
		k := fmt.Sprintf("k%04d", i)
		if refusal = rc.Set(ctx, k, v, 0).Err(); refusal == nil {
			acked[k] = v
		}
	}
	s.alive(t, "after filling")
	if refusal == nil || !strings.HasPrefix(refusal.Error(), "ERR disk full: ") {
		t.Fatalf("after %d writes on a %d-byte filesystem: SET error %v; want ERR disk full: …", len(acked), capacity, refusal)
	}
	t.Logf("%d writes (%d MiB) acknowledged, then: %v", len(acked), len(acked)*64>>10, refusal)
	if len(acked) < capacity/2/(64<<10) {
		t.Errorf("only %d writes fit on a %d-byte filesystem; the reserve is too large", len(acked), capacity)
	}

	// Every kind of write is refused, again and again, and logged once.
	const refusals = 50
	for i := range refusals {
		if err := rc.Set(ctx, fmt.Sprintf("more%d", i), "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("SET %d while full: %v; want ERR disk full", i, err)
		}
	}
	if err := rc.Del(ctx, "k0000").Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("DEL while full: %v; want ERR disk full", err)
	}
	_, err := kv.Put(ctx, &lightconev1.PutRequest{Key: []byte("g"), Value: []byte("rpc")})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "disk full") {
		t.Errorf("gRPC Put while full: %v; want RESOURCE_EXHAUSTED naming the disk", err)
	}

	// Reads keep being served, over both front ends.
	for k, v := range acked {
		got, err := rc.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %s while full: %d bytes, %v; want its acknowledged value", k, len(got), err)
		}
	}
	if g, err := kv.Get(ctx, &lightconev1.GetRequest{Key: []byte("k0000")}); err != nil || !bytes.Equal(g.Value, acked["k0000"]) {
		t.Errorf("gRPC Get while full: %v; want the acknowledged value", err)
	}

	// /readyz and /status say the node cannot take writes, and why.
	if code, body := readyz(t, s.addrs.HTTP); code != http.StatusServiceUnavailable || !strings.Contains(body, "disk full") {
		t.Errorf("/readyz while full = %d %q; want 503 naming the full disk", code, body)
	}
	if info, err := rc.Info(ctx).Result(); err != nil || !strings.Contains(info, "lightcone_disk_writable:0") {
		t.Errorf("INFO while full: %v; want lightcone_disk_writable:0 in\n%s", err, info)
	}
	var st struct {
		Disk disk.Space `json:"disk"`
	}
	body := httpBody(t, "http://"+s.addrs.HTTP+"/status")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	if st.Disk.Writable || !strings.Contains(st.Disk.Reason, "disk full") || st.Disk.Refused < refusals || st.Disk.TotalBytes != capacity {
		t.Errorf("/status disk = %+v; want not writable, the reason, >= %d refusals, total %d", st.Disk, refusals, capacity)
	}
	if n := strings.Count(log.String(), "disk: refusing client writes"); n < 1 || n > 2 {
		t.Errorf("the log says writes are refused %d times for %d refused writes; want once per 10s interval:\n%s", n, st.Disk.Refused, log.String())
	}
	if n := strings.Count(log.String(), "level=ERROR"); n > 10 {
		t.Errorf("%d error lines while full; want a few:\n%s", n, log.String())
	}

	// Space returns: the node takes writes again on its own.
	fs.SetCapacity(2 * capacity)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := readyz(t, s.addrs.HTTP)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %q 10s after space returned", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rc.Set(ctx, "after", "space", 0).Err(); err != nil {
		t.Fatalf("SET after space returned: %v", err)
	}
	acked["after"] = []byte("space")
	if _, err := kv.Put(ctx, &lightconev1.PutRequest{Key: []byte("g"), Value: []byte("rpc")}); err != nil {
		t.Fatalf("gRPC Put after space returned: %v", err)
	}
	acked["g"] = []byte("rpc")
	if !strings.Contains(log.String(), "client writes are taken again") {
		t.Errorf("the log does not say writes resumed:\n%s", log.String())
	}

	// Every acknowledged write survives a restart.
	s.stop(t)
	s = startOnFS(t, fs, dir, io.Discard)
	defer s.stop(t)
	rc2 := redis.NewClient(&redis.Options{Addr: s.addrs.RESP, Protocol: 2})
	defer rc2.Close()
	for k, v := range acked {
		got, err := rc2.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %s after restart: %d bytes, %v; want its acknowledged value", k, len(got), err)
		}
	}
}

// TestDiskFullOnRealTmpfs replays the report exactly: the real binary with
// its data directory on a 20 MiB tmpfs (root only: it mounts one). The
// process never exits: writes get ERR disk full, reads are served, /readyz
// fails; after `mount -o remount,size=40m` the node takes writes again on
// its own, every acknowledged write is there, and SIGTERM exits 0.
func TestDiskFullOnRealTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	bin := buildBinary(t)
	p := start(t, bin, filepath.Join(mnt, "data"), freeAddr(t), freeAddr(t))
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	rng := rand.NewChaCha8([32]byte{9})
	acked := map[string][]byte{}
	var refusal error
	for i := 0; i < 1000 && refusal == nil; i++ {
		v := make([]byte, 64<<10)
		_, _ = rng.Read(v)
		k := fmt.Sprintf("k%04d", i)
		if refusal = rc.Set(ctx, k, v, 0).Err(); refusal == nil {
			acked[k] = v
		}
	}
	if refusal == nil || !strings.HasPrefix(refusal.Error(), "ERR disk full: ") {
		t.Fatalf("after %d writes on a 20 MiB tmpfs: SET error %v; want ERR disk full", len(acked), refusal)
	}
	t.Logf("%d writes (%d MiB) acknowledged, then: %v", len(acked), len(acked)*64>>10, refusal)
	for range 200 {
		if err := rc.Set(ctx, "more", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("SET while full: %v; want ERR disk full", err)
		}
	}
	for k, v := range acked {
		if got, err := rc.Get(ctx, k).Bytes(); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %s while full: %d bytes, %v", k, len(got), err)
		}
	}
	if code, body := readyz(t, p.http); code != http.StatusServiceUnavailable || !strings.Contains(body, "disk full") {
		t.Errorf("/readyz while full = %d %q; want 503 naming the full disk", code, body)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=40m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := readyz(t, p.http); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz not ok 10s after space returned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rc.Set(ctx, "after", "space", 0).Err(); err != nil {
		t.Fatalf("SET after space returned: %v", err)
	}
	for k, v := range acked {
		if got, err := rc.Get(ctx, k).Bytes(); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %s after space returned: %d bytes, %v", k, len(got), err)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (it must not have exited before)\n%s", err, p.log)
	}
	if n := strings.Count(p.log.String(), "disk: refusing client writes"); n < 1 || n > 3 {
		t.Errorf("the log says writes are refused %d times for 200+ refused writes; want once per interval:\n%s", n, p.log)
	}
	t.Logf("log:\n%s", p.log)
}

// TestDiskFilledUnderTheNode: another process fills the disk between two
// free-space readings (the capacity drops to what is in use) while a
// client keeps writing. Every write is acknowledged or refused with ERR
// disk full, never lost or hung; Pebble's flushes that meet ENOSPC get the
// emergency ballast; the server does not exit; once space returns writes
// are taken again and every acknowledged one is there.
func TestDiskFilledUnderTheNode(t *testing.T) {
	const capacity = 20 << 20
	fs := disk.NewFillingFS(vfs.Default, capacity)
	s := startOnFS(t, fs, t.TempDir(), io.Discard)
	defer s.stop(t)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: s.addrs.RESP, Protocol: 2, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer rc.Close()
	rng := rand.NewChaCha8([32]byte{3})
	acked := map[string][]byte{}
	refused := 0
	for i := range 120 {
		if i == 20 {
			fs.SetCapacity(fs.Used())
		}
		v := make([]byte, 32<<10)
		_, _ = rng.Read(v)
		k := fmt.Sprintf("k%04d", i)
		switch err := rc.Set(ctx, k, v, 0).Err(); {
		case err == nil:
			acked[k] = v
		case strings.Contains(err.Error(), "disk full"):
			refused++
		default:
			t.Fatalf("SET %s: %v; want OK or ERR disk full", k, err)
		}
	}
	s.alive(t, "after the disk filled")
	if refused == 0 {
		t.Fatal("no write refused after the disk filled")
	}
	var st struct {
		Disk disk.Space `json:"disk"`
	}
	if err := json.Unmarshal([]byte(httpBody(t, "http://"+s.addrs.HTTP+"/status")), &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged, %d refused; /status disk: %+v", len(acked), refused, st.Disk)
	fs.SetCapacity(2 * capacity)
	deadline := time.Now().Add(10 * time.Second)
	for rc.Set(ctx, "after", "space", 0).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused 10s after space returned: %v", rc.Set(ctx, "after", "space", 0).Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for k, v := range acked {
		if got, err := rc.Get(ctx, k).Bytes(); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %s after space returned: %d bytes, %v", k, len(got), err)
		}
	}
}
