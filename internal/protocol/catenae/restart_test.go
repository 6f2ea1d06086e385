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
// "Persistence": a restarted coordinator reloads its payloads and the
// others resend the rest). The swarm checks safety only, so a run that
// stops committing passes it; this checks liveness.
//
// Found on the real server (server's
// TestCatenaeBankTransferKillEveryCoordinator). A restarted coordinator
// reloads its own payloads only above its own applied mark (reload); a
// region whose applied mark is lower and that lost its in-memory copies
// of them (it restarted too) needs them, nobody resends them, and every
// region's scheduling stops for good. Reloading down to the first payload
// not yet forgotten (tombstoned) makes every seed below commit again.
func TestCoordinatorsRestartTogether(t *testing.T) {
	t.Skip("bug: coordinators restarting together never schedule again: a restarted coordinator reloads only its own payloads above its applied mark, which a region with a lower mark that restarted too still needs (see the comment)")
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

// TestCoordinatorRestartAfterLoss: the same bug with one coordinator down
// at a time. Under 40% message loss, each region's coordinator in turn
// crashes for 200 ms (four crashes, none overlapping); from 6 s on
// transactions must commit. A coordinator that crashes after applying a
// batch whose own payload a far region has not received (every copy
// lost) never sends it again (it reloads only what is above its applied
// mark), and the far region waits for it for good: seeds 5, 7, 15 and 17
// stop; the same runs without crashes, or with reload going down to the
// first forgotten payload, do not. On the real server, WAN emulation
// holds each message at its sender for the one-way delay, and a kill -9
// loses what it holds, so a kill can lose a payload without any loss on
// the wire.
func TestCoordinatorRestartAfterLoss(t *testing.T) {
	t.Skip("bug: a coordinator restarted after applying a batch whose payload another region lacks never resends it (reload stops at its applied mark); every region stops scheduling")
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
