package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/server"
)

// startServer runs a standalone server (one node, region "local") in the
// test's process: a quorum default keyspace and a lease keyspace "glob".
// It returns the RESP address.
func startServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Addrs, 1)
	done := make(chan error, 1)
	cfg := server.Config{DataDir: t.TempDir(), RESPAddr: "127.0.0.1:0", GRPCAddr: "off", HTTPAddr: "off",
		Keyspaces: []server.KeyspacePolicy{{Name: "glob", Protocol: "lease"}},
		Log:       slog.New(slog.DiscardHandler), Ready: func(a server.Addrs) { ready <- a }}
	go func() { done <- server.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case a := <-ready:
		return a.RESP
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server not ready after 20s")
	}
	return ""
}

// runCLI runs `lightcone cli args...` against addr and returns its output.
func runCLI(addr string, args ...string) (string, error) {
	cmd := cliCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--addr", addr, "--timeout", "10s"))
	err := cmd.Execute()
	return out.String(), err
}

// TestCLIMigrate: `cli migrate` moves a lease keyspace's key (here, on one
// node, to the region it is already in), names the valid regions for an
// unknown one, and says a quorum keyspace's protocol does not support
// migration.
func TestCLIMigrate(t *testing.T) {
	addr := startServer(t)
	if out, err := runCLI(addr, "migrate", "k", "local", "--keyspace", "glob"); err != nil || out != "k: master in region local\n" {
		t.Errorf("migrate k local = %q, %v; want %q", out, err, "k: master in region local\n")
	}
	_, err := runCLI(addr, "migrate", "k", "mars", "--keyspace", "glob")
	if err == nil || !strings.Contains(err.Error(), `unknown region "mars"`) || !strings.Contains(err.Error(), "valid: local") {
		t.Errorf("migrate k mars = %v; want an unknown-region error naming the valid region local", err)
	}
	for _, args := range [][]string{{"migrate", "k", "local"}, {"migrate", "k", "local", "--keyspace", "default"}} {
		_, err := runCLI(addr, args...)
		if err == nil || !strings.Contains(err.Error(), `keyspace "default": its protocol does not support migration`) {
			t.Errorf("%s = %v; want: keyspace \"default\": its protocol does not support migration", strings.Join(args, " "), err)
		}
	}
	_, err = runCLI(addr, "migrate", "k", "local", "--keyspace", "nope")
	if err == nil || !strings.Contains(err.Error(), `unknown keyspace "nope"`) {
		t.Errorf("migrate in keyspace nope = %v; want an unknown-keyspace error", err)
	}
}

// TestCLIPutUpdateMode: put in a lease keyspace with an explicit update
// mode, and a bad mode refused before anything is sent.
func TestCLIPutUpdateMode(t *testing.T) {
	addr := startServer(t)
	for _, mode := range []string{"passive", "active"} {
		if out, err := runCLI(addr, "put", "k", "v-"+mode, "--keyspace", "glob", "--update", mode); err != nil || !strings.HasPrefix(out, "OK (version ") {
			t.Errorf("put --update %s = %q, %v; want OK with a version", mode, out, err)
		}
	}
	if _, err := runCLI(addr, "put", "k", "v", "--update", "lazy"); err == nil || !strings.Contains(err.Error(), `unknown update mode "lazy"`) {
		t.Errorf("put --update lazy = %v; want an unknown-update-mode error", err)
	}
}
