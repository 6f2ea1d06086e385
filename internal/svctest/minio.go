package svctest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	bin, why := MinIOBinary(t)
	if bin == "" {
		t.Skipf("SKIPPING: no MinIO server to test the S3 backend against: %s (set LIGHTCONE_MINIO to a minio binary)", why)
	}
	addr, console := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr, "--console-address", console, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+MinIOUser, "MINIO_ROOT_PASSWORD="+MinIOPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		// Ready, and past initialisation: MinIO reports ready a moment
		// before it takes S3 requests (which answer 503 "Server not
		// initialized" until then; an unsigned ListBuckets answers 403
		// once it serves).
		if status(ctx, addr, "/minio/health/ready") == http.StatusOK && status(ctx, addr, "/") == http.StatusForbidden {
			return addr
		}
		select {
		case <-done:
			t.Fatalf("minio exited before serving:\n%s", out.String())
		case <-ctx.Done():
			t.Fatalf("minio not live on %s after 60s:\n%s", addr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
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
