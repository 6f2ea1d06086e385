// Package bench is Lightcone's experiment harness: every seed claim is an
// Experiment declared once in the catalog, run by `lightcone bench run` in
// the simulator (virtual time) or on a real local cluster, and turned into a
// results directory (raw CSV and JSON, a Markdown report with the seed's
// published numbers beside ours and the floor, PNG figures).
package bench

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// Experiment is one reproducible claim.
type Experiment struct {
	Name        string // CLI name: globlease-fig4, quorum-meteor-controlled, ...
	Title       string
	Description string
	// Workload describes the workload in figure captions.
	Workload string
	// Reference is what the seed published, shown beside our numbers.
	Reference Reference
	// Base is the simulation every series and sweep point starts from.
	Base scenario.Config
	// Series are configurations compared in one run (lines of a figure).
	Series []Series
	// Requires are protocols the experiment cannot run without (one still
	// being built): Validate names the missing one instead of failing on
	// the first series that uses it.
	Requires []string
	// Sweep, if set, runs every series at each value of one parameter.
	Sweep *Sweep
	// Real, if set, is the reduced scale at which --runtime real runs the
	// experiment on a local multi-process cluster with WAN emulation.
	Real *RealScale
	// Calibrate makes this a calibration of the real runtime's WAN
	// emulation instead of a workload run: it measures every region pair's
	// round trip and compares it with the world's (real runtime only).
	Calibrate bool
	// Metrics are summary numbers the report tabulates for every point,
	// with the seed's numbers beside them (Reference.Numbers).
	Metrics []string
	// Figures lists what the report draws; default: a latency CDF per
	// series and per-region bars, and sweep lines when there is a sweep.
	Figures []Figure
}

// Reference is a seed's published result.
type Reference struct {
	Source string   // e.g. "GlobLease paper (seed 003) §V.B, Fig. 4"
	Claims []string // what the seed says, in its words or close to them
	// Numbers are published values comparable to a metric of ours, by
	// series label and metric name.
	Numbers []RefNumber
}

// RefNumber is one published value.
type RefNumber struct {
	Series string  // a Series label ("" for all)
	X      float64 // the sweep value it is for (0: every value)
	Metric string  // a Metric name (MetricAbove, ...)
	Value  float64 // in the metric's unit
	Note   string
}

// Series is one configuration of an experiment.
type Series struct {
	Label string
	Apply func(c *scenario.Config)
}

// Sweep varies one parameter.
type Sweep struct {
	Param  string // e.g. "one-way delay (ms)"
	Values []float64
	Apply  func(c *scenario.Config, v float64)
	// Metrics are plotted against the parameter, one figure each.
	Metrics []string
}

// RealScale is an experiment's size on the real runtime.
type RealScale struct {
	ClientsPerRegion int
	RatePerClient    float64 // 0: closed loop
	Duration         time.Duration
	Records          int
	// SweepValues, if set, are the sweep points run for real (a cluster is
	// started per point); default: all of them.
	SweepValues []float64
}

// Figure kinds.
type Figure string

const (
	FigCDF        Figure = "cdf"         // latency CDF of all operations, one line per series
	FigRegionBars Figure = "region-bars" // per region: p50/p99 and floor, per series
	FigSweep      Figure = "sweep"       // each sweep metric against the parameter
	FigTimeSeries Figure = "timeseries"  // p99 per second, one line per series
)

