package quorum_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestStoreFaults: swarmConfig's seeded runs, for every read/write level
// combination, with stores that fail reads and writes and crashes that are
// torn. A failed read refuses the one operation, a failed write fail-stops
// the replica (doc.go, "Storage failure"); every history must still pass
// the guarantee claimed for the levels (a broken invariant fails it too),
// and every fail-stop must be an injected fault.
func TestStoreFaults(t *testing.T) {
	runs := *runsFlag / 200
	var combos [][2]wire.Level
	for _, r := range wire.Levels() {
		for _, w := range wire.Levels() {
			combos = append(combos, [2]wire.Level{r, w})
		}
	}
	first := uint64(1)
	if *levels != "" {
		rs, ws, _ := strings.Cut(*levels, "/")
		rl, err1 := wire.ParseLevel(rs)
		wl, err2 := wire.ParseLevel(ws)
		if err1 != nil || err2 != nil {
			t.Fatalf("-levels %q: want READ/WRITE, e.g. QUORUM/ALL", *levels)
		}
		combos = [][2]wire.Level{{rl, wl}}
		if *seedFlag != 0 {
			first, runs = *seedFlag, 1
		}
	}
	ops, stops := 0, 0
	for _, cb := range combos {
		for seed := first; seed < first+uint64(runs); seed++ {
			c := swarmConfig(t, seed, cb[0], cb[1])
			r := rand.New(rand.NewPCG(seed, 0x737466)) // "stf"
			c.StoreFaults = sim.StoreFaults{ReadError: r.Float64() * 0.02, WriteError: r.Float64() * 0.02,
				TornCrash: true, RestartAfter: c.Duration / 4}
			res, err := scenario.Run(c)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if res.Check.Verdict != "pass" {
				t.Fatalf("%s/%s seed %d: %s check %s: key %q: %s\nreplay: %s", cb[0], cb[1], seed, res.Check.Model, res.Check.Verdict,
					res.Check.Key, res.Check.Detail, replay(seed, cb[0], cb[1], "TestStoreFaults"))
			}
			for _, f := range res.FailStops {
				if !strings.Contains(f, store.ErrInjected.Error()) {
					t.Fatalf("%s/%s seed %d: fail-stop %s is not an injected fault\nreplay: %s", cb[0], cb[1], seed, f, replay(seed, cb[0], cb[1], "TestStoreFaults"))
				}
			}
			ops, stops = ops+res.Check.Ops, stops+len(res.FailStops)
		}
	}
	n := runs * len(combos)
	t.Logf("%d runs, %d operations, %d fail-stops", n, ops, stops)
	if n >= 50 && (stops == 0 || ops < n*20) {
		t.Fatalf("the runs exercised too little: %d operations, %d fail-stops in %d runs", ops, stops, n)
	}
}
