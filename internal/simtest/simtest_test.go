package simtest_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
)

// faultyRun is a short run of protocol name with its default settings and
// every fault the simulator has: crashes and partitions, loss, duplication
// and reordering, clock offsets and drift, faulty stores and torn crashes.
func faultyRun(name string, seed uint64) scenario.Config {
	return scenario.Config{
		Seed: seed, World: "globlease4", Protocol: name, Clients: 12, ClosedLoop: true,
		Duration: 6 * time.Second, ClientTimeout: 2 * time.Second, RandomFaults: true,
		Clock:       scenario.Clock{MaxOffset: time.Millisecond, MaxDriftPPM: 50},
		Net:         scenario.Net{Loss: 0.01, Duplicate: 0.01, Reorder: 0.01},
		StoreFaults: sim.StoreFaults{ReadError: 0.01, WriteError: 0.01, TornCrash: true, RestartAfter: 500 * time.Millisecond},
		Check:       "none",
	}
}

// TestEveryProtocolIsDeterministic: for every registered protocol, one
// seed run twice with every kind of fault takes the same steps (trace
// hash), and another seed takes other steps — so every failure a seeded
// run finds can be replayed. A new protocol is covered by registering.
func TestEveryProtocolIsDeterministic(t *testing.T) {
	defs := protocol.All()
	if len(defs) < 3 {
		t.Fatalf("registry has %v; want every protocol (internal/protocol/all)", protocol.Names())
	}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			a := simtest.Deterministic(t, faultyRun(d.Name, 7))
			t.Logf("seed 7: trace %s, %d events, %d operations, %d fail-stops", a.TraceHash, a.Events, a.Ops, len(a.FailStops))
			if a.Events < 1000 || a.Ops < 50 {
				t.Fatalf("seed 7: %d events, %d operations; want a real workload", a.Events, a.Ops)
			}
			b, err := scenario.Run(faultyRun(d.Name, 8))
			if err != nil {
				t.Fatal(err)
			}
			if a.TraceHash == b.TraceHash {
				t.Fatalf("seeds 7 and 8 have the same trace %s: the seed is not used", a.TraceHash)
			}
		})
	}
}
