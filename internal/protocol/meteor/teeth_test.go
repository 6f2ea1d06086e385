package meteor_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/scenario"
)

// skewConfig is a fault run whose regions b and c have clocks offset by
// skew from region a's, with lossy links so reads regularly depend on
// peers' statuses and on pulls rather than on the serving replica's copy.
func skewConfig(t *testing.T, seed uint64, mode string, skew time.Duration) scenario.Config {
	c := swarmConfig(t, seed, mode)
	pinSwarm(&c)
	c.WorldDef = world3(t, 20, 20, 20, 1)
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
	for _, mode := range []string{"M1", "M2"} {
		found := uint64(0)
		var detail string
		for seed := uint64(1); seed <= 100 && found == 0; seed++ {
			c := skewConfig(t, seed, mode, 300*time.Millisecond)
			meteor.UnsafeAcceptLateWrites(mc(&c))
			res, err := scenario.Run(c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Check.Verdict == "violation" {
				found, detail = seed, res.Check.Detail
			}
		}
		if found == 0 {
			t.Errorf("%s: 100 runs that apply late writes all passed: the checker has no teeth", mode)
			continue
		}
		t.Logf("%s: seed %d: %s", mode, found, detail)
		refused := 0
		for seed := uint64(1); seed <= found+20; seed++ {
			for _, skew := range []time.Duration{300 * time.Millisecond, time.Millisecond / 2} {
				res, err := scenario.Run(skewConfig(t, seed, mode, skew))
				if err != nil {
					t.Fatal(err)
				}
				if res.Check.Verdict != "pass" {
					t.Fatalf("%s seed %d, skew %s: %s %s: %s\nreplay: go test ./internal/protocol/meteor -run TestTeethClosure -v",
						mode, seed, skew, res.Check.Model, res.Check.Verdict, res.Check.Detail)
				}
				if skew > time.Millisecond {
					for _, m := range res.Messages {
						if m.Kind == "meteor.rej" {
							refused += m.Count
						}
					}
				}
			}
		}
		if refused == 0 {
			t.Errorf("%s: no write copy was refused with clocks 300ms apart: the runs do not reach the closure rule", mode)
		}
		t.Logf("%s: with the closure rule, seeds 1..%d pass at 300ms and 0.5ms skew; %d write copies refused at 300ms", mode, found+20, refused)
	}
}
