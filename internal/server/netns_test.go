package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// netLab is a bridge in the root namespace with one network namespace per
// node hanging off it by a veth pair: separate hosts on one machine.
type netLab struct {
	t      *testing.T
	id     string
	subnet string // "10.213.N"
	bridge string
}

func run(t *testing.T, args ...string) error {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func newNetLab(t *testing.T, hosts int) *netLab {
	if os.Geteuid() != 0 {
		t.Skip("network-namespace test needs root (CI runs as root); the transport fault-hook test covers isolation without it")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network-namespace test needs iproute2's ip command")
	}
	n := rand.IntN(200) + 20
	l := &netLab{t: t, id: fmt.Sprintf("%d", n), subnet: fmt.Sprintf("10.213.%d", n), bridge: fmt.Sprintf("lcbr%d", n)}
	if err := run(t, "ip", "link", "add", l.bridge, "type", "bridge"); err != nil {
		t.Skipf("cannot create a bridge here (%v); skipping the network-namespace test", err)
	}
	t.Cleanup(func() { _ = run(t, "ip", "link", "del", l.bridge) })
	must := func(args ...string) {
		if err := run(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	must("ip", "addr", "add", l.subnet+".1/24", "dev", l.bridge)
	must("ip", "link", "set", l.bridge, "up")
	for i := 0; i < hosts; i++ {
		ns, veth := l.ns(i), l.veth(i)
		must("ip", "netns", "add", ns)
		t.Cleanup(func() { _ = run(t, "ip", "netns", "del", ns) })
		must("ip", "link", "add", veth, "type", "veth", "peer", "name", veth+"p")
		t.Cleanup(func() { _ = run(t, "ip", "link", "del", veth) })
		must("ip", "link", "set", veth+"p", "netns", ns)
		must("ip", "link", "set", veth, "master", l.bridge)
		must("ip", "link", "set", veth, "up")
		must("ip", "netns", "exec", ns, "ip", "addr", "add", l.ip(i)+"/24", "dev", veth+"p")
		must("ip", "netns", "exec", ns, "ip", "link", "set", veth+"p", "up")
		must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	}
	return l
}

func (l *netLab) ns(i int) string   { return fmt.Sprintf("lcns%s-%d", l.id, i) }
func (l *netLab) veth(i int) string { return fmt.Sprintf("lcv%s-%d", l.id, i) }
func (l *netLab) ip(i int) string   { return fmt.Sprintf("%s.%d", l.subnet, 10+i) }

// cut takes host i off the network (its cable unplugged), or back.
func (l *netLab) cut(i int, down bool) {
	state := "up"
	if down {
		state = "down"
	}
	if err := run(l.t, "ip", "link", "set", l.veth(i), state); err != nil {
		l.t.Fatal(err)
	}
}

// TestNetnsIsolation runs three nodes as separate hosts (network
// namespaces joined by veth links to a bridge) and isolates one by taking
// its link down: the majority keeps accepting QUORUM writes, ALL writes
// fail, and once the link is back the isolated node reads the majority's
// writes at QUORUM.
func TestNetnsIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	lab := newNetLab(t, 3)
	bin := buildBinary(t)
	dir := t.TempDir()
	names := []string{"a-0", "b-0", "c-0"}
	var b strings.Builder
	b.WriteString("cluster:\n  name: netns\n  world: local3\n  nodes:\n")
	for i, n := range names {
		ip := lab.ip(i)
		fmt.Fprintf(&b, "    %s: {peer: %q, resp: %q, grpc: %q, http: %q}\n", n, ip+":7382", ip+":6379", ip+":7380", ip+":7381")
	}
	b.WriteString("write: QUORUM\nread: QUORUM\n")
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	clients := make([]*redis.Client, len(names))
	for i, n := range names {
		cmd := exec.Command("ip", "netns", "exec", lab.ns(i), bin, "server", "--config", cfgPath, "--node", n, "--data-dir", filepath.Join(dir, n))
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		deadline := time.Now().Add(20 * time.Second)
		for {
			res, err := http.Get("http://" + lab.ip(i) + ":7381/readyz")
			if err == nil {
				res.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not reachable in its namespace: %v\n%s", n, err, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		clients[i] = redis.NewClient(&redis.Options{Addr: lab.ip(i) + ":6379", Protocol: 2, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		defer clients[i].Close()
	}
	ctx := context.Background()
	set := func(i int, k, v, level string) error { return clients[i].Do(ctx, "LC.SET", k, v, "LEVEL", level).Err() }
	deadline := time.Now().Add(15 * time.Second)
	for set(0, "k", "before", "ALL") != nil {
		if time.Now().After(deadline) {
			t.Fatal("ALL write never succeeded across the namespaces")
		}
		time.Sleep(50 * time.Millisecond)
	}
	lab.cut(2, true)
	if err := set(0, "k", "during", "QUORUM"); err != nil {
		t.Fatalf("QUORUM write with c-0 cut off: %v", err)
	}
	if err := set(0, "k2", "x", "ALL"); err == nil || !strings.Contains(err.Error(), "TIMEOUT") {
		t.Fatalf("ALL write with c-0 cut off = %v; want TIMEOUT", err)
	}
	lab.cut(2, false)
	deadline = time.Now().Add(20 * time.Second)
	for {
		res, err := clients[2].Do(ctx, "LC.GET", "k", "LEVEL", "QUORUM").Slice()
		if err == nil && fmt.Sprint(res[0]) == "during" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("c-0 after reconnecting reads k at QUORUM = %v, %v; want during", res, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
