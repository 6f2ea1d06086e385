package bench

import (
	"context"
	"testing"
)

// TestDirTable52Shape runs dir-table5.2 at a tiny size and checks the shape
// the experiment exists to show: C* reads are local and its writes take the
// 200 ms round trip; SC's loader-side client is faster than the remote one; no RC access beats the 100 ms round trip to the directory.
func TestDirTable52Shape(t *testing.T) {
	e, err := Default().Get("dir-table5.2")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"ops_per_client": "40", "records": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(series, m string) float64 {
		t.Helper()
		for _, p := range rep.Points {
			if p.Series == series {
				v, ok := metric(p.Result, m)
				if !ok {
					t.Fatalf("%s: no %s", series, m)
				}
				return v
			}
		}
		t.Fatalf("no series %s", series)
		return 0
	}
	for _, tc := range []struct {
		series, metric string
		lo, hi         float64
	}{
		{"C*", MetricReadMean, 0, 5},
		{"C*", MetricWriteMean, 199, 210},
		{"SC", MetricIn("dc2", MetricReadMean), 100, 2000},
		{"RC", MetricReadP50, 100, 2000},
	} {
		if v := get(tc.series, tc.metric); v < tc.lo || v > tc.hi {
			t.Errorf("%s %s = %.1f; want in [%g, %g]", tc.series, tc.metric, v, tc.lo, tc.hi)
		}
	}
	if sc1, sc2 := get("SC", MetricIn("dc1", MetricMean)), get("SC", MetricIn("dc2", MetricMean)); sc1 >= sc2 {
		t.Errorf("SC mean at dc1 (loader) %.1f ms, at dc2 %.1f; want the loader's side faster", sc1, sc2)
	}
	if n := rep.Points[0].Result.Ops; n != 80 {
		t.Errorf("SC ran %d operations; want 2 clients × 40", n)
	}
}

// TestDirFig56Batching: RC's time per operation falls with the batch size.
func TestDirFig56Batching(t *testing.T) {
	e, _ := Default().Get("dir-fig5.6")
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"ops_per_client": "10", "records": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	per := map[float64]float64{}
	for _, p := range rep.Points {
		per[p.X], _ = metric(p.Result, MetricPerOpMean)
	}
	if per[1] < 100 || per[64] >= per[1]/10 {
		t.Errorf("per-operation mean at B=1, 64 = %.1f, %.1f ms; want ≥ 100 at B=1 and a tenth of it by B=64", per[1], per[64])
	}
}

func TestRegionalMetricNames(t *testing.T) {
	for name, want := range map[string]bool{
		MetricIn("dc1", MetricReadMean): true,
		MetricIn("dc2", MetricWriteP95): true,
		MetricIn("dc1", MetricAbove):    false,
		"read_mean_ms@":                 false,
		MetricPerOpMean:                 true,
	} {
		if got := validMetric(name); got != want {
			t.Errorf("validMetric(%q) = %v; want %v", name, got, want)
		}
	}
}

// TestDirPlacementShape runs dir-placement at a tiny size and checks what
// it measures (seed 002 §5.4): the directory in dc1 speeds dc1 up and
// slows dc2 down against the far directory, and sharding it per DC speeds
// both up, for SC and RC.
func TestDirPlacementShape(t *testing.T) {
	e, err := Default().Get("dir-placement")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"ops_per_client": "60", "records": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	mean := func(series, region string) float64 {
		t.Helper()
		for _, p := range rep.Points {
			if p.Series == series {
				if c := p.Result.Check; c == nil || c.Verdict != "pass" {
					t.Errorf("%s: check %+v; want pass", series, c)
				}
				v, ok := metric(p.Result, MetricIn(region, MetricMean))
				if !ok {
					t.Fatalf("%s: no mean at %s", series, region)
				}
				return v
			}
		}
		t.Fatalf("no series %s", series)
		return 0
	}
	for _, p := range []string{"SC", "RC"} {
		far1, far2 := mean(p+" far", "dc1"), mean(p+" far", "dc2")
		at1, at2 := mean(p+" @dc1", "dc1"), mean(p+" @dc1", "dc2")
		sh1, sh2 := mean(p+" sharded", "dc1"), mean(p+" sharded", "dc2")
		if !(at1 < far1 && at2 > far2) {
			t.Errorf("%s: directory in dc1: dc1 %.1f ms (far %.1f), dc2 %.1f (far %.1f); want dc1 faster, dc2 slower", p, at1, far1, at2, far2)
		}
		if !(sh1 < far1 && sh2 < far2) {
			t.Errorf("%s: sharded: dc1 %.1f ms (far %.1f), dc2 %.1f (far %.1f); want both faster", p, sh1, far1, sh2, far2)
		}
	}
}
