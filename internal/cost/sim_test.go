package cost_test

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/cost"
	_ "github.com/lightcone/lightcone/internal/protocol/all"
	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// TestAccountantMatchesServiceStats runs CRIC on the five Azure regions
// (cric5) with lost and duplicated messages and a warm-up, and checks that
// the accountant counted exactly the requests the reference services
// (storagesvc.Mem) say they executed, region by region and operation by
// operation; then that the run can be billed.
func TestAccountantMatchesServiceStats(t *testing.T) {
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "a", "record_count": 20, "read_proportion": 0.7, "update_proportion": 0.3}); err != nil {
		t.Fatal(err)
	}
	const seed = 7
	c := scenario.Config{
		Seed:          seed,
		World:         "cric5",
		Protocol:      cric.Name,
		Settings:      &cric.Config{ReplicasPerRegion: 2, FastRound: true, StorageTimeout: 500 * time.Millisecond, OpTimeout: 3 * time.Second},
		Workload:      wl,
		Clients:       10,
		ClosedLoop:    true,
		Duration:      3 * time.Second,
		Warmup:        500 * time.Millisecond,
		ClientTimeout: 4 * time.Second,
		Net:           scenario.Net{Loss: 0.02, Duplicate: 0.05},
		Check:         "none",
		VMs:           []scenario.VMFleet{{Region: "east-us", Role: "propose-assistant", Size: "d2s_v3", Count: 1}},
	}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if res.Ops == 0 || res.Cost.TotalRequests() == 0 {
		t.Fatalf("seed %d: %d operations, %d storage requests; want a real run", seed, res.Ops, res.Cost.TotalRequests())
	}
	got := map[string]int64{}
	for r, m := range res.Cost.Requests {
		for op, n := range m {
			got[res.Cost.Regions[r]+"/"+op] = n
		}
	}
	for k, n := range res.ServiceRequests {
		if got[k] != n {
			t.Errorf("seed %d: accountant counted %s = %d; the service's Stats say %d", seed, k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := res.ServiceRequests[k]; !ok && n != 0 {
			t.Errorf("seed %d: accountant counted %s = %d; the services executed none", seed, k, n)
		}
	}
	w, err := topo.Preset("cric5")
	if err != nil {
		t.Fatal(err)
	}
	rates, err := cost.ForWorld(w, cost.MustBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	b, err := rates.Bill(res.Cost)
	if err != nil {
		t.Fatal(err)
	}
	if b.Requests <= 0 || b.Egress <= 0 || b.Storage <= 0 || b.VMs <= 0 {
		t.Errorf("seed %d: bill %+v; want every part positive", seed, *b)
	}
	t.Logf("seed %d: %d ops, %d storage requests, %d inter-region bytes; bill $%.6f (requests %.6f, storage %.9f, egress %.6f, VMs %.6f)",
		seed, res.Ops, res.Cost.TotalRequests(), res.Cost.InterRegionBytes(), b.Total, b.Requests, b.Storage, b.Egress, b.VMs)
}
