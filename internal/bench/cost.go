package bench

import (
	"sync"

	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// costMetric computes the cost metrics (isCost reports whether name is
// one); ops are the run's measured operations. A run whose world cannot be
// priced (a region claiming a provider without its prices) has no value.
func costMetric(res *scenario.Result, name string, ops int64) (v float64, ok, isCost bool) {
	switch name {
	case MetricCostPerMillion, MetricRequestCostPerMil, MetricEgressCostPerMil, MetricStorageCostPerMil, MetricVMCostPerMil,
		MetricRequestsPerOp, MetricEgressBytesPerOp:
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
	rates, err := ratesFor(res.World)
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
	case MetricStorageCostPerMil:
		usd = b.Storage
	case MetricVMCostPerMil:
		usd = b.VMs
	}
	return usd / float64(ops) * 1e6, true, true
}

// generatedWorlds are worlds experiments build in code (Config.WorldDef),
// by name, so a run's cost can be priced from its Result.World.
var generatedWorlds sync.Map // string → *topo.World

// ratesFor prices the world a run named: a generated one, or a preset.
func ratesFor(world string) (*cost.Rates, error) {
	var w *topo.World
	if g, ok := generatedWorlds.Load(world); ok {
		w = g.(*topo.World)
	} else {
		var err error
		if w, err = topo.Resolve(world); err != nil {
			return nil, err
		}
	}
	return cost.ForWorld(w, cost.MustBuiltin())
}
