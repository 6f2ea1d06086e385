package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/server"
)

// startFromYAML runs a standalone server from a config file's text and
// returns its addresses, or the error it stopped with before serving.
func startFromYAML(t *testing.T, doc string) (server.Addrs, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lightcone.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(path)
	if err != nil {
		return server.Addrs{}, err
	}
	cfg.DataDir, cfg.RESPAddr, cfg.GRPCAddr, cfg.HTTPAddr, cfg.Sync = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "never"
	cfg.Log = slog.New(slog.DiscardHandler)
	ready := make(chan server.Addrs, 1)
	cfg.Ready = func(a server.Addrs) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg) }()
	select {
	case a := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		})
		return a, nil
	case err := <-done:
		cancel()
		return server.Addrs{}, err
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server not ready after 20s")
	}
	return server.Addrs{}, nil
}

// TestKeyspaceReportsItsProtocol: a server whose only keyspace is a lease
// one says lease in /status, INFO and every metric's protocol label, and
// never quorum.
func TestKeyspaceReportsItsProtocol(t *testing.T) {
	addrs, err := startFromYAML(t, "keyspace: {protocol: lease, lease_length: 5s}\n")
	if err != nil {
		t.Fatalf("server did not start: %v", err)
	}
	var st struct {
		Protocol  string
		Keyspaces []struct{ Name, Protocol, Policy string }
	}
	body := httpBody(t, "http://"+addrs.HTTP+"/status")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	if st.Protocol != "lease" || len(st.Keyspaces) != 1 || st.Keyspaces[0].Protocol != "lease" || !strings.HasPrefix(st.Keyspaces[0].Policy, "lease ") {
		t.Errorf("/status: want protocol lease for the node and its one keyspace; got\n%s", body)
	}
	cl := redis.NewClient(&redis.Options{Addr: addrs.RESP, Protocol: 2})
	defer cl.Close()
	info, err := cl.Info(context.Background()).Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	if !strings.Contains(info, "lightcone_protocol:lease") || !strings.Contains(info, "lightcone_keyspaces:default=lease") {
		t.Errorf("INFO lacks lightcone_protocol:lease and lightcone_keyspaces:default=lease:\n%s", info)
	}
	metrics := httpBody(t, "http://"+addrs.HTTP+"/metrics")
	if !strings.Contains(metrics, `protocol="lease"`) || strings.Contains(metrics, `protocol="quorum"`) {
		t.Errorf("/metrics: want every protocol label lease, none quorum")
	}
}

// TestForeignSettingRejected: a keyspace's settings are decoded against its
// own protocol's, so quorum with lease_length is an error naming it, the
// file and the line.
func TestForeignSettingRejected(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"keyspace: {protocol: quorum, lease_length: 1s}\n", `lightcone.yaml:1: keyspace: protocol quorum has no setting "lease_length" (valid: clock_probe_interval, commit_wait, max_clock_offset, max_drift_ppm, no_commit_wait, read, read_timeout, replicas_per_region, speculative_retry, write, write_order, write_timeout)`},
		{"keyspaces:\n  - {name: s, protocol: quorum, passive: true}\n", `lightcone.yaml:2: keyspaces[0]: protocol quorum has no setting "passive"`},
		{"keyspaces:\n  - {name: g, protocol: lease, lease_lenght: 1s}\n", `lightcone.yaml:2: keyspaces[0]: protocol lease has no setting "lease_lenght"`},
		{"keyspaces:\n  - {name: g, protocol: lease, lease_length: -1s}\n", `lease_length`},
		{"keyspaces:\n  - {name: m, protocol: raft}\n", `lightcone.yaml:2: keyspaces[0]: protocol: unknown protocol "raft" (valid: ` + strings.Join(protocol.Names(), ", ") + ")"},
		{"keyspace: {protocol: lease}\nread: ONE\n", `protocol lease has no setting "read"`},
	} {
		_, err := startFromYAML(t, tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: error %v; want it to contain %q", tc.doc, err, tc.want)
		}
	}
}
