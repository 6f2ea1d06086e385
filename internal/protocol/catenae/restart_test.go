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

// TestRestartsResume checks liveness after coordinators' restarts (the
// swarm checks safety only), under a read-write workload of twelve
// clients on twenty records: after the faults, transactions must commit
// again (doc.go, "Persistence": a restarted coordinator reloads every
// payload of its own some region may lack; the others resend the rest).
// TestRecoversAfterFaults crashes one coordinator at a time without loss.
//
//   - together: one, two or every region's coordinator crashes at 2 s and
//     restarts at 2.5 s. Found on the real server (server's
//     TestCatenaeBankTransferKillEveryCoordinator) when a restarted
//     coordinator reloaded its own payloads only above its applied mark:
//     a region with a lower mark that had restarted too still needed them
//     and every region stopped scheduling for good (8 of the 10 seeds with
//     two or three crashed).
//   - after loss: under 40% message loss, each region's coordinator in
//     turn crashes for 200 ms (four crashes, none overlapping). A
//     coordinator that crashed after applying a batch whose payload a far
//     region had not received (every copy lost) never sent it again under
//     that rule: 4 of 20 seeds stopped. On the real server a kill -9 loses
//     the messages WAN emulation holds at the killed sender, so a kill
//     alone can lose a payload's copies.
func TestRestartsResume(t *testing.T) {
	coords := []string{"a-0", "b-0", "c-0"}
	type run struct {
		name   string
		seed   uint64
		loss   float64
		faults []scenario.Fault
		from   time.Duration // count the transactions started after
		want   int
	}
	var runs []run
	for n := 1; n <= 3; n++ {
		for seed := uint64(1); seed <= 5; seed++ {
			r := run{name: fmt.Sprintf("together/%v/seed=%d", coords[:n], seed), seed: seed, from: 4 * time.Second, want: 500}
			for _, c := range coords[:n] {
				r.faults = append(r.faults, scenario.Fault{At: 2 * time.Second, For: 500 * time.Millisecond, Crash: c})
			}
			runs = append(runs, r)
		}
	}
	for seed := uint64(1); seed <= 20; seed++ {
		r := run{name: fmt.Sprintf("after-loss/seed=%d", seed), seed: seed, loss: 0.4, from: 6 * time.Second, want: 100}
		for i := range 4 {
			r.faults = append(r.faults, scenario.Fault{At: time.Duration(1000+i*700+int(seed)*13) * time.Millisecond, For: 200 * time.Millisecond, Crash: coords[(i+int(seed))%3]})
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			res, err := scenario.Run(scenario.Config{
				Seed: r.seed, WorldDef: simtest.World3(t, 20, 35, 60, 1), Protocol: catenae.Name,
				Transactions: &workload.TxnSpec{Records: 20, MinKeys: 1, MaxKeys: 3, ReadOnlyProportion: -1},
				Clients:      12, ClosedLoop: true, Duration: 8 * time.Second, ClientTimeout: 2 * time.Second,
				Net: scenario.Net{Loss: r.loss}, Faults: r.faults, Check: "strong-session-serializable",
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Check == nil || res.Check.Verdict != check.Pass.String() {
				t.Errorf("check: %+v", res.Check)
			}
			after := 0
			for _, x := range res.Txns {
				if x.Outcome == check.OK && x.Call > int64(r.from) {
					after++
				}
			}
			// Without faults these clients commit about 250 a second.
			if after < r.want {
				t.Errorf("%d transactions committed after %v (client errors %v); want %d or more: the cluster stopped", after, r.from, res.Errors, r.want)
			}
		})
	}
}