// Metric names a summary number computed from a run.
const (
	MetricAbove     = "above_threshold" // share of all operations above the threshold, %
	MetricP50       = "p50_ms"          // all operations
	MetricP99       = "p99_ms"
	MetricReadP50   = "read_p50_ms"
	MetricReadP99   = "read_p99_ms"
	MetricWriteP50  = "write_p50_ms"
	MetricWriteP99  = "write_p99_ms"
	MetricReadP90   = "read_p90_ms"
	MetricReadP95   = "read_p95_ms"
	MetricWriteP90  = "write_p90_ms"
	MetricWriteP95  = "write_p95_ms"
	MetricMean      = "mean_ms" // all operations
	MetricReadMean  = "read_mean_ms"
	MetricWriteMean = "write_mean_ms"
	MetricReadStd   = "read_std_ms" // standard deviation
	MetricWriteStd  = "write_std_ms"
	// MetricMsgsPerOp is every message between nodes per measured operation.
	MetricMsgsPerOp = "msgs_per_op"
	// MetricStabiliseS is the time to stabilise after the run's first rate
	// step, in seconds (stabiliseSeconds): none when the read p99 did not
	// settle below 100 ms.
	MetricStabiliseS = "stabilise_s"
	// MetricPerOpMean is the mean of all measured operations divided by the
	// run's batch (scenario.Config.Batch): the time per workload operation
	// when each hold runs a batch of them.
	MetricPerOpMean = "per_op_mean_ms"
	// Cost metrics (internal/cost; docs/cost.md), over the measured
	// window (Result.Cost), per measured operation. MetricCostPerMillion
	// prices the run with the built-in catalogues for the run's world:
	// storage requests, stored bytes, egress and declared VMs, in USD per
	// million operations.
	MetricCostPerMillion    = "cost_usd_per_million_ops"
	MetricRequestsPerOp     = "requests_per_op"     // storage-service requests
	MetricEgressBytesPerOp  = "egress_bytes_per_op" // bytes sent between regions (storage and messages)
	MetricRequestCostPerMil = "request_cost_usd_per_million_ops"
	MetricEgressCostPerMil  = "egress_cost_usd_per_million_ops"
	MetricStorageCostPerMil = "storage_cost_usd_per_million_ops" // stored bytes over the window
	MetricVMCostPerMil      = "vm_cost_usd_per_million_ops"      // declared VMs (Config.VMs)
)

// MetricIn names metric m restricted to the clients of one region
// ("read_mean_ms@dc1"): seed 002 reports its loader-side and remote
// clients apart. Only the latency metrics (p50_ms, p99_ms, read_*,
// write_*, mean_ms, per_op_mean_ms) have a regional form.
func MetricIn(region, m string) string { return m + "@" + region }

// inRegion splits a MetricIn name.
func inRegion(name string) (m, region string) {
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}

// regional lists the metrics MetricIn accepts.
var regional = []string{MetricP50, MetricP99, MetricReadP50, MetricReadP90, MetricReadP95, MetricReadP99, MetricWriteP50, MetricWriteP90, MetricWriteP95,
	MetricWriteP99, MetricMean, MetricReadMean, MetricWriteMean, MetricReadStd, MetricWriteStd, MetricPerOpMean}

// MetricAboveMs names the share of all operations slower than ms, in %
// (a fixed threshold, unlike MetricAbove's per-run one).
func MetricAboveMs(ms float64) string { return fmt.Sprintf("above_%gms", ms) }

// aboveMs parses a MetricAboveMs name.
func aboveMs(name string) (float64, bool) {
	v, ok := strings.CutPrefix(name, "above_")
	if !ok {
		return 0, false
	}
	v, ok = strings.CutSuffix(v, "ms")
	if !ok {
		return 0, false
	}
	ms, err := strconv.ParseFloat(v, 64)
	return ms, err == nil && ms > 0
}

// Metrics lists every metric name (and the pattern of MetricAboveMs).
func Metrics() []string {
	out := []string{MetricAbove, MetricP50, MetricP99, MetricReadP50, MetricReadP90, MetricReadP95, MetricReadP99,
		MetricWriteP50, MetricWriteP90, MetricWriteP95, MetricWriteP99,
		MetricMean, MetricReadMean, MetricWriteMean, MetricReadStd, MetricWriteStd, MetricPerOpMean, MetricMsgsPerOp, MetricStabiliseS,
		MetricCostPerMillion, MetricRequestsPerOp, MetricEgressBytesPerOp, MetricRequestCostPerMil, MetricEgressCostPerMil,
		MetricStorageCostPerMil, MetricVMCostPerMil}
	var kinds []string
	for name := range kindMetrics {
		kinds = append(kinds, name)
	}
	for name := range counterMetrics {
		kinds = append(kinds, name)
	}
	for name := range funcMetrics {
		kinds = append(kinds, name)
	}
	slices.Sort(kinds)
	return append(append(out, kinds...), "above_<ms>ms", "<latency metric>@<region>")
}

func validMetric(name string) bool {
	if m, region := inRegion(name); region != "" {
		return slices.Contains(regional, m)
	}
	_, ok := aboveMs(name)
	return ok || slices.Contains(Metrics(), name)
}

