package simtest

import (
	"fmt"
	"testing"

	"github.com/lightcone/lightcone/internal/topo"
)

// World3 is a small world for seeded fault runs: three regions a, b, c,
// two nodes each (a-0, a-1, ...), with the given one-way delays (ms) a-b,
// b-c, a-c and exponential jitter of the given mean (ms).
func World3(tb testing.TB, ab, bc, ac, jitter float64) *topo.World {
	tb.Helper()
	w, err := topo.Parse([]byte(fmt.Sprintf(`
name: world3
description: three regions, two nodes each, for seeded fault runs
nodes_per_region: 2
regions:
  - {name: a, provider: sim, lat: 0, long: 0}
  - {name: b, provider: sim, lat: 0, long: 0}
  - {name: c, provider: sim, lat: 0, long: 0}
links:
  - {from: a, to: b, one_way_ms: %g, jitter: {dist: exponential, mean_ms: %g}}
  - {from: b, to: c, one_way_ms: %g, jitter: {dist: exponential, mean_ms: %g}}
  - {from: a, to: c, one_way_ms: %g, jitter: {dist: exponential, mean_ms: %g}}
`, ab, jitter, bc, jitter, ac, jitter)))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}
