package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/check"
)

// The settings of TestDirectoryFailoverOnRealServers, from which its
// resume bound is derived.
const (
	foOneWay        = 30 * time.Millisecond // between regions
	foTick          = 20 * time.Millisecond // directory_tick
	foElectionTicks = 10                    // directory_election_ticks (E)
	foResend        = 200 * time.Millisecond
	foShareLease    = time.Second
	foDriftPPM      = 100
	// foSlack covers what the settings do not: process scheduling and
	// fsyncs of nine processes on a shared CI machine, and a second split
	// vote (2.2 and 2.53 s in 8 runs before rsm stopped resetting election
	// timers on a lost election; the simulator's TestFailover had a like
	// tail, rsm doc.go "Determinism"): 1.5 s keeps CI from flaking while
	// still bounding the outage.
	foSlack = 1500 * time.Millisecond
)

// foResumeBound is how long after the directory leader's death a write
// miss must succeed again: a follower campaigns within 2·E·tick (the
// longest election timeout, counted from the last heartbeat, at most a
// tick before the crash), and again within another 2·E·tick if the two
// survivors split their votes; a frontend's request reaches a live replica
// within 2·resend_interval (it first retries the dead leader's address),
// the new leader may wait out a sharer's stretched lease
// L·(1+ρ)/(1−ρ) (rule D4), and the election, forwarding, invalidation and
// grant take at most 4 WAN round trips; plus foSlack. It is the
// simulator's TestFailover bound (dirsc doc.go) plus one split vote and
// the slack: 3.94s with these settings.
func foResumeBound() time.Duration {
	rho := float64(foDriftPPM) / 1e6
	stretched := time.Duration(float64(foShareLease) * (1 + rho) / (1 - rho))
	return 4*foElectionTicks*foTick + 2*foResend + stretched + 4*2*foOneWay + foSlack
}

// foWorld is three regions of n nodes each, foOneWay apart. sc runs three:
// each region's frontend is a group of its three nodes; the directory's
// three replicas go on the second nodes (a-1, b-1, c-1), so killing the
// directory leader takes one member from one region's frontend group,
// which keeps its majority. rc runs three too, for the same reason.
func foWorld(n int) string {
	return fmt.Sprintf(`name: wan3x%[2]d
description: three regions of %[2]d nodes, %[1]d ms apart one way (tests)
nodes_per_region: %[2]d
regions:
  - {name: a, provider: local, lat: 0, long: 0}
  - {name: b, provider: local, lat: 0, long: 0}
  - {name: c, provider: local, lat: 0, long: 0}
intra:
  one_way_ms: 0.05
  jitter: {dist: none}
links:
  - {from: a, to: b, one_way_ms: %[1]d, jitter: {dist: none}}
  - {from: a, to: c, one_way_ms: %[1]d, jitter: {dist: none}}
  - {from: b, to: c, one_way_ms: %[1]d, jitter: {dist: none}}
`, foOneWay.Milliseconds(), n)
}

