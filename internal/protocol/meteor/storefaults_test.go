package meteor_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/store"
)

// TestStoreFaults: swarmConfig's seeded runs, per mode, with stores that
// fail reads and writes and crashes that are torn. A failed write
// fail-stops its replica, a failed read refuses the one operation, and a
// restarted replica resumes from the bounds it stored (doc.go, "Storage
// failure"); every history must still pass the model meteor claims (a
// broken invariant fails it too), and every fail-stop must be an injected
// fault.
func TestStoreFaults(t *testing.T) {
	runs := *runsFlag / 6
	if testing.Short() {
		runs = min(runs, 15)
	}
	modes := []string{"M1", "M2"}
	first := uint64(1)
	if *modeFlag != "" {
		modes = []string{*modeFlag}
		if *seedFlag != 0 {
			first, runs = *seedFlag, 1
		}
	}
	for _, mode := range modes {
		ops, stops := 0, 0
		for seed := first; seed < first+uint64(runs); seed++ {
			c := swarmConfig(t, seed, mode)
			r := rand.New(rand.NewPCG(seed, 0x737466)) // "stf"
			c.StoreFaults = sim.StoreFaults{ReadError: r.Float64() * 0.005, WriteError: r.Float64() * 0.005,
				TornCrash: true, RestartAfter: c.Duration / 4}
			res, err := scenario.Run(c)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if res.Check.Verdict != "pass" && res.Check.Verdict != "undecided" {
				t.Fatalf("%s seed %d: %s check %s: key %q: %s\nreplay: %s", mode, seed, res.Check.Model, res.Check.Verdict,
					res.Check.Key, res.Check.Detail, replay("TestStoreFaults", mode, seed))
			}
			for _, f := range res.FailStops {
				if !strings.Contains(f, store.ErrInjected.Error()) {
					t.Fatalf("%s seed %d: fail-stop %s is not an injected fault\nreplay: %s", mode, seed, f, replay("TestStoreFaults", mode, seed))
				}
			}
			ops, stops = ops+res.Check.Ops, stops+len(res.FailStops)
		}
		t.Logf("%s: %d runs, %d operations, %d fail-stops", mode, runs, ops, stops)
		if runs >= 15 && (stops == 0 || ops < runs*20) {
			t.Fatalf("%s: the runs exercised too little: %d operations, %d fail-stops in %d runs", mode, ops, stops, runs)
		}
	}
}
