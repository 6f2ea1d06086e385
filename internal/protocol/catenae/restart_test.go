package catenae_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/catenae"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/workload"
)

// TestCoordinatorsRestartTogether: one, two or every region's coordinator
// crashes at 2 s and restarts at 2.5 s, under a read-write workload of
// twelve clients; from 4 s on transactions must commit again (doc.go,
// "Persistence"). The swarm checks safety only; this checks liveness.
// Found on the real server (server's
// TestCatenaeBankTransferKillEveryCoordinator) when a restarted
// coordinator reloaded its own payloads only above its applied mark: a
// region with a lower mark that had restarted too still needed them and
// every region stopped scheduling for good (8 of these 10 seeds with two
// or three crashed). TestRecoversAfterFaults crashes one at a time.
func TestCoordinatorsRestartTogether(t *testing.T) {
	for _, crash := range [][]string{{"b-0"}, {"a-0", "b-0"}, {"a-0", "b-0", "c-0"}} {
		for seed := uint64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("%v/seed=%d", crash, seed), func(t *testing.T) {
				c := scenario.Config{
					Seed: seed, WorldDef: simtest.World3(t, 20, 35, 60, 1), Protocol: catenae.Name,
					Transactions: &workload.TxnSpec{Records: 20, MinKeys: 1, MaxKeys: 3, ReadOnlyProportion: -1},
					Clients:      12, ClosedLoop: true, Duration: 8 * time.Second, ClientTimeout: 2 * time.Second,
					Check: "strong-session-serializable",
				}
				for _, n := range crash {
					c.Faults = append(c.Faults, scenario.Fault{At: 2 * time.Second, For: 500 * time.Millisecond, Crash: n})
				}
				res, err := scenario.Run(c)
				if err != nil {
					t.Fatal(err)
				}
				after := 0
				for _, x := range res.Txns {
					if x.Outcome == check.OK && x.Call > int64(4*time.Second) {
						after++
					}
				}
				if res.Check == nil || res.Check.Verdict != check.Pass.String() {
					t.Errorf("check: %+v", res.Check)
				}
				// Without faults these clients commit about 250 a second.
				if after < 500 {
					t.Errorf("%d transactions committed after 4s (client errors %v); want 500 or more: the coordinators did not recover", after, res.Errors)
				}
			})
		}
	}
}

// TestCoordinatorRestartAfterLoss: the same with one coordinator down at
// a time, under 40% message loss: each region's coordinator in turn
// crashes for 200 ms (four crashes, none overlapping); from 6 s on
// transactions must commit. A coordinator that crashed after applying a
// batch whose own payload a far region had not received (every copy
// lost) never sent it again while reload stopped at its applied mark:
// seeds 5, 7, 15 and 17 stopped. On the real server a kill -9 loses the
// messages WAN emulation holds at the killed sender, so a kill alone can
// lose a payload's copies.
func TestCoordinatorRestartAfterLoss(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		c := scenario.Config{
			Seed: seed, WorldDef: simtest.World3(t, 20, 35, 60, 1), Protocol: catenae.Name,
			Transactions: &workload.TxnSpec{Records: 20, MinKeys: 1, MaxKeys: 3, ReadOnlyProportion: -1},
			Clients:      12, ClosedLoop: true, Duration: 8 * time.Second, ClientTimeout: 2 * time.Second,
			Net: scenario.Net{Loss: 0.4},
		}
		for i := range 4 {
			c.Faults = append(c.Faults, scenario.Fault{At: time.Duration(1000+i*700+int(seed)*13) * time.Millisecond, For: 200 * time.Millisecond, Crash: []string{"a-0", "b-0", "c-0"}[(i+int(seed))%3]})
		}
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		after := 0
		for _, x := range res.Txns {
			if x.Outcome == check.OK && x.Call > int64(6*time.Second) {
				after++
			}
		}
		if after < 100 {
			t.Errorf("seed %d: %d transactions committed after 6s (client errors %v); want 100 or more: the cluster stopped", seed, after, res.Errors)
		}
	}
}
