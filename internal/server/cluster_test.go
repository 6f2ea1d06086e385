package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/check"
)

// cluster starts one process per node of the local3 world (regions a, b, c;
// one node each) on loopback.
type cluster struct {
	t      *testing.T
	bin    string
	config string
	dir    string
	procs  map[string]*proc
	addrs  map[string][3]string // peer, resp, http
}

func newCluster(t *testing.T, wan bool, extraYAML ...string) *cluster {
	return newClusterIn(t, "local3", wan, extraYAML...)
}

// newClusterIn is newCluster in another world (a preset or a file) whose
// nodes are a-0, b-0 and c-0.
func newClusterIn(t *testing.T, world string, wan bool, extraYAML ...string) *cluster {
	return newClusterOf(t, world, []string{"a-0", "b-0", "c-0"}, wan, extraYAML...)
}

// newClusterOf is newClusterIn in a world whose nodes are nodes.
func newClusterOf(t *testing.T, world string, nodes []string, wan bool, extraYAML ...string) *cluster {
	c := &cluster{t: t, bin: buildBinary(t), dir: t.TempDir(), procs: map[string]*proc{}, addrs: map[string][3]string{}}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster:\n  name: test\n  world: %q\n  wan_emulation: %v\n  nodes:\n", world, wan)
	for _, n := range nodes {
		a := [3]string{freeAddr(t), freeAddr(t), freeAddr(t)}
		c.addrs[n] = a
		fmt.Fprintf(&b, "    %s: {peer: %q, resp: %q, http: %q}\n", n, a[0], a[1], a[2])
	}
	b.WriteString("keyspace:\n  protocol: quorum\n  replicas_per_region: 1\nfault_injection: true\n")
	for _, y := range extraYAML {
		b.WriteString(y)
	}
	c.config = filepath.Join(c.dir, "cluster.yaml")
	if err := os.WriteFile(c.config, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for n := range c.addrs {
		c.start(n)
	}
	return c
}

func (c *cluster) start(name string) {
	a := c.addrs[name]
	c.procs[name] = start(c.t, c.bin, filepath.Join(c.dir, name), a[1], a[2], "--config", c.config, "--node", name)
}

func (c *cluster) kill(name string) {
	p := c.procs[name]
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// keyspaceClients returns a client of each node with keyspace ks selected
// (LC.KEYSPACE), one connection each, once a first write of key = value
// through a-0 has succeeded (polled: the nodes may still be connecting to
// their peers).
func (c *cluster) keyspaceClients(ks, key, value string) map[string]*redis.Client {
	ctx := context.Background()
	clients := map[string]*redis.Client{}
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
		c.t.Cleanup(func() { cl.Close() })
		if err := cl.Do(ctx, "LC.KEYSPACE", ks).Err(); err != nil {
			c.t.Fatal(err)
		}
		clients[n] = cl
	}
	deadline := time.Now().Add(15 * time.Second)
	for clients["a-0"].Set(ctx, key, value, 0).Err() != nil {
		if time.Now().After(deadline) {
			c.t.Fatalf("the first write to keyspace %s never succeeded", ks)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return clients
}

func (c *cluster) client(name string) *redis.Client {
	cl := redis.NewClient(&redis.Options{Addr: c.addrs[name][1], Protocol: 2, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

func (c *cluster) fault(name, query string) {
	res, err := http.Post("http://"+c.addrs[name][2]+"/debug/transport?"+query, "", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.t.Fatalf("fault %s %s: %s", name, query, res.Status)
	}
}

// TestClusterQuorumSurvivesCrashAndIsolation runs three real processes:
// writes at ALL on one node are read at ONE on another; with one node
// killed (-9), QUORUM writes and reads still succeed and the restarted
// node serves what it had acknowledged; an isolated node (transport fault
// hooks) cannot complete QUORUM writes but the majority can.
func TestClusterQuorumSurvivesCrashAndIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, false)
	ctx := context.Background()
	a, b, cc := c.client("a-0"), c.client("b-0"), c.client("c-0")

	lcSet := func(cl *redis.Client, k, v, level string) error {
		return cl.Do(ctx, "LC.SET", k, v, "LEVEL", level).Err()
	}
	lcGet := func(cl *redis.Client, k, level string) (string, error) {
		res, err := cl.Do(ctx, "LC.GET", k, "LEVEL", level).Slice()
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res[0]), nil
	}
	// Poll: a node may still be connecting to its peers.
	deadline := time.Now().Add(15 * time.Second)
	for lcSet(a, "k1", "v1", "ALL") != nil {
		if time.Now().After(deadline) {
			t.Fatal("ALL write never succeeded: the cluster did not connect")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, err := lcGet(cc, "k1", "ONE"); err != nil || v != "v1" {
		t.Fatalf("LC.GET k1 ONE at c-0 = %q, %v; want v1 (written at ALL)", v, err)
	}

	c.kill("b-0")
	for i := 0; i < 20; i++ {
		if err := lcSet(a, fmt.Sprintf("q%d", i), "x", "QUORUM"); err != nil {
			t.Fatalf("QUORUM write with one node down: %v", err)
		}
	}
	if v, err := lcGet(cc, "q19", "QUORUM"); err != nil || v != "x" {
		t.Fatalf("QUORUM read with one node down = %q, %v; want x", v, err)
	}
	c.start("b-0")
	if v, err := lcGet(b, "k1", "ONE"); err != nil || v != "v1" {
		t.Fatalf("after kill -9 and restart, b-0 reads k1 = %q, %v; want v1 (it acknowledged the ALL write)", v, err)
	}

	// Isolate c-0 in both directions.
	c.fault("c-0", "block=a-0&block=b-0")
	c.fault("a-0", "block=c-0")
	c.fault("b-0", "block=c-0")
	err := lcSet(cc, "iso", "y", "QUORUM")
	if err == nil || !strings.Contains(err.Error(), "TIMEOUT") {
		t.Fatalf("QUORUM write on the isolated node = %v; want a TIMEOUT (outcome unknown) error", err)
	}
	if err := lcSet(a, "maj", "z", "QUORUM"); err != nil {
		t.Fatalf("QUORUM write on the majority side: %v", err)
	}
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		c.fault(n, "unblock=all")
	}
	deadline = time.Now().Add(15 * time.Second)
	for {
		v, err := lcGet(cc, "maj", "QUORUM")
		if err == nil && v == "z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after healing, c-0 reads maj = %q, %v; want z", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQuorumMeasuredCommitWaitOnRealServers: a quorum keyspace with
// commit_wait measured on three real processes. Its clock probes cross the
// real transport (every node counts probes received in /metrics; only this
// keyspace sends them), each node's commit wait falls under 2δ
// (lightcone_quorum_commit_wait_seconds), and a write at one node is read
// at QUORUM at the others.
func TestQuorumMeasuredCommitWaitOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, false, "keyspaces:\n  - {name: mq, protocol: quorum, replicas_per_region: 1, write_order: clock, commit_wait: measured, clock_probe_interval: 20ms}\n")
	ctx := context.Background()
	clients := c.keyspaceClients("mq", "m", "v1")
	for i, n := range []string{"b-0", "c-0", "a-0"} {
		want := fmt.Sprintf("v%d", i+2)
		if err := clients[n].Set(ctx, "m", want, 0).Err(); err != nil {
			t.Fatalf("SET m at %s: %v", n, err)
		}
		for _, r := range []string{"a-0", "b-0", "c-0"} {
			if v, err := clients[r].Get(ctx, "m").Result(); err != nil || v != want {
				t.Fatalf("GET m at %s after SET %s at %s = %q, %v; want %s", r, want, n, v, err, want)
			}
		}
	}
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		var got float64
		for _, line := range strings.Split(httpBody(t, "http://"+c.addrs[n][2]+"/metrics"), "\n") {
			if strings.HasPrefix(line, "lightcone_messages_received_total{") && strings.Contains(line, `kind="quorum.clock"`) {
				got, _ = strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			}
		}
		if got < 2 {
			t.Errorf("%s received %v clock probes; want at least one from each peer", n, got)
		}
		// The wait in use: under 2δ (4ms) once every peer is heard, on
		// loopback about one one-way delay; the default keyspace (bound)
		// stays at 2δ.
		pollUntil(t, n+": the mq keyspace's commit wait under 2δ", 10*time.Second, func() error {
			if cw := scrapeSeries(t, c.addrs[n][2], "lightcone_quorum_", "mq")["commit_wait_seconds"]; cw >= 0.004 {
				return fmt.Errorf("lightcone_quorum_commit_wait_seconds{keyspace=mq} = %v; want under 2δ (0.004)", cw)
			}
			return nil
		})
		if cw := scrapeSeries(t, c.addrs[n][2], "lightcone_quorum_", "default")["commit_wait_seconds"]; cw != 0.004 {
			t.Errorf("%s: the default keyspace's commit wait %v; want 2δ (0.004)", n, cw)
		}
	}
}

// TestLeaseKeyspaceOnRealServers: a GlobLease keyspace beside the quorum
// default one, on three real processes: a write at one node is read at the
// others (the first read renews a lease from the key's master); later
// reads under the lease skip the node's loop (published reads), and a
// write from another node still shows at once in them (its update
// withdraws the published reply).
func TestLeaseKeyspaceOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, false, "keyspaces:\n  - {name: glob, protocol: lease, lease_length: 10s}\n")
	ctx := context.Background()
	clients := c.keyspaceClients("glob", "g", "leased")
	for _, n := range []string{"b-0", "c-0", "a-0"} {
		if v, err := clients[n].Get(ctx, "g").Result(); err != nil || v != "leased" {
			t.Fatalf("GET g at %s = %q, %v; want leased", n, v, err)
		}
	}
	loop := func() float64 {
		return scrapeSeries(t, c.addrs["b-0"][2], "lightcone_loop_batch_events_", "default,glob")["sum"]
	}
	before := loop()
	const gets = 100
	for range gets {
		if v, err := clients["b-0"].Get(ctx, "g").Result(); err != nil || v != "leased" {
			t.Fatalf("GET g at b-0 = %q, %v; want leased", v, err)
		}
	}
	if through := loop() - before; through > gets/2 {
		t.Errorf("%.0f of %d GETs under b-0's lease went through its loop; want most answered from the published reply", through, gets)
	}
	if err := clients["c-0"].Set(ctx, "g", "again", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := clients["b-0"].Get(ctx, "g").Result(); err != nil || v != "again" {
		t.Fatalf("GET g at b-0 after a write from c-0 = %q, %v; want again (its lease must not hide the write)", v, err)
	}
}

// TestMeteorKeyspaceOnRealServers: a MeteorShower keyspace (M2) beside the
// quorum default one, on three real processes with WAN emulation: a client
// reads its own write at once (Lemma 1), and a client of another node sees
// it once the statuses carry it.
func TestMeteorKeyspaceOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := newCluster(t, true, "keyspaces:\n  - {name: ms, protocol: meteor, mode: M2, dispatch_interval: 5ms}\n")
	ctx := context.Background()
	clients := c.keyspaceClients("ms", "m", "one")
	if v, err := clients["a-0"].Get(ctx, "m").Result(); err != nil || v != "one" {
		t.Fatalf("GET m at a-0 after its own write = %q, %v; want one", v, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, n := range []string{"b-0", "c-0"} {
		for {
			v, err := clients[n].Get(ctx, "m").Result()
			if err == nil && v == "one" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET m at %s = %q, %v; never saw one", n, v, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := clients["c-0"].Set(ctx, "m", "two", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := clients["c-0"].Get(ctx, "m").Result(); err != nil || v != "two" {
		t.Fatalf("GET m at c-0 after its own write = %q, %v; want two", v, err)
	}
}

// pollUntil calls f until it returns nil, failing t if it still errs after
// limit.
func pollUntil(t *testing.T, what string, limit time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setRead fills op, a read, from a GET's result: absent, failed or a value.
func setRead(op *check.Op, v string, err error) {
	op.Kind = check.Read
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		op.Outcome = check.Failed
	default:
		op.Value, op.Found = v, true
	}
}

// setGetHistory runs each client for d, client i's seq-th operation on
// key(i, seq): a SET of a value of its own where write(i, seq), else a GET.
// It returns the history; a SET that fails may still take effect, so the
// client's later operations form a new session.
func setGetHistory(ctx context.Context, clients []*redis.Client, d time.Duration, key func(i, seq int) string, write func(i, seq int) bool) check.History {
	start := time.Now()
	var (
		mu   sync.Mutex
		hist check.History
		wg   sync.WaitGroup
	)
	for i, cl := range clients {
		wg.Go(func() {
			sess := int64(i)
			for seq := 0; time.Since(start) < d; seq++ {
				k := key(i, seq)
				op := check.Op{Client: sess, Key: k, Call: int64(time.Since(start)), Outcome: check.OK}
				if write(i, seq) {
					v := fmt.Sprintf("c%d-%d", i, seq)
					err := cl.Set(ctx, k, v, 0).Err()
					op.Kind, op.Value, op.Found, op.Return = check.Write, v, true, int64(time.Since(start))
					if err != nil {
						op.Outcome, op.Return = check.Unknown, check.Never
						sess += 100
					}
				} else {
					v, err := cl.Get(ctx, k).Result()
					op.Return = int64(time.Since(start))
					setRead(&op, v, err)
				}
				mu.Lock()
				hist.Ops = append(hist.Ops, op)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return hist
}

// completed counts h's reads and writes that completed OK.
func completed(h check.History) (reads, writes int) {
	for _, o := range h.Ops {
		switch {
		case o.Outcome != check.OK:
		case o.Kind == check.Read:
			reads++
		case o.Kind == check.Write:
			writes++
		}
	}
	return reads, writes
}