// TestDirectoryFailoverOnRealServers (issue 13): nine real processes with
// WAN emulation and an sc keyspace whose directory has three replicas in
// three regions. Clients in regions a and b read and write while the
// directory's leader (found by its directory_leader gauge on /status) is
// killed with -9. A write miss from region a (a row region b holds
// Modified, which needs the directory) must succeed within foResumeBound
// of the kill, another replica must lead, and the whole history must be
// linearizable.
func TestDirectoryFailoverOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := foCluster(t, fmt.Sprintf("{name: sc, protocol: sc, directory_regions: [a, b, c], directory_replicas: 3, "+
		"directory_tick: %v, directory_election_ticks: %d, resend_interval: %v, share_lease: %v, max_drift_ppm: %d}",
		foTick, foElectionTicks, foResend, foShareLease, foDriftPPM))
	dirNodes := foDirNodes
	ctx := context.Background()
	conn := func(n string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { cl.Close() })
		if err := cl.Do(ctx, "LC.KEYSPACE", "sc").Err(); err != nil {
			t.Fatalf("%s: LC.KEYSPACE sc: %v", n, err)
		}
		return cl
	}
	pa, pb := conn("a-0"), conn("b-0")
	for n, cl := range map[string]*redis.Client{"a-0": pa, "b-0": pb} {
		pollUntil(t, n+" serves sc", 20*time.Second, func() error {
			if err := cl.Get(ctx, "warm").Err(); err != redis.Nil {
				return fmt.Errorf("GET warm = %v; want nil", err)
			}
			return nil
		})
	}
	leader := oneDirLeader(t, c, "sc", dirNodes)
	if fe := dirLeaders(t, c, "sc", []string{"a-0", "b-0", "c-0"}); len(fe) != 0 {
		t.Fatalf("frontends %v report leading the directory; want its replicas on a-1, b-1, c-1", fe)
	}

	start := time.Now()
	var (
		mu   sync.Mutex
		hist check.History
		wg   sync.WaitGroup
		stop atomic.Bool
	)
	record := func(op check.Op) {
		mu.Lock()
		hist.Ops = append(hist.Ops, op)
		mu.Unlock()
	}
	// write records a SET of key to v by session *sess and reports whether
	// it was acknowledged; a write that errs may still take effect, so the
	// client's later operations form a new session.
	write := func(cl *redis.Client, sess *int64, key, v string) bool {
		op := check.Op{Client: *sess, Key: key, Kind: check.Write, Value: v, Found: true, Call: int64(time.Since(start)), Outcome: check.OK}
		err := cl.Set(ctx, key, v, 0).Err()
		op.Return = int64(time.Since(start))
		if err != nil {
			op.Outcome, op.Return = check.Unknown, check.Never
			*sess += 1000
		}
		record(op)
		return err == nil
	}
	keys := []string{"x", "y"}
	for i, n := range []string{"a-0", "b-0", "a-0", "b-0"} {
		cl := conn(n)
		wg.Go(func() {
			sess := int64(i)
			for seq := 0; !stop.Load(); seq++ {
				key := keys[seq%len(keys)]
				if (seq+i)%3 == 0 {
					write(cl, &sess, key, fmt.Sprintf("c%d-%d", i, seq))
					continue
				}
				record(readOp(cl, start, sess, key))
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()

	// The probe row p is Modified at b's frontend before the kill, so a
	// write from a needs a grant from the directory; a has not asked for p
	// before the kill, so an acknowledged write from a proves a grant by
	// a leader elected after it.
	sessA, sessB := int64(100), int64(101)
	pollUntil(t, "b writes p", 10*time.Second, func() error {
		if !write(pb, &sessB, "p", "b") {
			return fmt.Errorf("SET p from b failed")
		}
		return nil
	})
	// Kill mid-run: once the workload has completed some writes.
	pollUntil(t, "the workload writes", 20*time.Second, func() error {
		mu.Lock()
		_, w := completed(hist)
		mu.Unlock()
		if w < 20 {
			return fmt.Errorf("%d writes completed; want 20 before the kill", w)
		}
		return nil
	})
	c.kill(leader)
	killed := time.Now()
	bound := foResumeBound()
	var resumed time.Duration
	for i := 0; ; i++ {
		if write(pa, &sessA, "p", fmt.Sprintf("a%d", i)) {
			resumed = time.Since(killed)
			break
		}
		if time.Since(killed) > bound+5*time.Second {
			t.Fatalf("no write miss succeeded within %v of killing the directory leader %s", time.Since(killed), leader)
		}
	}
	others := slices.DeleteFunc(slices.Clone(dirNodes), func(n string) bool { return n == leader })
	newLeader := dirLeaders(t, c, "sc", others)
	t.Logf("killed directory leader %s; a write miss from a succeeded %v later (bound %v); new leader %v",
		leader, resumed.Round(time.Millisecond), bound, newLeader)
	if resumed > bound {
		t.Errorf("a write miss succeeded %v after the directory leader's kill; want within %v "+
			"(2·2·E·tick + 2·resend_interval + stretched lease + 4 RTT + %v slack)", resumed, bound, foSlack)
	}
	if len(newLeader) != 1 {
		t.Errorf("after the failover directory_leader is 1 on %v; want one of %v", newLeader, others)
	}
	// And back: b's write miss, then a few more seconds of the workload.
	if !write(pb, &sessB, "p", "b-after") {
		t.Errorf("SET p from b after the failover failed")
	}
	resume := time.Now()
	for time.Since(resume) < time.Second {
		record(readOp(pa, start, sessA, "p"))
	}
	stop.Store(true)
	wg.Wait()

	reads, writes := completed(hist)
	if reads < 20 || writes < 10 {
		t.Fatalf("only %d reads and %d writes completed: too little to check", reads, writes)
	}
	res := check.Linearizable(hist, 30*time.Second)
	t.Logf("%d operations (%d reads, %d writes completed): %s %s", len(hist.Ops), reads, writes, res.Model, res.Verdict)
	if res.Verdict != check.Pass {
		t.Fatalf("linearizability: %s: %s", res.Verdict, res.Detail)
	}
}

// readOp performs and returns a GET of key by session sess.
func readOp(cl *redis.Client, start time.Time, sess int64, key string) check.Op {
	op := check.Op{Client: sess, Key: key, Call: int64(time.Since(start)), Outcome: check.OK}
	v, err := cl.Get(context.Background(), key).Result()
	op.Return = int64(time.Since(start))
	setRead(&op, v, err)
	return op
}

// dirLeaders returns the nodes among ns whose directory_leader gauge for
// keyspace ks is 1 on /status.
func dirLeaders(t *testing.T, c *cluster, ks string, ns []string) []string {
	t.Helper()
	var out []string
	for _, n := range ns {
		if keyspaceCountersAt(t, c, n, ks)["directory_leader"] == 1 {
			out = append(out, n)
		}
	}
	return out
}

// The rc settings of TestRCDirectoryFailoverOnRealServers.
const (
	rcHoldLease = 500 * time.Millisecond
	rcHeartbeat = 50 * time.Millisecond
	rcResend    = 100 * time.Millisecond
)

// rcResumeBound is how long after the directory leader's death an acquire
// of a free row from another region must succeed: the simulator's
// TestFailover bound for rc (dirrc doc.go: the longest election timeout,
// twice a frontend's move to the next replica after resend_interval +
// heartbeat_interval of silence, hold_lease plus the new leader's grace
// of (2E+1) ticks, 4 round trips), plus one split vote (2·E·tick), the
// election of region a's frontend group should the killed node have led it
// (2·2·E·tick of the default frontend_tick and frontend_election_ticks,
// one split vote) and foSlack for scheduling nine processes on a shared
// machine.
func rcResumeBound() time.Duration {
	const feElection = 2 * 2 * 10 * 20 * time.Millisecond
	return 4*foElectionTicks*foTick + 2*(rcResend+rcHeartbeat) + rcHoldLease + (2*foElectionTicks+1)*foTick + 4*2*foOneWay + feElection + foSlack
}

// TestRCDirectoryFailoverOnRealServers (issue 13): the rc twin of
// TestDirectoryFailoverOnRealServers. Clients in regions a and b run
// acquire, read, write, release cycles on two rows while the directory's
// leader is killed with -9; an acquire from a of a row b last released
// must succeed within rcResumeBound of the kill, another replica must
// lead, and the history must be release consistent (check.ReleaseConsistent:
// every read inside a hold sees every write released before it).
func TestRCDirectoryFailoverOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	c := foCluster(t, fmt.Sprintf("{name: rc, protocol: rc, directory_regions: [a, b, c], directory_replicas: 3, "+
		"directory_tick: %v, directory_election_ticks: %d, resend_interval: %v, hold_lease: %v, heartbeat_interval: %v, "+
		"hold_timeout: 2s, acquire_timeout: 5s}",
		foTick, foElectionTicks, rcResend, rcHoldLease, rcHeartbeat))
	dirNodes := foDirNodes
	ctx := context.Background()
	// conn opens a one-connection client: a hold belongs to the connection
	// that took it, and closing it releases its holds.
	conn := func(n string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: c.addrs[n][1], Protocol: 2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
		if err := cl.Do(ctx, "LC.KEYSPACE", "rc").Err(); err != nil {
			t.Fatalf("%s: LC.KEYSPACE rc: %v", n, err)
		}
		return cl
	}
	for _, n := range []string{"a-0", "b-0"} {
		cl := conn(n)
		pollUntil(t, n+" serves rc", 20*time.Second, func() error {
			if err := cl.Do(ctx, "LC.ACQUIRE", "warm-"+n).Err(); err != nil {
				return err
			}
			return cl.Do(ctx, "LC.RELEASE", "warm-"+n).Err()
		})
		cl.Close()
	}
	leader := oneDirLeader(t, c, "rc", dirNodes)

	start := time.Now()
	var (
		mu   sync.Mutex
		hist check.History
		wg   sync.WaitGroup
		stop atomic.Bool
	)
	record := func(op check.Op) {
		mu.Lock()
		hist.Ops = append(hist.Ops, op)
		mu.Unlock()
	}
	// do runs one command of session sess and records it as kind; an
	// error leaves its outcome unknown.
	do := func(cl *redis.Client, sess int64, kind check.Kind, key string, args ...any) error {
		op := check.Op{Client: sess, Key: key, Kind: kind, Call: int64(time.Since(start)), Outcome: check.OK}
		err := cl.Do(ctx, args...).Err()
		op.Return = int64(time.Since(start))
		if err != nil {
			op.Outcome, op.Return = check.Unknown, check.Never
		}
		record(op)
		return err
	}
	// cycle acquires key, reads it, writes v and releases it. After an
	// error the connection is closed (which releases any hold it took)
	// and the caller starts a new session on a new connection.
	cycle := func(cl *redis.Client, sess int64, key, v string) error {
		if err := do(cl, sess, check.Acquire, key, "LC.ACQUIRE", key); err != nil {
			return err
		}
		record(readOp(cl, start, sess, key))
		op := check.Op{Client: sess, Key: key, Kind: check.Write, Value: v, Found: true, Call: int64(time.Since(start)), Outcome: check.OK}
		err := cl.Set(ctx, key, v, 0).Err()
		op.Return = int64(time.Since(start))
		if err != nil {
			op.Outcome, op.Return = check.Unknown, check.Never
		}
		record(op)
		if err != nil {
			return err
		}
		return do(cl, sess, check.Release, key, "LC.RELEASE", key)
	}
	keys := []string{"x", "y"}
	for i, n := range []string{"a-0", "b-0", "a-0", "b-0"} {
		wg.Go(func() {
			cl, sess := conn(n), int64(i)
			defer func() { cl.Close() }()
			for seq := 0; !stop.Load(); seq++ {
				if cycle(cl, sess, keys[seq%len(keys)], fmt.Sprintf("c%d-%d", i, seq)) != nil {
					cl.Close()
					cl, sess = conn(n), sess+1000
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()

	pa, pb := conn("a-0"), conn("b-0")
	defer pa.Close()
	defer pb.Close()
	sessA, sessB := int64(100), int64(101)
	pollUntil(t, "b writes and releases p", 10*time.Second, func() error {
		return cycle(pb, sessB, "p", "b")
	})
	pollUntil(t, "the workload writes", 20*time.Second, func() error {
		mu.Lock()
		_, w := completed(hist)
		mu.Unlock()
		if w < 20 {
			return fmt.Errorf("%d writes completed; want 20 before the kill", w)
		}
		return nil
	})
	c.kill(leader)
	killed := time.Now()
	bound := rcResumeBound()
	var resumed time.Duration
	for i := 0; ; i++ {
		if cycle(pa, sessA, "p", fmt.Sprintf("a%d", i)) == nil {
			resumed = time.Since(killed)
			break
		}
		pa.Close()
		pa, sessA = conn("a-0"), sessA+1000
		if time.Since(killed) > bound+5*time.Second {
			t.Fatalf("no acquire succeeded within %v of killing the directory leader %s", time.Since(killed), leader)
		}
	}
	others := slices.DeleteFunc(slices.Clone(dirNodes), func(n string) bool { return n == leader })
	newLeader := dirLeaders(t, c, "rc", others)
	t.Logf("killed directory leader %s; an acquire, write and release from a succeeded %v later (bound %v); new leader %v",
		leader, resumed.Round(time.Millisecond), bound, newLeader)
	if resumed > bound {
		t.Errorf("an acquire succeeded %v after the directory leader's kill; want within %v", resumed, bound)
	}
	if len(newLeader) != 1 {
		t.Errorf("after the failover directory_leader is 1 on %v; want one of %v", newLeader, others)
	}
	// And back to b, which must see a's released write.
	if err := cycle(pb, sessB, "p", "b-after"); err != nil {
		t.Errorf("a cycle on p from b after the failover: %v", err)
	}
	resume := time.Now()
	for time.Since(resume) < time.Second {
		if cycle(pa, sessA, "p", "a-after") != nil {
			break
		}
	}
	stop.Store(true)
	wg.Wait()

	reads, writes := completed(hist)
	if reads < 20 || writes < 10 {
		t.Fatalf("only %d reads and %d writes completed: too little to check", reads, writes)
	}
	res := check.ReleaseConsistent(hist)
	t.Logf("%d operations (%d reads, %d writes completed): %s %s", len(hist.Ops), reads, writes, res.Model, res.Verdict)
	if res.Verdict != check.Pass {
		t.Fatalf("release consistency: %s: %s", res.Verdict, res.Detail)
	}
}

// foDirNodes are the failover tests' directory replicas: each region's
// second node, so killing one leaves its region's frontend group (three
// nodes) a majority.
var foDirNodes = []string{"a-1", "b-1", "c-1"}

// foCluster starts the failover tests' nine processes (foWorld(3): regions
// a, b, c of three nodes, WAN emulation on) serving one keyspace, given as
// its YAML flow mapping.
func foCluster(t *testing.T, keyspace string) *cluster {
	worldFile := filepath.Join(t.TempDir(), "wan3x3.yaml")
	if err := os.WriteFile(worldFile, []byte(foWorld(3)), 0o644); err != nil {
		t.Fatal(err)
	}
	return newClusterOf(t, worldFile, []string{"a-0", "a-1", "a-2", "b-0", "b-1", "b-2", "c-0", "c-1", "c-2"}, true,
		"keyspaces:\n  - "+keyspace+"\n")
}

// oneDirLeader waits until exactly one of ns leads keyspace ks's
// directory and returns it.
func oneDirLeader(t *testing.T, c *cluster, ks string, ns []string) string {
	t.Helper()
	var leader string
	pollUntil(t, "one directory leader", 10*time.Second, func() error {
		ls := dirLeaders(t, c, ks, ns)
		if len(ls) != 1 {
			return fmt.Errorf("directory_leader is 1 on %v; want one of %v", ls, ns)
		}
		leader = ls[0]
		return nil
	})
	return leader
}
