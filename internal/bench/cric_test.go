package bench

import (
	"context"
	"testing"
)

// TestCricTable51Shape: the round trips the baselines' phases cost are
// what Table 5.1 says of them (Classic Paxos's slow path 2, pPaxos's 4;
// reads 1: one state or log read), their fast paths about its 1 and 2
// (a key first read still gets fast-round writes: vmpaxos rule L; 1.40
// and 2.80 without it), and CPaxos's writes take at least its table's 1
// and 2.
func TestCricTable51Shape(t *testing.T) {
	e, _ := Default().Get("cric-table5.1")
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"duration": "5s"}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(series, m string) float64 {
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
		{"Fast Paxos slow path", metricWriteRounds, 2, 2},
		{"Fast Paxos fast path", metricWriteRounds, 1, 1.1},
		{"pPaxos* slow path", metricWriteRounds, 4, 4},
		{"pPaxos* fast path", metricWriteRounds, 2, 2.2},
		{"Fast Paxos slow path", metricReadRounds, 1, 1},
		{"pPaxos* slow path", metricReadRounds, 1, 1},
		{"CPaxos fast path", metricWriteRounds, 1, 4},
		{"CPaxos slow path", metricWriteRounds, 2, 4},
	} {
		if v := get(tc.series, tc.metric); v < tc.lo || v > tc.hi {
			t.Errorf("%s %s = %.3f; want in [%g, %g]", tc.series, tc.metric, v, tc.lo, tc.hi)
		}
	}
}
