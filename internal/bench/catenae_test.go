package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestCatenaeExperiments: the four Catenae experiments are in the
// catalog; the two that measure Catenae alone say they need it while it is
// not registered (and list no runtime); each that can run runs a tiny
// configuration (one sweep point, 12 clients, 1 s) whose every point
// commits transactions, passes the serializability check, and reports
// its transaction metrics, commit p50 at or above its floor.
func TestCatenaeExperiments(t *testing.T) {
	cat := Default()
	for _, name := range []string{"catenae-fig4.24", "catenae-fig4.29"} {
		e, err := cat.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		o := Options{}
		err = e.Validate(&o)
		if catenaeRegistered() {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "needs protocol catenae") || len(e.Runtimes()) != 0 {
			t.Errorf("%s without catenae: Validate = %v, runtimes %v; want an error naming catenae and none", name, err, e.Runtimes())
		}
	}
	for _, tc := range []struct {
		name, sweep string
		metrics     []string
	}{
		{"catenae-fig4.28", "5", []string{MetricP50, MetricTxnFloor, MetricTxnPerSec, MetricAbortPct}},
		{"catenae-fig4.30", "25", []string{MetricRWPerSec, MetricRWP50, MetricRWFloor, MetricRWAbortPct, MetricROPerSec, MetricReadP50, MetricROFloor, MetricROAbortPct}},
		{"catenae-fig4.24", "1000", []string{MetricSpecSuccessAll, MetricRWP50, MetricRWFloor}},
		{"catenae-fig4.29", "20", []string{MetricRWP50, MetricRWFloor, MetricTxnPerSec}},
	} {
		if e, _ := cat.Get(tc.name); e.Unavailable() != nil {
			continue // checked above
		}
		e, err := cat.Get(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"duration": "1s", "warmup": "0s", "clients": "12", "sweep": tc.sweep}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Points) != len(e.Series) {
			t.Fatalf("%s: %d points; want %d", tc.name, len(rep.Points), len(e.Series))
		}
		for _, p := range rep.Points {
			if p.Error != "" || p.Result.Check == nil || p.Result.Check.Verdict != "pass" {
				t.Fatalf("%s %s: error %q, check %+v", tc.name, p.Series, p.Error, p.Result.Check)
			}
			got := map[string]float64{}
			for _, m := range tc.metrics {
				v, ok := metric(p.Result, m)
				if !ok && !strings.HasPrefix(m, "ro_") && !strings.HasPrefix(m, "read_") {
					t.Errorf("%s %s: no %s", tc.name, p.Series, m)
				}
				got[m] = v
			}
			for _, pair := range [][2]string{{MetricP50, MetricTxnFloor}, {MetricRWP50, MetricRWFloor}, {MetricReadP50, MetricROFloor}} {
				if v, ok := got[pair[0]]; ok && v < got[pair[1]] {
					t.Errorf("%s %s: %s %.1f below its floor %.1f", tc.name, p.Series, pair[0], v, got[pair[1]])
				}
			}
			if v, ok := got[MetricTxnPerSec]; ok && v <= 0 {
				t.Errorf("%s %s: %s = %g; want > 0", tc.name, p.Series, MetricTxnPerSec, v)
			}
			if v, ok := got[MetricRWPerSec]; ok && v <= 0 {
				t.Errorf("%s %s: %s = %g; want > 0", tc.name, p.Series, MetricRWPerSec, v)
			}
		}
	}
}

// TestSweepOverride: --set sweep runs the named subset of an experiment's
// sweep values, and refuses a value the sweep does not have or an
// experiment without a sweep.
func TestSweepOverride(t *testing.T) {
	cat := Default()
	e, _ := cat.Get("catenae-fig4.28")
	xs, err := e.xs(Options{Overrides: map[string]string{"sweep": "2, 4"}})
	if err != nil || !slices.Equal(xs, []float64{2, 4}) {
		t.Errorf("sweep=2,4: %v, %v; want [2 4]", xs, err)
	}
	for _, tc := range []struct{ name, sweep, want string }{
		{"catenae-fig4.28", "7", "not one of"},
		{"catenae-fig4.28", "x", "not one of"},
		{"meteor-3dc", "1", "has no sweep"},
	} {
		e, _ := cat.Get(tc.name)
		o := Options{Overrides: map[string]string{"sweep": tc.sweep}}
		if err := e.Validate(&o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s sweep=%s: Validate = %v; want %q", tc.name, tc.sweep, err, tc.want)
		}
	}
}
