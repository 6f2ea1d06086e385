package bench

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// runSeries runs one series of a catalog experiment at sweep value x with
// edit applied last (the tests shorten the runs).
func runSeries(t *testing.T, name, label string, x float64, edit func(*scenario.Config)) *scenario.Result {
	t.Helper()
	e, err := Default().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range e.Series {
		if s.Label != label {
			continue
		}
		c, err := e.configFor(s, x, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		edit(&c)
		res, err := scenario.Run(c)
		if err != nil {
			t.Fatalf("%s %s: %v", name, label, err)
		}
		return res
	}
	t.Fatalf("%s has no series %q", name, label)
	return nil
}

func msgCount(res *scenario.Result, kind string) int {
	for _, m := range res.Messages {
		if m.Kind == kind {
			return m.Count
		}
	}
	return 0
}

// TestGlobLeaseFig9Short: at 1,800 req/s of Zipf-4 reads the hot key's host
// without affiliates is overloaded (its queue grows: reads wait hundreds of
// milliseconds), while with two affiliates per region the hosts attach them
// and reads stay local-fast.
func TestGlobLeaseFig9Short(t *testing.T) {
	short := func(c *scenario.Config) { c.Warmup, c.Duration = 10*time.Second, 25*time.Second }
	without := runSeries(t, "globlease-fig9", "GlobLease, no affiliates, 100% reads", 1800, short)
	with := runSeries(t, "globlease-fig9", "GlobLease, 2 affiliates, 100% reads", 1800, short)
	p50n, _ := metric(without, MetricReadP50)
	p50a, _ := metric(with, MetricReadP50)
	p99a, _ := metric(with, MetricReadP99)
	if p50n < 100 || p50a > p50n/5 || p99a > glStableMaxMs {
		t.Errorf("read p50 %.1f ms without affiliates, %.1f ms (p99 %.1f) with; want the host overloaded without (≥ 100 ms) and local reads with (p50 a fifth or less, p99 < %g ms)",
			p50n, p50a, p99a, glStableMaxMs)
	}
	if n := msgCount(with, "lease.sec_grant"); n == 0 {
		t.Errorf("with affiliates: no lease.sec_grant; want the hosts to have attached them")
	}
	if n := msgCount(without, "lease.sec_grant"); n != 0 {
		t.Errorf("without affiliates: %d lease.sec_grant; want none", n)
	}
}

// TestGlobLeaseFig10Short is Fig. 10 with the step at 10 s: with
// affiliates the reads stabilise within the paper's 10 s; without them
// the host stays overloaded and the metric says it never stabilised.
func TestGlobLeaseFig10Short(t *testing.T) {
	short := func(c *scenario.Config) {
		c.RateSteps = []scenario.RateStep{{At: 10 * time.Second, Rate: globLeaseFig10Step.Rate}}
		c.Warmup, c.Duration = 10*time.Second, 40*time.Second
	}
	with := runSeries(t, "globlease-fig10", "GlobLease, 2 affiliates, 100% reads", 0, short)
	if s, ok := metric(with, MetricStabiliseS); !ok || s > 10 {
		t.Errorf("with affiliates: stabilised %v after %g s; want within 10 s", ok, s)
	}
	without := runSeries(t, "globlease-fig10", "GlobLease, no affiliates, 100% reads", 0, short)
	if s, ok := metric(without, MetricStabiliseS); ok {
		t.Errorf("without affiliates: stabilised after %g s; want never (the host is overloaded at 1,800 req/s)", s)
	}
}

// TestStabiliseSeconds checks the metric's definition on made-up series.
func TestStabiliseSeconds(t *testing.T) {
	series := func(p99 ...float64) *scenario.Result {
		res := &scenario.Result{SimSeconds: float64(len(p99)), RateSteps: []scenario.RateStep{{At: 5 * time.Second, Rate: 1}}}
		for i, v := range p99 {
			res.Seconds = append(res.Seconds, scenario.Second{T: i, Op: "read", Count: 10, P99: v})
		}
		return res
	}
	flat := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	pre := []float64{10, 10, 10, 10, 10}
	for _, tc := range []struct {
		name  string
		p99   []float64
		want  float64
		wantS bool
	}{
		{"recovers after 4 s", append(append(pre, 500, 400, 300, 200), flat(25, 40)...), 4, true},
		// One spike (a lease renewal) passes the rolling median.
		{"one-second spike", append(append(append(pre, 500, 300), flat(10, 40)...), append([]float64{600}, flat(15, 40)...)...), 2, true},
		// Three seconds over the limit is a disturbance.
		{"three-second disturbance", append(append(append(pre, 500, 300), flat(10, 40)...), append([]float64{600, 600, 600}, flat(15, 40)...)...), 15, true},
		{"settles too high", append(pre, flat(30, 1200)...), 0, false},
		{"never overloaded", append(pre, flat(30, 12)...), 0, true},
	} {
		got, ok := stabiliseSeconds(series(tc.p99...))
		if ok != tc.wantS || got != tc.want {
			t.Errorf("%s: stabiliseSeconds = %g, %v; want %g, %v", tc.name, got, ok, tc.want, tc.wantS)
		}
	}
	if _, ok := stabiliseSeconds(&scenario.Result{SimSeconds: 60}); ok {
		t.Errorf("stabiliseSeconds without a rate step: ok; want no value")
	}
}
