package quorum_test

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// measured is swarmConfig with commit_wait measured on a world whose
// links (0.5 to 1.5ms one way, exponential jitter of mean 0.3ms) are well
// under 2δ (δ = 10ms here), so the measured bound, not 2δ, decides the
// wait. Clocks are up to 5ms off with up to 100ppm drift, within both the
// δ bound and the rate bound the setting assumes, so the bound is mostly
// the clocks' actual offsets; shave makes the wait that much shorter than
// the measured bound (UnsafeShaveWait).
func measured(tb testing.TB, seed uint64, read, write wire.Level, shave time.Duration) scenario.Config {
	c := swarmConfig(tb, seed, read, write)
	c.WorldDef = simtest.World3(tb, 0.5, 1, 1.5, 0.3)
	qc := c.Settings.(*quorum.Config)
	qc.CommitWait = quorum.CommitWaitMeasured
	qc.MaxClockOffset = 10 * time.Millisecond
	qc.MaxDriftPPM = 100
	qc.ClockProbeInterval = time.Duration(20+seed%80) * time.Millisecond
	if shave > 0 {
		quorum.UnsafeShaveWait(qc, shave)
	}
	c.Clock = scenario.Clock{MaxOffset: 5 * time.Millisecond, MaxDriftPPM: 100}
	return c
}

// TestSwarmMeasuredCommitWait runs TestSwarm's seeded fault runs with the
// measured commit wait, for every read/write level combination, each
// history checked against the claimed guarantee: probes lost, duplicated
// or reordered, and replicas restarted with no probes yet, keep it.
func TestSwarmMeasuredCommitWait(t *testing.T) {
	swarmEveryLevel(t, 2, func(tb testing.TB, seed uint64, r, w wire.Level) scenario.Config {
		return measured(tb, seed, r, w, 0)
	}, nil)
}

// TestSwarmMeasuredCommitWaitQuorum is the QUORUM/QUORUM runs, more of
// them: the combination whose writes the setting brings to their floor.
func TestSwarmMeasuredCommitWaitQuorum(t *testing.T) {
	simtest.Swarm{Seeds: 64, Short: 8, Config: func(tb testing.TB, seed uint64) scenario.Config {
		return measured(tb, seed, wire.Quorum, wire.Quorum, 0)
	}}.Run(t)
}

// TestTeethMeasuredCommitWait: the measured bound is what orders writes.
// Waiting 2ms less than it (still far from no wait at all), the
// checker must find a write stamped below one that completed before it
// began; the same runs with the full bound pass.
func TestTeethMeasuredCommitWait(t *testing.T) {
	gen := func(shave time.Duration) simtest.Generator {
		return func(tb testing.TB, seed uint64) scenario.Config {
			c := measured(tb, seed, wire.Quorum, wire.Quorum, shave)
			c.RandomFaults, c.Net = false, scenario.Net{}
			c.Check = "linearizable"
			return c
		}
	}
	simtest.Teeth{Seeds: 200, Unsafe: gen(2 * time.Millisecond), Safe: gen(0)}.Run(t)
}

// TestMeasuredWriteAtFloor: on local3 (1ms one way between regions),
// QUORUM writes with the measured commit wait finish at their one-round-
// trip floor, where the 2δ wait (δ = 2ms) holds them to 4ms; reads are at
// their floor either way.
func TestMeasuredWriteAtFloor(t *testing.T) {
	run := func(commitWait string) (write, read scenario.Row) {
		res := runWorkloadA(t, "local3", commitWait, 30, 600, 6*time.Second, "TestMeasuredWriteAtFloor")
		for _, row := range res.Rows {
			if row.Region == "a" && row.Op == "update" {
				write = row
			}
			if row.Region == "a" && row.Op == "read" {
				read = row
			}
		}
		return write, read
	}
	mw, mr := run(quorum.CommitWaitMeasured)
	bw, _ := run(quorum.CommitWaitBound)
	t.Logf("QUORUM write p50/p99, floor %.1fms: measured %.1f/%.1f, bound %.1f/%.1f; read p50/p99 %.1f/%.1f", mw.Floor, mw.P50, mw.P99, bw.P50, bw.P99, mr.P50, mr.P99)
	if mw.Count == 0 || mw.P50 > mw.Floor+1 || mw.P99 > mw.Floor+1 {
		t.Errorf("measured: write p50 %.1fms, p99 %.1fms over %d writes; want within floor %.1fms + 1ms", mw.P50, mw.P99, mw.Count, mw.Floor)
	}
	if bw.P50 < 2*float64(quorum.DefaultMaxClockOffset)/float64(time.Millisecond) {
		t.Errorf("bound: write p50 %.1fms; want at least 2δ (the run does not exercise the wait)", bw.P50)
	}
	if mr.P50 > mr.Floor+1 {
		t.Errorf("measured: read p50 %.1fms; want within floor %.1fms + 1ms", mr.P50, mr.Floor)
	}
}

