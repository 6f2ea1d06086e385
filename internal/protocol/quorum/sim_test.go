package quorum_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

var (
	runsFlag = flag.Int("runs", 1000, "seeded runs per level combination (TestLevelsUnderFaults)")
	seedFlag = flag.Uint64("seed", 0, "replay one seed (with -levels)")
	levels   = flag.String("levels", "", "replay one combination, READ/WRITE, e.g. QUORUM/QUORUM")
)

// swarmWorld is a small three-region world; 2 nodes per region.
func swarmWorld(t testing.TB) *topo.World {
	w, err := topo.Parse([]byte(`
name: swarm3
description: three regions, two nodes each, for seeded fault runs
nodes_per_region: 2
regions:
  - {name: a, provider: sim, lat: 50, long: 8}
  - {name: b, provider: sim, lat: 40, long: -74}
  - {name: c, provider: sim, lat: 35, long: 139}
links:
  - {from: a, to: b, one_way_ms: 20, jitter: {dist: exponential, mean_ms: 5}}
  - {from: b, to: c, one_way_ms: 35, jitter: {dist: exponential, mean_ms: 5}}
  - {from: a, to: c, one_way_ms: 60, jitter: {dist: exponential, mean_ms: 5}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// swarmConfig draws one seeded run: the replica count, clock errors within
// the bound the protocol assumes, a fault schedule, and a small contended
// key space (swarm testing: each seed its own shape).
func swarmConfig(t testing.TB, seed uint64, read, write wire.Level) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 42))
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(4), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
	}); err != nil {
		t.Fatal(err)
	}
	const offset = quorum.DefaultMaxClockOffset
	c := scenario.Config{
		Seed:     seed,
		WorldDef: swarmWorld(t),
		Protocol: "quorum",
		Settings: &quorum.Config{
			ReplicasPerRegion: []int{1 + r.IntN(2)},
			Read:              read, Write: write,
			MaxClockOffset: offset,
			ReadTimeout:    time.Second, WriteTimeout: time.Second,
		},
		Workload:      wl,
		Clients:       3 + r.IntN(4),
		ClosedLoop:    true,
		Duration:      time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
		ClientTimeout: 2 * time.Second,
		// Within the bound: |offset + drift·t| ≤ δ over the run.
		Clock:        scenario.Clock{MaxOffset: offset / 2, MaxDriftPPM: 100},
		RandomFaults: true,
		Check:        "auto",
	}
	if r.IntN(2) == 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	return c
}

func replay(seed uint64, read, write wire.Level, extra string) string {
	return fmt.Sprintf("go test ./internal/protocol/quorum -run '%s' -levels %s/%s -seed %d -v", extra, read, write, seed)
}

// TestLevelsUnderFaults runs -runs seeded simulations per read/write level
// combination, with crashes, partitions, message loss, duplication and
// reordering, and clock offsets within the bound; each history is checked
// against the guarantee GuaranteeOf claims for the combination (doc.go).
func TestLevelsUnderFaults(t *testing.T) {
	runs := *runsFlag
	if testing.Short() {
		runs = min(runs, 30)
	}
	type combo struct{ read, write wire.Level }
	var combos []combo
	for _, r := range wire.Levels() {
		for _, w := range wire.Levels() {
			combos = append(combos, combo{r, w})
		}
	}
	first := uint64(1)
	if *levels != "" {
		rs, ws, ok := strings.Cut(*levels, "/")
		rl, err1 := wire.ParseLevel(rs)
		wl, err2 := wire.ParseLevel(ws)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("-levels %q: want READ/WRITE, e.g. QUORUM/ALL", *levels)
		}
		combos = []combo{{rl, wl}}
		if *seedFlag != 0 {
			first, runs = *seedFlag, 1
		}
	}
	for _, cb := range combos {
		t.Run(cb.read.String()+"/"+cb.write.String(), func(t *testing.T) {
			t.Parallel()
			var failures atomic.Int32
			var ops atomic.Int64
			jobs := make(chan uint64)
			var wg sync.WaitGroup
			for w := 0; w < runtime.GOMAXPROCS(0); w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seed := range jobs {
						c := swarmConfig(t, seed, cb.read, cb.write)
						res, err := scenario.Run(c)
						if err != nil {
							t.Errorf("seed %d: %v", seed, err)
							continue
						}
						ops.Add(int64(res.Check.Ops))
						if res.Check.Verdict != "pass" {
							if failures.Add(1) <= 3 {
								t.Errorf("seed %d: %s check %s: key %q: %s\nreplay: %s",
									seed, res.Check.Model, res.Check.Verdict, res.Check.Key, res.Check.Detail,
									replay(seed, cb.read, cb.write, "TestLevelsUnderFaults"))
							}
						}
					}
				}()
			}
			for i := 0; i < runs; i++ {
				jobs <- first + uint64(i)
			}
			close(jobs)
			wg.Wait()
			if ops.Load() < int64(runs)*20 {
				t.Errorf("only %d operations over %d runs: the runs exercise too little", ops.Load(), runs)
			}
		})
	}
}
