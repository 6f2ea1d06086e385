package server_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRedisBenchmarkDefaults runs redis-benchmark's default test list (every
// command it benchmarks when given none: PING, SET, GET, INCR, LPUSH, RPUSH,
// LPOP, RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN, LRANGE_100..600, MSET) against
// a real `lightcone server` started with no configuration (only free ports
// and a temporary data directory), and checks that it runs to completion:
// redis-benchmark 7 stops at the first error reply ("Error from server").
func TestRedisBenchmarkDefaults(t *testing.T) {
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not installed (install redis-tools to run this test)")
	}
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := start(t, buildBinary(t), t.TempDir(), freeAddr(t), freeAddr(t))
	host, port, _ := strings.Cut(p.resp, ":")
	out, err := exec.Command(bench, "-h", host, "-p", port, "-q", "-n", "2000").CombinedOutput()
	// -q rewrites a progress line in place with \r; keep the final lines.
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(out), "\r", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "rps=") {
			lines = append(lines, l)
		}
	}
	text := strings.Join(lines, "\n")
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s\nserver log:\n%s", err, text, p.log)
	}
	for _, want := range []string{"PING_INLINE:", "PING_MBULK:", "SET:", "GET:", "INCR:", "LPUSH:", "RPUSH:",
		"LPOP:", "RPOP:", "SADD:", "HSET:", "SPOP:", "ZADD:", "ZPOPMIN:", "LRANGE_100", "LRANGE_300",
		"LRANGE_500", "LRANGE_600", "MSET (10 keys):"} {
		if !strings.Contains(text, want) {
			t.Errorf("redis-benchmark output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "rror") || strings.Contains(text, "WRONGTYPE") {
		t.Errorf("redis-benchmark saw error replies:\n%s", text)
	}
	t.Logf("redis-benchmark -q -n 2000:\n%s", text)
}