// bootStep is a reboot that steps a clock: node a-0's clock runs 9ms
// ahead, it crashes at 1s, its clock is set 9ms behind while it is down
// (both within δ = 10ms), and it restarts at 1.3s; every other clock
// keeps true time. keepStale keeps the bounds its peers had of its
// earlier incarnation (UnsafeKeepStale).
func bootStep(keepStale bool) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		var wl yaml.Node
		if err := wl.Encode(map[string]any{
			"preset": "a", "record_count": 1, "operation_count": 4000,
			"read_proportion": 0.2, "update_proportion": 0.8, "request_distribution": "uniform",
		}); err != nil {
			tb.Fatal(err)
		}
		qc := &quorum.Config{
			ReplicasPerRegion: []int{1}, Read: wire.Quorum, Write: wire.Quorum,
			MaxClockOffset: 10 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
			WriteOrder: quorum.WriteOrderClock, CommitWait: quorum.CommitWaitMeasured, MaxDriftPPM: 100,
		}
		if keepStale {
			quorum.UnsafeKeepStale(qc)
		}
		return scenario.Config{
			Seed: seed, WorldDef: simtest.World3(tb, 0.5, 1, 1.5, 0.3), Protocol: "quorum", Settings: qc,
			Workload: wl, Clients: 3, ClosedLoop: true, Duration: 4 * time.Second, ClientTimeout: 100 * time.Millisecond,
			Faults: []scenario.Fault{
				{Skew: &scenario.Skew{Node: "a-0", Offset: 9 * time.Millisecond}},
				{At: time.Second, For: 300 * time.Millisecond, Crash: "a-0"},
				{At: 1100 * time.Millisecond, Skew: &scenario.Skew{Node: "a-0", Offset: -9 * time.Millisecond}},
			},
			Check: "linearizable",
		}
	}
}

// TestTeethMeasuredCommitWaitBootStep: a peer's bounds are dropped when
// it restarts (its probes' incarnation) or goes silent, so a clock stepped
// during a reboot leaves no stale bound behind. Kept instead, they let
// the other nodes answer up to the step early, and a write the rebooted
// node stamps is lost below one that completed before it began.
func TestTeethMeasuredCommitWaitBootStep(t *testing.T) {
	simtest.Teeth{Seeds: 50, Unsafe: bootStep(true), Safe: bootStep(false)}.Run(t)
}

// TestMeasuredProbesOnlyNearLinks: only a node whose every peer is nearer
// than 3δ probes, since only then can probes bring a wait under 2δ:
// local3's nodes (1ms one way, δ 2ms) do, meteor3's (WAN links) none.
func TestMeasuredProbesOnlyNearLinks(t *testing.T) {
	for _, w := range []struct {
		world  string
		probes bool
	}{{"local3", true}, {"meteor3", false}} {
		res := runWorkloadA(t, w.world, quorum.CommitWaitMeasured, 6, 60, 3*time.Second, "TestMeasuredProbesOnlyNearLinks")
		probes := 0
		for _, m := range res.Messages {
			if m.Kind == "quorum.clock" {
				probes = m.Count
			}
		}
		t.Logf("%s: %d probes", w.world, probes)
		if (probes > 0) != w.probes {
			t.Errorf("%s: %d probes; want some: %v", w.world, probes, w.probes)
		}
	}
}

// runWorkloadA runs YCSB workload a on world, seed 1, QUORUM reads and
// writes under commitWait, and fails test (named for its replay command)
// unless the history is linearizable.
func runWorkloadA(t *testing.T, world, commitWait string, clients int, rate float64, d time.Duration, test string) *scenario.Result {
	t.Helper()
	c := scenario.Config{
		Seed: 1, World: world, Protocol: "quorum",
		Settings: &quorum.Config{Read: wire.Quorum, Write: wire.Quorum, CommitWait: commitWait},
		Clients:  clients,
		Rate:     rate,
		Duration: d,
		Warmup:   time.Second,
		Check:    "linearizable",
	}
	c.Workload = presetA(t)
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check.Verdict != "pass" {
		t.Fatalf("%s, commit_wait %s: %s: %s\nreplay: go test ./internal/protocol/quorum -run %s -v", world, commitWait, res.Check.Verdict, res.Check.Detail, test)
	}
	return res
}

// TestMeasuredClaimNeedsSteadyClocks: the simulator claims linearizability
// for commit_wait measured only while no fault steps a running node's clock
// and clocks drift within max_drift_ppm; a skew fault within δ, or a faster
// drift, leaves only valid reads claimed. The 2δ wait keeps its claim under
// the same skew.
func TestMeasuredClaimNeedsSteadyClocks(t *testing.T) {
	for _, tc := range []struct {
		name, commitWait string
		skew             bool
		driftPPM         float64
		want             string
	}{
		{"measured, steady", quorum.CommitWaitMeasured, false, 100, "linearizable"},
		{"measured, a clock stepped", quorum.CommitWaitMeasured, true, 0, "valid-reads"},
		{"measured, drift past max_drift_ppm", quorum.CommitWaitMeasured, false, 1000, "valid-reads"},
		{"bound, a clock stepped", quorum.CommitWaitBound, true, 0, "linearizable"},
	} {
		c := scenario.Config{
			Seed: 1, World: "local3", Protocol: "quorum",
			Settings: &quorum.Config{Read: wire.Quorum, Write: wire.Quorum, CommitWait: tc.commitWait, MaxDriftPPM: 500},
			Clients:  6,
			Rate:     60,
			Duration: 2 * time.Second,
			Clock:    scenario.Clock{MaxDriftPPM: tc.driftPPM},
			Check:    "auto",
		}
		if tc.skew {
			c.Faults = []scenario.Fault{{At: 500 * time.Millisecond, For: 500 * time.Millisecond, Skew: &scenario.Skew{Node: "a-0", Offset: time.Millisecond}}}
		}
		c.Workload = presetA(t)
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check.Model != tc.want || res.Check.Verdict != "pass" {
			t.Errorf("%s: checked %s, %s; want %s, pass", tc.name, res.Check.Model, res.Check.Verdict, tc.want)
		}
	}
}

// presetA is the workload YCSB a, preset.
func presetA(t *testing.T) yaml.Node {
	t.Helper()
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "a"}); err != nil {
		t.Fatal(err)
	}
	return wl
}
