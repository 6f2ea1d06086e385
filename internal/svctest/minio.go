package svctest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MinIOModule is the MinIO server the tests build from the Go module proxy.
// MinIO tags releases RELEASE.<date>, which are not semantic versions, so
// the proxy serves them as pseudo-versions; this is its newest (2026-02-12).
const MinIOModule = "github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"

// MinIO credentials of the test servers.
const (
	MinIOUser     = "lightcone"
	MinIOPassword = "lightcone-secret"
)

// MinIOBinary finds the MinIO server: $LIGHTCONE_MINIO, else minio on the
// PATH, else the one MinIOBuild leaves in the user cache, else it builds
// it (go install MinIOModule, several minutes on two cores: .ci/run builds
// it ahead). It returns "" and why when there is none and the build fails.
func MinIOBinary(t testing.TB) (string, string) {
	if p := os.Getenv("LIGHTCONE_MINIO"); p != "" {
		return p, ""
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, ""
	}
	dir := MinIOCacheDir()
	bin := filepath.Join(dir, "minio")
	if _, err := os.Stat(bin); err == nil {
		return bin, ""
	}
	t.Logf("svctest: building MinIO (%s) into %s; this takes minutes, once", MinIOModule, dir)
	start := time.Now()
	if out, err := MinIOBuild(dir); err != nil {
		return "", fmt.Sprintf("go install %s failed after %v: %v\n%s", MinIOModule, time.Since(start).Round(time.Second), err, out)
	}
	t.Logf("svctest: built MinIO in %v", time.Since(start).Round(time.Second))
	return bin, ""
}

// MinIOCacheDir is where MinIOBuild installs the server.
func MinIOCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	v := MinIOModule[strings.LastIndexByte(MinIOModule, '@')+1:]
	return filepath.Join(d, "lightcone", "minio-"+v)
}

// MinIOBuild installs MinIO into dir with the go command.
func MinIOBuild(dir string) ([]byte, error) {
	cmd := exec.Command("go", "install", MinIOModule)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// StartMinIO starts a MinIO server on a fresh directory and loopback port
// for the rest of the test, and returns its endpoint (host:port). Without a
// MinIO binary it skips the test, loudly, saying why.
func StartMinIO(t testing.TB) string {
	t.Helper()
	return StartMinIOServer(t).Endpoint
}

// MinIO is a MinIO server a test started.
type MinIO struct {
	Endpoint string // host:port
	cmd      *exec.Cmd
	done     chan struct{}
}

// Stop kills the server (as a crash would); the rest of the test finds
// its endpoint refusing connections.
func (m *MinIO) Stop() {
	_ = m.cmd.Process.Kill()
	<-m.done
}

// StartMinIOServer is StartMinIO, returning the server to stop it. Its
// Prometheus metrics are public (Requests reads them).
func StartMinIOServer(t testing.TB) *MinIO {
	t.Helper()
	bin, why := MinIOBinary(t)
	if bin == "" {
		t.Skipf("SKIPPING: no MinIO server to test the S3 backend against: %s (set LIGHTCONE_MINIO to a minio binary)", why)
	}
	addr, console := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr, "--console-address", console, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+MinIOUser, "MINIO_ROOT_PASSWORD="+MinIOPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_PROMETHEUS_AUTH_TYPE=public")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	m := &MinIO{Endpoint: addr, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(m.done) }()
	t.Cleanup(m.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		// Ready, and past initialisation: MinIO reports ready a moment
		// before it takes S3 requests (which answer 503 "Server not
		// initialized" until then; an unsigned ListBuckets answers 403
		// once it serves).
		if status(ctx, addr, "/minio/health/ready") == http.StatusOK && status(ctx, addr, "/") == http.StatusForbidden {
			return m
		}
		select {
		case <-m.done:
			t.Fatalf("minio exited before serving:\n%s", out.String())
		case <-ctx.Done():
			t.Fatalf("minio not live on %s after 60s:\n%s", addr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Requests returns the S3 requests the server has served so far, by API
// ("PutObject", "GetObject", ...), from its Prometheus metrics
// (minio_api_requests_total on /minio/metrics/v3/api/requests, counted as
// each request is served; v2's are refreshed only every 10 s).
func (m *MinIO) Requests(ctx context.Context) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.Endpoint+"/minio/metrics/v3/api/requests", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("minio metrics: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, "minio_api_requests_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		for _, l := range strings.Split(labels, ",") {
			if api, ok := strings.CutPrefix(l, `name="`); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
				if err != nil {
					return nil, fmt.Errorf("minio metrics: %q: %w", line, err)
				}
				out[strings.TrimSuffix(api, `"`)] += int64(v)
			}
		}
	}
	return out, nil
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func status(ctx context.Context, addr, path string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
