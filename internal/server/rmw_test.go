package server_test

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// cliLast runs redis-cli against resp with script on its stdin and
// returns the last line it printed (the last command's reply).
func cliLast(cli, resp, script string) (string, error) {
	host, port, _ := net.SplitHostPort(resp)
	cmd := exec.Command(cli, "-h", host, "-p", port)
	cmd.Stdin = strings.NewReader(script)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("redis-cli: %v: %s", err, b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1], nil
}

// inKeyspace is script run in keyspace ks ("": the connection's default).
func inKeyspace(ks, script string) string {
	if ks == "" {
		return script
	}
	return "LC.KEYSPACE " + ks + "\n" + script
}

// incrs runs n redis-cli processes at once, each sending INCR key in
// keyspace ks to the RESP address resps[i%len(resps)], and returns each
// one's reply: the count it saw, or its error.
func incrs(t *testing.T, cli string, resps []string, ks, key string, n int) []string {
	t.Helper()
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cliLast(cli, resps[i%len(resps)], inKeyspace(ks, "INCR "+key+"\n"))
			if err != nil {
				r = err.Error()
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// get reads key in keyspace ks with redis-cli.
func get(t *testing.T, cli, resp, ks, key string) string {
	t.Helper()
	r, err := cliLast(cli, resp, inKeyspace(ks, "GET "+key+"\n"))
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return r
}

// wantCounts checks that the INCRs' replies are exactly 1..n, each once:
// every INCR counted, none lost to another.
func wantCounts(t *testing.T, what string, replies []string) {
	t.Helper()
	seen := make([]bool, len(replies)+1)
	for _, r := range replies {
		v, err := strconv.Atoi(r)
		if err != nil || v < 1 || v > len(replies) || seen[v] {
			t.Errorf("%s: an INCR replied %q; want each of 1..%d exactly once (all replies: %q)", what, r, len(replies), replies)
			return
		}
		seen[v] = true
	}
}

// TestConcurrentIncrWithRedisCLI is issue 15's must-show: 100 concurrent
// redis-cli INCRs of one key, against real servers. In a lease keyspace
// (clients at all three nodes) and in a single-node server's default
// keyspace, every INCR counts: the replies are 1..100 and the key holds
// 100. In a quorum ONE/ONE keyspace of three nodes, which cannot order a
// key's writes, every INCR is refused with the keyspaces that can — unless
// the keyspace opted in to last-writer-wins read-modify-write. (The same
// lease keyspace with rmw: last_writer_wins ended at 12, its INCRs
// replying 1, 2, 2, 2, ...: get-then-put loses most of them.)
func TestConcurrentIncrWithRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed (install redis-tools to run this test; .ci/run does)")
	}
	const n = 100
	c := newCluster(t, false, "keyspaces:\n"+
		"  - {name: glob, protocol: lease, lease_length: 2s}\n"+
		"  - {name: one, protocol: quorum, read: ONE, write: ONE}\n"+
		"  - {name: lww, protocol: quorum, read: ONE, write: ONE, rmw: last_writer_wins}\n")
	var resps []string
	for _, node := range []string{"a-0", "b-0", "c-0"} {
		resps = append(resps, c.addrs[node][1])
	}

	wantCounts(t, "lease keyspace", incrs(t, cli, resps, "glob", "n", n))
	if got := get(t, cli, resps[0], "glob", "n"); got != strconv.Itoa(n) {
		t.Errorf("lease keyspace: after %d concurrent INCRs the key holds %q; want %d", n, got, n)
	}

	for _, r := range incrs(t, cli, resps, "one", "n", n) {
		if !strings.Contains(r, "ERR quorum: this keyspace cannot apply conditional writes") ||
			!strings.Contains(r, "lease (every setting") || !strings.Contains(r, "quorum on a single-node cluster") {
			t.Fatalf("quorum ONE/ONE keyspace of three replicas: INCR replied %q; want a refusal naming lease and quorum on a single-node cluster", r)
		}
	}

	for _, r := range incrs(t, cli, resps, "lww", "n", 10) {
		if _, err := strconv.Atoi(r); err != nil {
			t.Fatalf("quorum ONE/ONE keyspace with rmw: last_writer_wins: INCR replied %q; want a count", r)
		}
	}

	// A single-node server with no configuration at all: its default
	// keyspace is quorum with one replica.
	one := start(t, c.bin, filepath.Join(t.TempDir(), "single"), freeAddr(t), freeAddr(t))
	wantCounts(t, "single-node server", incrs(t, cli, []string{one.resp}, "", "n", n))
	if got := get(t, cli, one.resp, "default", "n"); got != strconv.Itoa(n) {
		t.Errorf("single-node server: after %d concurrent INCRs the key holds %q; want %d", n, got, n)
	}
}

// TestRMWSetting: a keyspace's rmw is atomic or last_writer_wins; anything
// else is refused at start, naming the valid values.
func TestRMWSetting(t *testing.T) {
	if _, err := startFromYAML(t, "keyspace: {protocol: quorum, rmw: last_writer_wins}\nkeyspaces:\n  - {name: g, protocol: lease, rmw: atomic}\n"); err != nil {
		t.Fatalf("rmw: last_writer_wins and atomic: %v", err)
	}
	_, err := startFromYAML(t, "keyspaces:\n  - {name: g, protocol: lease, rmw: sometimes}\n")
	if err == nil || !strings.Contains(err.Error(), `keyspaces[0].rmw: "sometimes"; valid: atomic (default), last_writer_wins`) {
		t.Fatalf("rmw: sometimes: error %v; want one naming the valid values", err)
	}
}
