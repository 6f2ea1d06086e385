package bench

import (
	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// costMetric computes the cost metrics (isCost reports whether name is
// one); ops are the run's measured operations. A run whose world cannot be
// priced (a region claiming a provider without its prices) has no value.
func costMetric(res *scenario.Result, name string, ops int64) (v float64, ok, isCost bool) {
	switch name {
	case MetricCostPerMillion, MetricRequestCostPerMil, MetricEgressCostPerMil, MetricRequestsPerOp, MetricEgressBytesPerOp:
	default:
		return 0, false, false
	}
	u := res.Cost
	if u == nil || ops == 0 {
		return 0, false, true
	}
	switch name {
	case MetricRequestsPerOp:
		return float64(u.TotalRequests()) / float64(ops), true, true
	case MetricEgressBytesPerOp:
		return float64(u.InterRegionBytes()) / float64(ops), true, true
	}
	w, err := topo.Resolve(res.World)
	if err != nil {
		return 0, false, true
	}
	rates, err := cost.ForWorld(w, cost.MustBuiltin())
	if err != nil {
		return 0, false, true
	}
	b, err := rates.Bill(u)
	if err != nil {
		return 0, false, true
	}
	usd := b.Total
	switch name {
	case MetricRequestCostPerMil:
		usd = b.Requests
	case MetricEgressCostPerMil:
		usd = b.Egress
	}
	return usd / float64(ops) * 1e6, true, true
}
