package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/server"
)

// startServer runs a standalone server (one node, region "local") in the
// test's process: a quorum default keyspace, a lease keyspace "glob" and
// an rc keyspace "rc" and a cric keyspace "cric" (on the node's hosted
// storage service).
// It returns the RESP address.
func startServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Addrs, 1)
	done := make(chan error, 1)
	cfg := server.Config{DataDir: t.TempDir(), RESPAddr: "127.0.0.1:0", GRPCAddr: "off", HTTPAddr: "off",
		Keyspaces: []server.KeyspacePolicy{{Name: "glob", Protocol: "lease"}, {Name: "rc", Protocol: "rc"}, {Name: "cric", Protocol: "cric"}},
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
	return runCLIIn(addr, "", args...)
}

// runCLIIn is runCLI with stdin.
func runCLIIn(addr, stdin string, args ...string) (string, error) {
	cmd := cliCmd()
	cmd.SetIn(strings.NewReader(stdin))
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	// The connection flags go first: after "--" they would be a command's.
	cmd.SetArgs(append([]string{"--addr", addr, "--timeout", "10s"}, args...))
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

// TestCLIHold: `cli hold` acquires keys of an rc keyspace, runs one
// command or the lines of stdin on the holding connection, and releases
// them; bad input is refused with a clear error.
func TestCLIHold(t *testing.T) {
	addr := startServer(t)
	for _, tc := range []struct {
		args      []string
		stdin     string
		want      string
		wantErr   string
		wantOutIn string
	}{
		{args: []string{"hold", "--keyspace", "rc", "k", "--", "set", "k", "v1"}, want: "OK\n"},
		{args: []string{"hold", "--keyspace", "rc", "k", "--", "get", "k"}, want: "v1\n"},
		{args: []string{"hold", "--keyspace", "rc", "k", "--", "get", "absent"}, wantErr: `get absent: rc: get of "absent" outside a hold: acquire it first`},
		{args: []string{"hold", "--keyspace", "rc", "b", "a"}, stdin: "set a 1\n\nget a\nget b\nmget a b\n", want: "OK\n1\n(nil)\n  1\n  (nil)\n"},
		{args: []string{"hold", "--keyspace", "rc", "a"}, stdin: "get zz\nget a\n", wantErr: "hold: 1 command(s) failed", wantOutIn: "(error) rc: get of \"zz\" outside a hold"},
		{args: []string{"hold", "--keyspace", "nope", "k", "--", "get", "k"}, wantErr: `--keyspace: unknown keyspace "nope" (keyspaces: default, glob, rc, cric)`},
		{args: []string{"hold", "k", "--", "get", "k"}, wantErr: `acquire "k": keyspace "default": its protocol has no holds (only rc keyspaces do)`},
		{args: []string{"hold", "--keyspace", "rc", "k", "--"}, wantErr: "hold: no command after --"},
		{args: []string{"hold", "--keyspace", "rc", "--", "get", "k"}, wantErr: "hold: name the keys to hold before --"},
	} {
		name := strings.Join(tc.args, " ")
		out, err := runCLIIn(addr, tc.stdin, tc.args...)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s = %q, %v; want an error containing %q", name, out, err, tc.wantErr)
			}
			if !strings.Contains(out, tc.wantOutIn) {
				t.Errorf("%s printed %q; want it to contain %q", name, out, tc.wantOutIn)
			}
		case err != nil || out != tc.want:
			t.Errorf("%s = %q, %v; want %q", name, out, err, tc.want)
		}
	}
}

// TestCLICric: get, put and del name a cric keyspace with --keyspace, and
// stay out of the default one.
func TestCLICric(t *testing.T) {
	addr := startServer(t)
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"put", "--keyspace", "cric", "k", "v1"}, "OK (version "},
		{[]string{"get", "--keyspace", "cric", "k"}, "v1\n"},
		{[]string{"del", "--keyspace", "cric", "k"}, "1 deleted\n"},
		{[]string{"put", "k", "default"}, "OK\n"},
		{[]string{"get", "--keyspace", "cric", "k"}, "error"},
		{[]string{"get", "k"}, "default\n"},
	} {
		out, err := runCLI(addr, step.args...)
		if err != nil {
			out = "error: " + err.Error()
		}
		if !strings.HasPrefix(out, step.want) {
			t.Fatalf("cli %v = %q; want %q...", step.args, out, step.want)
		}
	}
}

// TestCLIKeyspace: every data command of `lightcone cli` takes --keyspace,
// and the node refuses a keyspace it does not serve at LC.KEYSPACE itself,
// naming those it does, before any command runs in it.
func TestCLIKeyspace(t *testing.T) {
	for _, c := range cliCmd().Commands() {
		if c.Name() != "status" && c.Flags().Lookup("keyspace") == nil {
			t.Errorf("cli %s has no --keyspace", c.Name())
		}
	}
	addr := startServer(t)
	const want = `--keyspace: unknown keyspace "nope" (keyspaces: default, glob, rc, cric)`
	for _, args := range [][]string{{"get", "k"}, {"put", "k", "v"}, {"del", "k"}, {"migrate", "k", "local"}, {"hold", "k", "--", "get", "k"}} {
		args = append([]string{args[0], "--keyspace", "nope"}, args[1:]...)
		if _, err := runCLI(addr, args...); err == nil || err.Error() != want {
			t.Errorf("cli %s = %v; want %s", strings.Join(args, " "), err, want)
		}
	}
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	err := c.Do(context.Background(), "LC.KEYSPACE", "nope").Err()
	if err == nil || !strings.Contains(err.Error(), `unknown keyspace "nope" (keyspaces: default, glob, rc, cric)`) {
		t.Errorf("LC.KEYSPACE nope = %v; want it refused, naming the keyspaces", err)
	}
	for _, args := range [][]string{{"put", "--keyspace", "glob", "k", "v"}, {"get", "--keyspace", "glob", "k"}, {"del", "--keyspace", "glob", "k"}} {
		if _, err := runCLI(addr, args...); err != nil {
			t.Errorf("cli %s: %v", strings.Join(args, " "), err)
		}
	}
}

// TestCLITxn: `cli txn` runs a transaction in the default keyspace
// (single-node quorum) and prints one line per operation; a lease
// keyspace refuses it.
func TestCLITxn(t *testing.T) {
	addr := startServer(t)
	out, err := runCLI(addr, "txn", "write", "a", "1", "add", "b", "5", "read", "c")
	if err != nil || out != "OK\n5\n(nil)\n" {
		t.Errorf("cli txn write a 1 add b 5 read c = %q, %v; want OK, 5, (nil)", out, err)
	}
	out, err = runCLI(addr, "txn", "--readonly", "read", "a", "read", "b")
	if err != nil || out != "1\n5\n" {
		t.Errorf("cli txn --readonly read a read b = %q, %v; want 1, 5", out, err)
	}
	if _, err := runCLI(addr, "txn", "--keyspace", "glob", "add", "b", "1"); err == nil || !strings.Contains(err.Error(), "cannot run transactions") {
		t.Errorf("cli txn in a lease keyspace: %v; want a refusal", err)
	}
}
