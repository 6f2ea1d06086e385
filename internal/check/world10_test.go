package check_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

var (
	world10Runs = flag.Int("world10", 0, "TestWorld10Sweep: runs per seed (seeds 1-3); 0 skips the sweep")
	world10Seed = flag.Uint64("world10-seed", 0, "TestWorld10Sweep: only this seed")
	world10Run  = flag.Int("world10-run", -1, "TestWorld10Sweep: only this run of each seed")
	world10CLI  = flag.Bool("world10-cli", false, "TestWorld10Sweep: draw runs as world10CLIConfig (lightcone sim's defaults, 30 s) instead of world10Config")
)

// world10CLIConfig is run i of seed as lightcone sim makes it with its
// defaults (50 clients, 1000 requests/s open loop, workload a's 10,000
// records): the same as
//
//	lightcone sim --world world10 --protocol meteor --workload a --random-faults \
//	  --duration 30s --seed S --set mode=M --write W --check sequential
//
// with M, W = {M1, M2} x {QUORUM, ALL, ONE}[i%6] (i < 6).
func world10CLIConfig(tb testing.TB, seed uint64, i int) scenario.Config {
	w, err := topo.Preset("world10")
	if err != nil {
		tb.Fatal(err)
	}
	mode := []meteor.Mode{meteor.M1, meteor.M2}[i%2]
	write := []wire.Level{wire.Quorum, wire.All, wire.One}[i/2%3]
	return scenario.Config{
		Seed: seed, WorldDef: w, Protocol: "meteor", Settings: &meteor.Config{Mode: mode, Write: write},
		WorkloadPreset: "a", Duration: 30 * time.Second, RandomFaults: true,
		Check: "valid-reads", // cheap; the test runs Sequential itself
	}
}

// world10Config draws run i of seed: MeteorShower on the ten-region
// world10 preset, YCSB workload a (half reads, half updates) on a small
// contended key space, the simulator's seeded random faults (crashes,
// partitions, network faults), message loss, duplication and reordering in
// half the runs and clock errors within ε. Each (seed, i) is one run,
// drawn from those two numbers alone.
func world10Config(tb testing.TB, seed uint64, i int) scenario.Config {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	w, err := topo.Preset("world10")
	if err != nil {
		tb.Fatal(err)
	}
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(8), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "zipfian",
	}); err != nil {
		tb.Fatal(err)
	}
	mode := meteor.M2
	if r.IntN(2) == 0 {
		mode = meteor.M1
	}
	write := []wire.Level{wire.Quorum, wire.Quorum, wire.One, wire.All}[r.IntN(4)]
	const eps = meteor.DefaultMaxClockSkew
	c := scenario.Config{
		Seed:     seed*1000 + uint64(i),
		WorldDef: w,
		Protocol: "meteor",
		Settings: &meteor.Config{
			ReplicasPerRegion: []int{1 + r.IntN(2)},
			Mode:              mode,
			Write:             write,
			MaxClockSkew:      eps,
			DispatchInterval:  time.Duration(5+r.IntN(20)) * time.Millisecond,
			Redundant:         r.IntN(4),
			ReadTimeout:       time.Second, WriteTimeout: time.Second,
		},
		Workload:      wl,
		Clients:       10 + r.IntN(40),
		ClosedLoop:    true,
		Duration:      2*time.Second + time.Duration(r.IntN(6000))*time.Millisecond,
		ClientTimeout: 2 * time.Second,
		Clock:         scenario.Clock{MaxOffset: eps / 4, MaxDriftPPM: 100},
		RandomFaults:  true,
		Check:         "valid-reads", // cheap; the test runs Sequential itself
	}
	if r.IntN(2) == 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	if r.IntN(3) == 0 {
		// Short timeouts: more writes with an unknown outcome.
		to := time.Duration(250+r.IntN(150)) * time.Millisecond
		mc := c.Settings.(*meteor.Config)
		mc.ReadTimeout, mc.WriteTimeout = to, to
		mc.Horizon = to + time.Duration(100+r.IntN(400))*time.Millisecond
		c.ClientTimeout = to + 50*time.Millisecond
	}
	if r.IntN(3) == 0 {
		// Clock steps far beyond ε (meteor's safety needs no clock bound).
		for range 1 + r.IntN(3) {
			off := time.Duration(r.Int64N(int64(3 * time.Second)))
			if r.IntN(2) == 0 {
				off = -off
			}
			node := fmt.Sprintf("%s-%d", w.Regions[r.IntN(len(w.Regions))].Name, r.IntN(w.NodesPerRegion))
			c.Faults = append(c.Faults, scenario.Fault{At: time.Duration(r.Int64N(int64(c.Duration))),
				For: time.Duration(100+r.IntN(1500)) * time.Millisecond, Skew: &scenario.Skew{Node: node, Offset: off}})
		}
	}
	return c
}

// TestWorld10Sweep measures the sequential checker on MeteorShower's
// faulted histories of the ten-region world: runs -world10 configurations
// (world10Config) of each seed 1-3 and counts each verdict of Sequential
// with the default budget, and the checker's time. Any violation fails
// (meteor claims SC, and a violation is a proof); undecided runs are
// counted and listed with their replay command.
//
//	go test ./internal/check -run TestWorld10Sweep -world10 40 -v
func TestWorld10Sweep(t *testing.T) {
	if *world10Runs == 0 {
		t.Skip("a measurement, not a CI test: -world10 N runs N configurations of each seed 1-3")
	}
	verdicts := map[check.Verdict]int{}
	var total, worst time.Duration
	ops := 0
	for seed := uint64(1); seed <= 3; seed++ {
		if *world10Seed != 0 && seed != *world10Seed {
			continue
		}
		for i := range *world10Runs {
			if *world10Run >= 0 && i != *world10Run {
				continue
			}
			c := world10Config(t, seed, i)
			if *world10CLI {
				c = world10CLIConfig(t, seed, i)
			}
			res, err := scenario.Run(c)
			if err != nil {
				t.Fatalf("seed %d run %d: %v", seed, i, err)
			}
			start := time.Now()
			cr := check.Sequential(res.History, 0)
			took := time.Since(start)
			total += took
			worst = max(worst, took)
			ops += len(res.History.Ops)
			verdicts[cr.Verdict]++
			replay := fmt.Sprintf("go test ./internal/check -run TestWorld10Sweep -world10 %d -world10-seed %d -world10-run %d -world10-cli=%t -v", i+1, seed, i, *world10CLI)
			if testing.Verbose() {
				fmt.Printf("seed %d run %d: %d ops, checker %s: %s (%s)\n", seed, i, len(res.History.Ops), took.Round(time.Millisecond), cr.Verdict, how(cr))
			}
			switch cr.Verdict {
			case check.Violation:
				t.Errorf("seed %d run %d (%d ops): %s\nreplay: %s", seed, i, len(res.History.Ops), cr, replay)
			case check.Undecided:
				t.Logf("seed %d run %d (%d ops, %s): %s\nreplay: %s", seed, i, len(res.History.Ops), took.Round(time.Millisecond), cr, replay)
			}
		}
	}
	n := verdicts[check.Pass] + verdicts[check.Violation] + verdicts[check.Undecided]
	t.Logf("world10 meteor workload a with faults: %d runs, %d ops: %d pass, %d violation, %d undecided; checker %s in all, %s at worst",
		n, ops, verdicts[check.Pass], verdicts[check.Violation], verdicts[check.Undecided], total.Round(time.Millisecond), worst.Round(time.Millisecond))
}

// how says how a verdict was reached.
func how(r check.Result) string { return r.How }
