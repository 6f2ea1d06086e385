package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDeployConfigsLoad keeps the docker-compose and Kubernetes configs
// valid: each node of each layout resolves.
func TestDeployConfigsLoad(t *testing.T) {
	c, err := LoadConfig("../../deploy/compose/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"europe-0", "us-0", "asia-0"} {
		c.Node = n
		if _, err := c.layout(); err != nil {
			t.Errorf("compose node %s: %v", n, err)
		}
	}
	// The Kubernetes ConfigMap's two files, extracted.
	raw, err := os.ReadFile("../../deploy/k8s/lightcone.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "  world.yaml: |"):
			cur = "world.yaml"
		case strings.HasPrefix(line, "  cluster.yaml: |"):
			cur = "cluster.yaml"
		case strings.HasPrefix(line, "    ") && cur != "":
			files[cur] += strings.TrimPrefix(line, "    ") + "\n"
		case cur != "" && !strings.HasPrefix(line, "    "):
			cur = ""
		}
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := LoadConfig(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"lightcone-0", "lightcone-1", "lightcone-2"} {
		k.Node = n
		if _, err := k.layout(); err != nil {
			t.Errorf("k8s node %s: %v", n, err)
		}
	}
	k.Node = "lightcone-3"
	if _, err := k.layout(); err == nil || !strings.Contains(err.Error(), "lightcone-0, lightcone-1, lightcone-2") {
		t.Errorf("unknown node: error %v; want it to list the cluster's nodes", err)
	}
}

// TestClockOffsetNeedsFaultInjection: a stepped clock is a test's fault,
// refused unless fault injection is on.
func TestClockOffsetNeedsFaultInjection(t *testing.T) {
	err := Run(t.Context(), Config{DataDir: t.TempDir(), ClockOffset: time.Second})
	if err == nil || !strings.Contains(err.Error(), "clock_offset needs fault_injection") {
		t.Fatalf("Run with clock_offset and no fault injection: %v; want an error naming both", err)
	}
}

// TestLoadConfigErrors: a mistake in the --config file is an error naming
// the file, the mistake's line, the field, and for an unknown field the
// valid ones.
func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"data_dir: /tmp/x\nresp_adr: :6379\n", `c.yaml:2: unknown field "resp_adr" in server config (did you mean "resp_addr"?); valid fields: data_dir, resp_addr, grpc_addr, http_addr, peer_addr, sync, disk_reserve,`},
		{"cluster:\n  name: x\n  wan_emulaton: true\n", `c.yaml:3: unknown field "wan_emulaton" in cluster (did you mean "wan_emulation"?); valid fields: name, world, wan_emulation, nodes`},
		{"maxclients: lots\n", `c.yaml:1: maxclients: "lots" is not an integer`},
		{"sync: always\nkeyspaces: [{name: a, protocol: quorum}\nread: ONE\n", `c.yaml:2: syntax error: did not find expected ',' or ']'`},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(path)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Dir(path)+"/") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadConfig(%q) = %v; want %s...", tc.doc, err, tc.want)
		}
	}
}