// Catalog is a set of experiments by name.
type Catalog struct {
	byName map[string]*Experiment
}

// NewCatalog checks and indexes experiments.
func NewCatalog(exps ...*Experiment) (*Catalog, error) {
	c := &Catalog{byName: map[string]*Experiment{}}
	for _, e := range exps {
		if e.Name == "" || strings.ContainsAny(e.Name, " /") {
			return nil, fmt.Errorf("bench: experiment name %q: must be non-empty, without spaces or slashes", e.Name)
		}
		if _, dup := c.byName[e.Name]; dup {
			return nil, fmt.Errorf("bench: experiment %q declared twice", e.Name)
		}
		if len(e.Series) == 0 {
			e.Series = []Series{{Label: "default", Apply: func(*scenario.Config) {}}}
		}
		names := append([]string{}, e.Metrics...)
		for _, r := range e.Reference.Numbers {
			names = append(names, r.Metric)
		}
		if e.Sweep != nil {
			names = append(names, e.Sweep.Metrics...)
		}
		for _, m := range names {
			if !validMetric(m) {
				return nil, fmt.Errorf("bench: %s: metric %q unknown (valid: %s)", e.Name, m, strings.Join(Metrics(), ", "))
			}
		}
		if len(e.Figures) == 0 {
			e.Figures = []Figure{FigCDF, FigRegionBars}
			if e.Sweep != nil {
				e.Figures = append(e.Figures, FigSweep)
			}
		}
		c.byName[e.Name] = e
	}
	return c, nil
}

// Names lists the experiments, sorted.
func (c *Catalog) Names() []string {
	out := make([]string, 0, len(c.byName))
	for n := range c.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns an experiment, or an error listing the valid names.
func (c *Catalog) Get(name string) (*Experiment, error) {
	if e, ok := c.byName[name]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("bench: unknown experiment %q (valid: %s)", name, strings.Join(c.Names(), ", "))
}

// A kindMetric counts messages of some kinds: per measured read, per node
// per simulated second, or their encoded kilobytes per node per second.
// Experiments define them beside the protocol whose messages they count
// (defineKindMetric), so the report names no protocol.
type kindMetric struct {
	title string
	per   kindPer
	kinds []string
}

type kindPer uint8

const (
	perRead kindPer = iota
	perNodeSecond
	kbPerNodeSecond
)

var kindMetrics = map[string]kindMetric{}

// defineKindMetric defines metric name, returning name.
func defineKindMetric(name, title string, per kindPer, kinds ...string) string {
	if _, dup := kindMetrics[name]; dup {
		panic("bench: metric " + name + " defined twice")
	}
	kindMetrics[name] = kindMetric{title: title, per: per, kinds: kinds}
	return name
}

// A counterMetric is a ratio of two of the protocol's counters summed over
// the run's nodes (scenario.Result.Counters), times scale: round trips
// per write, bytes moved per byte written. Experiments define them beside
// the protocols whose counters they read (defineCounterMetric).
type counterMetric struct {
	title    string
	num, den string
	scale    float64
}

var counterMetrics = map[string]counterMetric{}

// defineCounterMetric defines metric name = scale·num/den, returning name.
func defineCounterMetric(name, title, num, den string, scale float64) string {
	if _, dup := counterMetrics[name]; dup {
		panic("bench: metric " + name + " defined twice")
	}
	counterMetrics[name] = counterMetric{title: title, num: num, den: den, scale: scale}
	return name
}

// A funcMetric is computed from a run by a function an experiment defines
// beside the model it encodes (defineFuncMetric): a tail gap per client
// region, a cost the harness does not measure but models from counters.
type funcMetric struct {
	title string
	f     func(res *scenario.Result, ops int64) (float64, bool)
}

var funcMetrics = map[string]funcMetric{}

// defineFuncMetric defines metric name = f(run, measured operations),
// returning name.
func defineFuncMetric(name, title string, f func(res *scenario.Result, ops int64) (float64, bool)) string {
	if _, dup := funcMetrics[name]; dup {
		panic("bench: metric " + name + " defined twice")
	}
	funcMetrics[name] = funcMetric{title: title, f: f}
	return name
}
