package meteor_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// skewConfig is a fault run whose regions b and c have clocks offset by
// skew from region a's, with lossy links so reads regularly depend on
// peers' statuses and on pulls rather than on the serving replica's copy.
func skewConfig(t testing.TB, seed uint64, mode string, skew time.Duration) scenario.Config {
	c := swarmConfig(t, seed, mode)
	pinSwarm(&c)
	c.WorldDef = simtest.World3(t, 20, 20, 20, 1)
	c.RandomFaults = false
	c.Clock = scenario.Clock{}
	c.Net = scenario.Net{Loss: 0.2}
	mc(&c).ReplicasPerRegion = []int{1}
	c.Clients = 6
	c.Check = "sequential" // auto drops to valid-reads beyond the clock bound
	for _, n := range []string{"b-0", "b-1", "c-0", "c-1"} {
		c.Faults = append(c.Faults, scenario.Fault{Skew: &scenario.Skew{Node: n, Offset: skew}})
	}
	return c
}

// TestTeethClosure: a replica's status promises that it holds no version
// stamped at or before the status's closure beyond those it reported, and
// reads count on it (doc.go, "Closure"). With clocks 300 ms apart (ε =
// 2 ms), writes reach the skewed replicas after their closure has passed
// the write's timestamp; a replica that applies them anyway breaks the
// promise, a read that counted it misses a committed write, and the global
// sequential-consistency checker must reject the history. With the rule
// kept, the same runs pass: the guarantee does not depend on ε, which only
// costs refused write copies and restamped writes.
func TestTeethClosure(t *testing.T) {
	const skew = 300 * time.Millisecond
	for _, mode := range []string{"M1", "M2"} {
		t.Run(mode, func(t *testing.T) {
			safe := func(tb testing.TB, seed uint64) scenario.Config { return skewConfig(tb, seed, mode, skew) }
			simtest.Teeth{Safe: safe, Unsafe: func(tb testing.TB, seed uint64) scenario.Config {
				c := safe(tb, seed)
				meteor.UnsafeAcceptLateWrites(mc(&c))
				return c
			}}.Run(t)
			// The kept rule is what the safe runs reach: late write copies
			// are refused.
			res, err := scenario.Run(safe(t, 1))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Messages {
				if m.Kind == "meteor.rej" && m.Count > 0 {
					return
				}
			}
			t.Errorf("no write copy was refused with clocks %s apart: the runs do not reach the closure rule", skew)
		})
	}
}

// TestTeethClosureLead: a status promises its closure ClosureLead ahead of
// the sender's clock, and the sender keeps the promise by refusing writes
// stamped up to it, not only those its clock has passed (doc.go, "Closures
// ahead of the clock"). With a write margin of ε + 1 ms and the promise
// just below it, on jittered links, many write copies land inside the
// promise; a replica that applies them breaks it, a read that counted it
// misses a committed write, and the checker must reject the history. The
// same runs with the promise kept pass.
func TestTeethClosureLead(t *testing.T) {
	for _, mode := range []string{"M1", "M2"} {
		t.Run(mode, func(t *testing.T) {
			safe := func(tb testing.TB, seed uint64) scenario.Config {
				c := swarmConfig(tb, seed, mode)
				pinSwarm(&c)
				c.WorldDef = simtest.World3(tb, 20, 20, 20, 2)
				c.RandomFaults, c.Net, c.Clock = false, scenario.Net{}, scenario.Clock{}
				c.Clients = 6
				c.Check = "sequential"
				lead := 2900 * time.Microsecond // below write_lead + ε = 3ms
				mc(&c).WriteLead, mc(&c).ClosureLead = time.Millisecond, &lead
				mc(&c).ReplicasPerRegion = []int{1}
				return c
			}
			simtest.Teeth{Safe: safe, Unsafe: func(tb testing.TB, seed uint64) scenario.Config {
				c := safe(tb, seed)
				meteor.UnsafeRefuseByClock(mc(&c))
				return c
			}}.Run(t)
		})
	}
}
