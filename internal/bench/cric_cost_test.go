package bench

import (
	"context"
	"testing"
)

// TestCricFig514Shape: at read:write 30 with 1 KB objects CPaxos costs
// less than both baselines once their VMs' storage requests are modelled,
// and 100 KB objects cost more egress than 1 KB ones (values are padded
// to the workload's size).
func TestCricFig514Shape(t *testing.T) {
	e, _ := Default().Get("cric-fig5.14")
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"duration": "6s"}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(series string, x float64, m string) float64 {
		for _, p := range rep.Points {
			if p.Series == series && p.X == x {
				v, ok := metric(p.Result, m)
				if !ok {
					t.Fatalf("%s at %g: no %s", series, x, m)
				}
				return v
			}
		}
		t.Fatalf("no point %s at %g", series, x)
		return 0
	}
	cric := get("CPaxos 1 KB", 30, metricCostWithProxy)
	for _, b := range []string{"Fast Paxos 1 KB", "pPaxos* 1 KB"} {
		if v := get(b, 30, metricCostWithProxy); cric >= v {
			t.Errorf("CPaxos 1 KB costs %.3f; want less than %s's %.3f", cric, b, v)
		}
	}
	if small, big := get("CPaxos 1 KB", 1, MetricEgressBytesPerOp), get("CPaxos 100 KB", 1, MetricEgressBytesPerOp); big < 20*small {
		t.Errorf("egress bytes per op: 100 KB %.0f, 1 KB %.0f; want the 100 KB objects' bytes on the wire", big, small)
	}
	if v := get("Fast Paxos 1 KB", 1, MetricVMCostPerMil); v <= 0 {
		t.Errorf("Fast Paxos vm_cost = %g; want its declared acceptor VMs charged", v)
	}
}

// TestCricFig51516Shape: every configuration of one access set reports a
// tail gap, and cost grows with the number of replicas.
func TestCricFig51516Shape(t *testing.T) {
	e, _ := Default().Get("cric-fig5.15-16")
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"duration": "15s"}})
	if err != nil {
		t.Fatal(err)
	}
	costs := map[string]float64{}
	for _, p := range rep.Points {
		if p.X != 1 {
			continue
		}
		if _, ok := metric(p.Result, metricReadGap); !ok {
			t.Errorf("%s: no %s", p.Series, metricReadGap)
		}
		costs[p.Series], _ = metric(p.Result, MetricRequestsPerOp)
	}
	if costs["flat 3 DCs"] >= costs["flat 9 DCs"] || costs["hier 3×2"] >= costs["hier 3×5"] {
		t.Errorf("requests per op %v; want more replicas to cost more", costs)
	}
}
