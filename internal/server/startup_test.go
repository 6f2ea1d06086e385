package server_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/server"
)

// TestBusyPortLeavesNothing: a start whose RESP, gRPC or HTTP port is
// taken fails naming it, creates no data directory, and logs no error
// from a front end it never served.
func TestBusyPortLeavesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, field := range []string{"resp_addr", "grpc_addr", "http_addr"} {
		addrs := map[string]string{}
		for _, f := range []string{"resp_addr", "grpc_addr", "http_addr"} {
			if addrs[f], err = localcluster.FreeAddr(); err != nil {
				t.Fatal(err)
			}
		}
		addrs[field] = busy.Addr().String()
		dir := filepath.Join(t.TempDir(), "data")
		var log syncBuffer
		err := server.Run(t.Context(), server.Config{DataDir: dir, RESPAddr: addrs["resp_addr"], GRPCAddr: addrs["grpc_addr"], HTTPAddr: addrs["http_addr"],
			Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err == nil || !strings.HasPrefix(err.Error(), field+": ") || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("%s busy: server.Run = %v; want an error naming %s and the busy address", field, err, field)
		}
		if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("%s busy: data dir %s: %v; want it not created", field, dir, serr)
		}
		if strings.Contains(log.String(), "level=ERROR") {
			t.Errorf("%s busy: logged an error:\n%s", field, log.String())
		}
	}
}

// TestBusyPeerPortLeavesNothing: a cluster node whose peer port is taken
// (bound after the store opens) fails and removes the data directory it
// created.
func TestBusyPeerPortLeavesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	nodes := map[string]server.NodeAddrs{"a-0": {Peer: busy.Addr().String()}}
	for _, n := range []string{"b-0", "c-0"} {
		addr, err := localcluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		nodes[n] = server.NodeAddrs{Peer: addr}
	}
	dir := filepath.Join(t.TempDir(), "data")
	err = server.Run(t.Context(), server.Config{DataDir: dir, RESPAddr: "off", GRPCAddr: "off", HTTPAddr: "off", Node: "a-0",
		Cluster: &server.Cluster{World: "local3", Nodes: nodes}, Log: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Run with a busy peer port = %v; want an address-in-use error", err)
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("data dir %s: %v; want it removed", dir, serr)
	}
}

// TestDataDirInUse: a second server on a data directory another one
// holds is refused, naming the lock file and the holder's pid; the lock
// is released when the holder stops.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	cfg := server.Config{DataDir: dir, RESPAddr: "127.0.0.1:0", GRPCAddr: "off", HTTPAddr: "off", Log: slog.New(slog.DiscardHandler)}
	stop := serveUntilStopped(t, cfg)
	err := server.Run(t.Context(), cfg)
	want := fmt.Sprintf("data dir %s is in use: another server (pid %d) holds its lock file %s", dir, os.Getpid(), filepath.Join(dir, server.LockFile))
	if err == nil || err.Error() != want {
		t.Errorf("second server: %v; want %s", err, want)
	}
	if err := stop(); err != nil {
		t.Fatalf("first server: %v", err)
	}
	if err := serveUntilStopped(t, cfg)(); err != nil {
		t.Fatalf("a server after the first stopped: %v", err)
	}
}

// serveUntilStopped runs a server until it is ready and returns the
// function that stops it and returns server.Run's error.
func serveUntilStopped(t *testing.T, cfg server.Config) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan server.Addrs, 1)
	done := make(chan error, 1)
	cfg.Ready = func(a server.Addrs) { ready <- a }
	go func() { done <- server.Run(ctx, cfg) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server not ready after 20s")
	}
	return func() error {
		cancel()
		return <-done
	}
}
