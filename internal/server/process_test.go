package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/localcluster"
)

// buildBinary compiles cmd/lightcone once per test binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lightcone")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lightcone").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	a, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// kvClient is a gRPC KV client of the server at addr, closed when the
// test ends.
func kvClient(t *testing.T, addr string) lightconev1.KVClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return lightconev1.NewKVClient(cc)
}

type proc struct {
	cmd              *exec.Cmd
	resp, http, grpc string
	log              *syncBuffer
}

func start(t *testing.T, bin, dataDir, resp, httpAddr string, extra ...string) *proc {
	t.Helper()
	p := &proc{resp: resp, http: httpAddr, grpc: freeAddr(t), log: &syncBuffer{}}
	args := append([]string{"server", "--data-dir", dataDir, "--resp-addr", resp, "--http-addr", httpAddr, "--grpc-addr", p.grpc}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	// Poll /readyz with a bound rather than sleeping.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + httpAddr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 20s; log:\n%s", p.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKillNineKeepsAcknowledgedWrites: with the default sync policy
// (fsync before any reply), every write the client saw acknowledged
// survives kill -9 of the server process.
func TestKillNineKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	t.Run("default", func(t *testing.T) { killNine(t, bin) })
	// Fsyncs that hold their thread are fsyncs all the same.
	t.Run("fsync-holds-thread", func(t *testing.T) { killNine(t, bin, "--fsync-holds-thread") })
}

// killNine is TestKillNineKeepsAcknowledgedWrites on a server started with
// flags extra.
func killNine(t *testing.T, bin string, extra ...string) {
	dir := filepath.Join(t.TempDir(), "data")
	resp, httpAddr := freeAddr(t), freeAddr(t)
	p := start(t, bin, dir, resp, httpAddr, extra...)
	holds := len(extra) > 0
	var st struct {
		Holds *bool `json:"fsync_holds_thread"`
	}
	if err := json.Unmarshal([]byte(httpBody(t, "http://"+httpAddr+"/status")), &st); err != nil || st.Holds == nil || *st.Holds != holds {
		t.Errorf("/status fsync_holds_thread = %v (%v); want %v", st.Holds, err, holds)
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: resp, Protocol: 2})
	defer c.Close()
	const n = 500
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		pipe.Set(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipelined SETs: %v", err)
	}
	if err := c.Del(ctx, "k0").Err(); err != nil {
		t.Fatal(err)
	}
	// /metrics shows Lightcone's own metrics.
	res, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lightcone_request_duration_seconds", `op="put"`, "lightcone_fsync_duration_seconds"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	p = start(t, bin, dir, resp, httpAddr, extra...)
	c2 := redis.NewClient(&redis.Options{Addr: resp, Protocol: 2})
	defer c2.Close()
	if v, err := c2.Get(ctx, "k0").Result(); err != redis.Nil {
		t.Errorf("GET k0 after restart = %q, %v; want nil (deleted before the kill)", v, err)
	}
	for i := 1; i < n; i++ {
		v, err := c2.Get(ctx, fmt.Sprintf("k%d", i)).Result()
		if err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("GET k%d after kill -9 and restart = %q, %v; want v%d", i, v, err, i)
		}
	}
	// A clean stop (SIGTERM) exits 0.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log)
	}
}

// TestGRPCAPI: the gRPC API serves the same store as RESP, with versions,
// per-request consistency and the standard health service.
func TestGRPCAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	p := start(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), freeAddr(t), "--token", "s3cret")
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret")
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", h, err)
	}
	kv := lightconev1.NewKVClient(conn)
	put, err := kv.Put(ctx, &lightconev1.PutRequest{Key: []byte("g"), Value: []byte("rpc"), Consistency: lightconev1.Consistency_CONSISTENCY_ALL})
	if err != nil {
		t.Fatal(err)
	}
	get, err := kv.Get(ctx, &lightconev1.GetRequest{Key: []byte("g")})
	if err != nil || !get.Found || string(get.Value) != "rpc" || get.Version.GetWallNanos() != put.Version.GetWallNanos() {
		t.Fatalf("Get = %v, %v; want rpc at the Put's version %v", get, err, put.Version)
	}
	if _, err := kv.Get(context.Background(), &lightconev1.GetRequest{Key: []byte("g")}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Get without the token: %v; want Unauthenticated", err)
	}
	c := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2})
	defer c.Close()
	if v, err := c.Get(context.Background(), "g").Result(); err != nil || v != "rpc" {
		t.Fatalf("RESP GET of a gRPC write = %q, %v; want rpc", v, err)
	}
}

// TestKeyspaces: a server with two keyspaces keeps their data apart and
// refuses a keyspace it does not serve, naming the ones it does.
func TestKeyspaces(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(cfg, []byte("keyspaces:\n  - {name: cache, read: ONE, write: ONE}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, bin, filepath.Join(dir, "data"), freeAddr(t), freeAddr(t), "--config", cfg)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2, PoolSize: 1})
	defer c.Close()
	if err := c.Set(ctx, "k", "default-value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "LC.KEYSPACE", "cache").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != redis.Nil {
		t.Fatalf("GET k in keyspace cache = %q, %v; want nil (keyspaces are separate)", v, err)
	}
	if err := c.Set(ctx, "k", "cache-value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "LC.KEYSPACE", "nope").Err(); err == nil || !strings.Contains(err.Error(), "keyspaces: default, cache") {
		t.Fatalf("LC.KEYSPACE nope: %v; want an error naming the keyspaces", err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "cache-value" {
		t.Fatalf("GET k after a refused LC.KEYSPACE = %q, %v; want cache-value (the connection keeps its keyspace)", v, err)
	}
	if err := c.Do(ctx, "LC.KEYSPACE", "default").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "default-value" {
		t.Fatalf("GET k in default = %q, %v; want default-value", v, err)
	}
}
