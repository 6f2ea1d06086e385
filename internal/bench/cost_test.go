package bench

import (
	"math"
	"testing"

	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/scenario"
)

// TestCostMetrics: the cost metrics of a hand-made result on cric5, from
// the Azure catalogue's prices (Write $0.05 and Other $0.004 per 10,000).
func TestCostMetrics(t *testing.T) {
	a := cost.NewAccountant([]string{"east-us", "west-us", "japan-east", "west-europe", "southeast-asia"})
	for range 3 {
		a.StorageRequest(0, "put")
		a.StorageRequest(0, "put_meta")
	}
	a.Transfer(0, 1, 500)
	res := &scenario.Result{World: "cric5", Rows: []scenario.Row{{Region: "all", Op: "all", Count: 2}}, Cost: a.Usage(0)}
	for _, c := range []struct {
		name string
		want float64
	}{
		{MetricRequestsPerOp, 3},
		{MetricEgressBytesPerOp, 250},
		{MetricRequestCostPerMil, 3 * (0.05 + 0.004) / 10000 / 2 * 1e6},
		{MetricCostPerMillion, (3*(0.05+0.004)/10000 + 500*0.02/cost.GiB) / 2 * 1e6},
	} {
		got, ok := metric(res, c.name)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("metric(%s) = %v, %v; want %v", c.name, got, ok, c.want)
		}
		if !validMetric(c.name) {
			t.Errorf("validMetric(%s) = false", c.name)
		}
	}
}
