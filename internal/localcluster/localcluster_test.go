package localcluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
)

// buildBinary builds the lightcone command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process cluster; skipped in -short")
	}
	bin := filepath.Join(t.TempDir(), "lightcone")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lightcone").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func local3(t *testing.T) *topo.World {
	t.Helper()
	w, err := topo.Resolve("local3")
	if err != nil {
		t.Fatal(err)
	}
	w.NodesPerRegion = 1
	return w
}

// servers returns the PIDs of running `bin server` processes.
func servers(t *testing.T, bin string) []string {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", bin+" server").Output()
	return strings.Fields(string(out))
}

func TestStartStop(t *testing.T) {
	bin := buildBinary(t)
	var log bytes.Buffer
	c, err := Start(context.Background(), Options{World: local3(t), Binary: bin, Log: &log})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, log.String())
	}
	nodes := c.Nodes()
	if len(nodes) != 3 {
		t.Fatalf("len(Nodes()) = %d; want 3", len(nodes))
	}
	ctx := context.Background()
	for i, n := range nodes {
		if n.Region != i || n.Name != local3(t).Regions[i].Name+"-0" {
			t.Errorf("node %d = %s in region %d; want %s-0 in region %d", i, n.Name, n.Region, local3(t).Regions[i].Name, i)
		}
		if n.RESP == "" || n.HTTP == "" || n.GRPC == "" || n.Peer == "" {
			t.Errorf("node %s has an empty address: %+v", n.Name, n)
		}
	}
	// A write at ALL through one node is readable at ONE through every other.
	if err := nodes[0].Client.Do(ctx, "LC.SET", "k", "v", "LEVEL", "ALL").Err(); err != nil {
		t.Fatalf("LC.SET at ALL: %v", err)
	}
	for _, n := range nodes[1:] {
		got, err := n.Client.Do(ctx, "LC.GET", "k", "LEVEL", "ONE").Slice()
		if err != nil || len(got) == 0 || got[0] != "v" {
			t.Errorf("LC.GET(k) on %s = %v, %v; want [v ...]", n.Name, got, err)
		}
	}
	if got := len(servers(t, bin)); got != 3 {
		t.Errorf("%d server processes running; want 3", got)
	}
	dir := c.Dir()
	for _, f := range []string{"world.yaml", "cluster.yaml", "a-0.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("cluster directory lacks %s: %v", f, err)
		}
	}
	c.Stop()
	c.Stop() // idempotent
	if ps := servers(t, bin); len(ps) > 0 {
		t.Errorf("server processes left running after Stop: %v", ps)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still exists after Stop (err %v)", dir, err)
	}
	if !strings.Contains(log.String(), "cluster up: 3 nodes connected") {
		t.Errorf("log lacks the ready line:\n%s", log.String())
	}
}

// TestCancelDuringStart cancels Start at different moments: before any
// process exists, as soon as the first exists, and a little later. Start
// must fail with the context's error (unless the cluster was already up)
// and leave no process and no directory behind.
func TestCancelDuringStart(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		name  string
		after int // cancel once this many processes run (0: on the first log line)
		delay time.Duration
	}{
		{"before-spawn", 0, 0},
		{"first-process", 1, 0},
		{"all-processes", 3, 0},
		{"later", 1, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			log := &cancelWriter{cancel: cancel, immediate: tc.after == 0}
			if tc.after > 0 {
				go func() {
					for ctx.Err() == nil && len(servers(t, bin)) < tc.after {
						time.Sleep(5 * time.Millisecond)
					}
					time.Sleep(tc.delay)
					cancel()
				}()
			}
			dir := t.TempDir()
			start := time.Now()
			c, err := Start(ctx, Options{World: local3(t), Binary: bin, Dir: filepath.Join(dir, "cluster"), Log: log})
			switch {
			case err == nil:
				t.Logf("cluster was up before the cancellation (%s)", time.Since(start))
				c.Stop()
			case !errors.Is(err, context.Canceled):
				t.Errorf("Start = %v; want an error wrapping context.Canceled", err)
			case c != nil:
				t.Errorf("Start returned a cluster with error %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Start took %s to give up after cancellation", d)
			}
			if ps := servers(t, bin); len(ps) > 0 {
				t.Errorf("server processes left running: %v", ps)
			}
		})
	}
}

// cancelWriter cancels on its first write if immediate.
type cancelWriter struct {
	cancel    func()
	immediate bool
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.immediate {
		w.cancel()
	}
	return len(p), nil
}

func TestOptionsErrors(t *testing.T) {
	w := local3(t)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no world"},
		{Options{World: w, ReplicasPerRegion: 2}, "replicas per region 2"},
		{Options{World: w, Sync: "sometimes"}, "sometimes"},
		{Options{World: w, Read: "MOST"}, "MOST"},
	} {
		_, err := Start(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v; want an error containing %q", tc.o, err, tc.want)
		}
	}
}

// TestFreeAddrNeverRepeats: a process never gets one port twice from
// FreeAddr, though each listener is closed before the next pick.
func TestFreeAddrNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 3000 {
		a, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[a] {
			t.Fatalf("FreeAddr returned %s twice", a)
		}
		seen[a] = true
	}
}
