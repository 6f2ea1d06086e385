package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/bench/plot"
	"github.com/lightcone/lightcone/internal/scenario"
)

// metric computes a summary number of a result; ok is false when the run
// has no operations (or, for per-read metrics, no reads) of the kind.
func metric(res *scenario.Result, name string) (float64, bool) {
	if res == nil {
		return 0, false
	}
	name, region := inRegion(name)
	var reads, ops int64
	for _, r := range res.Rows {
		switch {
		case region != "":
		case r.Region == "all":
			ops = r.Count
			switch name {
			case MetricAbove:
				return 100 * r.Above, true
			case MetricP50:
				return r.P50, true
			case MetricP99:
				return r.P99, true
			}
		case r.Op == "read":
			reads += r.Count
		}
	}
	msgs := func(kinds ...string) float64 {
		n := 0
		for _, m := range res.Messages {
			if len(kinds) == 0 || slices.Contains(kinds, m.Kind) {
				n += m.Count
			}
		}
		return float64(n)
	}
	if fm, ok := funcMetrics[name]; ok {
		return fm.f(res, ops)
	}
	if cm, ok := counterMetrics[name]; ok {
		d := res.Counters[cm.den]
		if d == 0 {
			return 0, false
		}
		return cm.scale * res.Counters[cm.num] / d, true
	}
	if km, ok := kindMetrics[name]; ok {
		switch km.per {
		case perRead:
			if reads == 0 {
				return 0, false
			}
			return msgs(km.kinds...) / float64(reads), true
		case perNodeSecond, kbPerNodeSecond:
			if res.Nodes == 0 || res.MessageSeconds <= 0 {
				return 0, false
			}
			per := float64(res.Nodes) * res.MessageSeconds
			if km.per == perNodeSecond {
				return msgs(km.kinds...) / per, true
			}
			var b int64
			for _, m := range res.Messages {
				if slices.Contains(km.kinds, m.Kind) {
					b += m.Bytes
				}
			}
			return float64(b) / 1024 / per, true
		}
	}
	switch name {
	case MetricMsgsPerOp:
		if ops == 0 {
			return 0, false
		}
		return msgs() / float64(ops), true
	}
	if name == MetricStabiliseS {
		return stabiliseSeconds(res)
	}
	if v, ok, isCost := costMetric(res, name, ops); isCost {
		return v, ok
	}
	if ms, ok := aboveMs(name); ok {
		h := res.Histograms["all/all"]
		if h == nil || h.TotalCount() == 0 {
			return 0, false
		}
		return 100 * scenario.RowOf("all", "all", h, h, ms).Above, true
	}
	var kinds []string
	switch name {
	case MetricReadP50, MetricReadP90, MetricReadP95, MetricReadP99, MetricReadMean, MetricReadStd:
		kinds = []string{"read"}
	case MetricWriteP50, MetricWriteP90, MetricWriteP95, MetricWriteP99, MetricWriteMean, MetricWriteStd:
		kinds = []string{"update", "insert"}
	case MetricMean, MetricPerOpMean, MetricP50, MetricP99: // P50, P99: of one region (all regions' come from the "all" row)
		kinds = []string{"read", "update", "insert", "scan", "rmw"}
	default:
		return 0, false
	}
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for _, r := range res.Rows {
		if r.Region != "all" && (region == "" || r.Region == region) && slices.Contains(kinds, r.Op) {
			if src := res.Histograms[r.Region+"/"+r.Op]; src != nil {
				h.Merge(src)
			}
		}
	}
	if h.TotalCount() == 0 {
		return 0, false
	}
	switch {
	case name == MetricPerOpMean:
		return h.Mean() / 1e3 / float64(max(1, res.Batch)), true
	case strings.HasSuffix(name, "mean_ms"):
		return h.Mean() / 1e3, true
	case strings.HasSuffix(name, "std_ms"):
		return h.StdDev() / 1e3, true
	case strings.HasSuffix(name, "p90_ms"):
		return float64(h.ValueAtQuantile(90)) / 1e3, true
	case strings.HasSuffix(name, "p95_ms"):
		return float64(h.ValueAtQuantile(95)) / 1e3, true
	case strings.HasSuffix(name, "p99_ms"):
		return float64(h.ValueAtQuantile(99)) / 1e3, true
	}
	return float64(h.ValueAtQuantile(50)) / 1e3, true
}

// Write writes the results directory: results.json, rows.csv,
// seconds.csv, cdf.csv, report.md and the figures (PNG).
func (rep *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "results.json"), rep); err != nil {
		return err
	}
	if err := rep.writeCSVs(dir); err != nil {
		return err
	}
	figs, err := rep.writeFigures(dir)
	if err != nil {
		return err
	}
	if f, err := rep.writeCalibrationFigure(dir); err != nil {
		return err
	} else if f != "" {
		figs = append(figs, f)
	}
	return rep.writeMarkdown(filepath.Join(dir, "report.md"), figs)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func (rep *Report) writeCSVs(dir string) error {
	write := func(name string, header []string, rows [][]string) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := csv.NewWriter(f)
		_ = w.Write(header)
		_ = w.WriteAll(rows)
		w.Flush()
		return errorsJoin(w.Error(), f.Close())
	}
	var rows, secs, cdf [][]string
	for _, p := range rep.Points {
		if p.Result == nil {
			continue
		}
		x := f2(p.X)
		for _, r := range p.Result.Rows {
			rows = append(rows, []string{p.Runtime, p.Series, x, r.Region, r.Op, strconv.FormatInt(r.Count, 10),
				f2(r.P50), f2(r.P90), f2(r.P99), f2(r.P999), f2(r.Max), f2(r.Floor), f2(r.LightFloor), f2(100 * r.Above),
				f2(r.IntendedP50), f2(r.IntendedP99)})
		}
		for _, s := range p.Result.Seconds {
			secs = append(secs, []string{p.Runtime, p.Series, x, strconv.Itoa(s.T), s.Op, strconv.FormatInt(s.Count, 10), f2(s.P50), f2(s.P99)})
		}
		for _, key := range sortedKeys(p.Hists) {
			for _, pt := range cdfPoints(p.Hists[key]) {
				cdf = append(cdf, []string{p.Runtime, p.Series, x, key, f2(pt[0]), strconv.FormatFloat(pt[1], 'f', 5, 64)})
			}
		}
	}
	if err := write("rows.csv", []string{"runtime", "series", "x", "region", "op", "count", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "floor_ms", "light_floor_ms", "above_threshold_pct", "intended_p50_ms", "intended_p99_ms"}, rows); err != nil {
		return err
	}
	if err := write("seconds.csv", []string{"runtime", "series", "x", "t_s", "op", "count", "p50_ms", "p99_ms"}, secs); err != nil {
		return err
	}
	if err := write("cdf.csv", []string{"runtime", "series", "x", "key", "latency_ms", "fraction"}, cdf); err != nil {
		return err
	}
	if len(rep.Calibration) == 0 {
		return nil
	}
	var cal [][]string
	for _, p := range rep.Calibration {
		cal = append(cal, []string{p.From, p.To, f2(p.BaseMs), f2(p.ConfiguredMs), strconv.FormatInt(p.Count, 10), f2(p.MeanMs), f2(p.MinMs), f2(p.MaxMs), f2(p.StdMs), strconv.FormatBool(p.OK)})
	}
	return write("calibration.csv", []string{"from", "to", "base_rtt_ms", "configured_mean_rtt_ms", "pings", "mean_ms", "min_ms", "max_ms", "std_ms", "ok"}, cal)
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cdfPoints samples a histogram's CDF: (latency ms, fraction) pairs.
func cdfPoints(h *hdrhistogram.Histogram) [][2]float64 {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var out [][2]float64
	for _, q := range cdfQuantiles {
		out = append(out, [2]float64{float64(h.ValueAtQuantile(q)) / 1e3, q / 100})
	}
	return out
}

// cdfQuantiles are dense where tails matter.
var cdfQuantiles = func() []float64 {
	var qs []float64
	for q := 1.0; q < 90; q++ {
		qs = append(qs, q)
	}
	for q := 90.0; q < 99; q += 0.25 {
		qs = append(qs, q)
	}
	for q := 99.0; q < 99.9; q += 0.05 {
		qs = append(qs, q)
	}
	return append(qs, 99.9, 99.95, 99.99, 99.999, 100)
}()

// caption names experiment, world, workload and seed, as every figure must.
func (rep *Report) caption(extra string) string {
	var world, wl string
	for _, p := range rep.Points {
		if p.Result != nil {
			world, wl = p.Result.World, p.Result.Workload
			if world == "" {
				world = "custom"
			}
			break
		}
	}
	if rep.Experiment.Workload != "" {
		wl = rep.Experiment.Workload
	}
	if world == "" {
		world = rep.Experiment.Base.World
	}
	c := fmt.Sprintf("Experiment %s; world %s; workload %s; seed %d; runtime %s.", rep.Name, world, wl, rep.Seed, rep.Runtime)
	if r := rep.Experiment.Real; r != nil && (rep.Runtime == "real" || rep.Runtime == "both") && !rep.Experiment.Calibrate {
		c += fmt.Sprintf(" Real runs at reduced scale: one node per region, %d clients per region.", r.ClientsPerRegion)
	}
	if extra != "" {
		c += " " + extra
	}
	if rep.Incomplete {
		c += " INCOMPLETE: the run was interrupted."
	}
	return c
}

func (rep *Report) seriesName(p Point) string {
	name := p.Series
	if rep.Runtime == "both" {
		name += " (" + p.Runtime + ")"
	}
	return name
}

func (rep *Report) writeFigures(dir string) ([]string, error) {
	e := rep.Experiment
	var figs []string
	add := func(name string, err error) error {
		if err != nil {
			return fmt.Errorf("bench: figure %s: %w", name, err)
		}
		figs = append(figs, name)
		return nil
	}
	for _, fig := range e.Figures {
		switch fig {
		case FigCDF:
			// One CDF per sweep value (usually one).
			for _, x := range uniqueXs(rep.Points) {
				var series []plot.Series
				for _, p := range rep.Points {
					if p.X != x || p.Hists["all/all"] == nil {
						continue
					}
					s := plot.Series{Label: rep.seriesName(p)}
					for _, pt := range cdfPoints(p.Hists["all/all"]) {
						s.X = append(s.X, math.Max(pt[0], 0.01))
						s.Y = append(s.Y, pt[1])
					}
					series = append(series, s)
				}
				if len(series) == 0 {
					continue
				}
				name := "cdf.png"
				title := "Latency CDF, all operations"
				if e.Sweep != nil {
					name = fmt.Sprintf("cdf-x%g.png", x)
					title += fmt.Sprintf(" (%s = %g)", e.Sweep.Param, x)
				}
				if err := add(name, plot.CDF(filepath.Join(dir, name), plot.Meta{Title: title, Caption: rep.caption(""),
					XLabel: "latency (ms, log scale)", YLabel: "fraction of requests"}, series, true)); err != nil {
					return figs, err
				}
			}
		case FigRegionBars:
			x := uniqueXs(rep.Points)[0]
			var regions []string
			for _, p := range rep.Points {
				if p.Result != nil && p.X == x {
					for _, r := range p.Result.Rows {
						if r.Region != "all" && !contains(regions, r.Region) {
							regions = append(regions, r.Region)
						}
					}
				}
			}
			if len(regions) == 0 {
				continue
			}
			var series []plot.Series
			for _, p := range rep.Points {
				if p.Result == nil || p.X != x {
					continue
				}
				rd := plot.Series{Label: rep.seriesName(p) + " read p50"}
				wr := plot.Series{Label: rep.seriesName(p) + " write p50"}
				for _, reg := range regions {
					for _, k := range []struct {
						s   *plot.Series
						ops []string
					}{{&rd, []string{"read"}}, {&wr, []string{"update", "insert"}}} {
						h := hdrhistogram.New(1, 3_600_000_000, 3)
						for _, op := range k.ops {
							if v := p.Hists[reg+"/"+op]; v != nil {
								h.Merge(v)
							}
						}
						k.s.Y = append(k.s.Y, float64(h.ValueAtQuantile(50))/1e3)
					}
				}
				series = append(series, rd, wr)
			}
			if err := add("region-bars.png", plot.Bars(filepath.Join(dir, "region-bars.png"), plot.Meta{Title: "Median latency by client region",
				Caption: rep.caption(""), YLabel: "latency (ms)"}, regions, series)); err != nil {
				return figs, err
			}
		case FigSweep:
			if e.Sweep == nil {
				continue
			}
			for _, m := range e.Sweep.Metrics {
				var series []plot.Series
				byName := map[string]*plot.Series{}
				var order []string
				for _, p := range rep.Points {
					v, ok := metric(p.Result, m)
					if !ok {
						continue
					}
					name := rep.seriesName(p)
					if byName[name] == nil {
						byName[name] = &plot.Series{Label: name}
						order = append(order, name)
					}
					byName[name].X = append(byName[name].X, p.X)
					byName[name].Y = append(byName[name].Y, v)
				}
				for _, n := range order {
					series = append(series, *byName[n])
				}
				if len(series) == 0 {
					continue
				}
				name := "sweep-" + m + ".png"
				if err := add(name, plot.Lines(filepath.Join(dir, name), plot.Meta{Title: metricTitle(m) + " vs " + e.Sweep.Param,
					Caption: rep.caption(""), XLabel: e.Sweep.Param, YLabel: metricTitle(m)}, series)); err != nil {
					return figs, err
				}
			}
		case FigTimeSeries:
			var series []plot.Series
			for _, p := range rep.Points {
				if p.Result == nil || p.X != uniqueXs(rep.Points)[0] {
					continue
				}
				s := plot.Series{Label: rep.seriesName(p) + " p99"}
				agg := map[int]float64{}
				for _, sec := range p.Result.Seconds {
					agg[sec.T] = math.Max(agg[sec.T], sec.P99)
				}
				for _, t := range sortedInts(agg) {
					s.X = append(s.X, float64(t))
					s.Y = append(s.Y, agg[t])
				}
				if len(s.X) > 0 {
					series = append(series, s)
				}
			}
			if len(series) == 0 {
				continue
			}
			if err := add("timeseries.png", plot.TimeSeries(filepath.Join(dir, "timeseries.png"), plot.Meta{Title: "p99 latency per second (worst operation kind)",
				Caption: rep.caption(""), XLabel: "time (s)", YLabel: "p99 latency (ms)"}, series, nil)); err != nil {
				return figs, err
			}
		}
	}
	return figs, nil
}

func sortedInts(m map[int]float64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func uniqueXs(ps []Point) []float64 {
	var xs []float64
	for _, p := range ps {
		if !containsF(xs, p.X) {
			xs = append(xs, p.X)
		}
	}
	if len(xs) == 0 {
		return []float64{0}
	}
	return xs
}

func containsF(xs []float64, x float64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func metricTitle(m string) string {
	if base, region := inRegion(m); region != "" {
		return metricTitle(base) + ", " + region + " clients"
	}
	switch m {
	case MetricReadP90:
		return "read p90 (ms)"
	case MetricReadP95:
		return "read p95 (ms)"
	case MetricWriteP90:
		return "write p90 (ms)"
	case MetricWriteP95:
		return "write p95 (ms)"
	case MetricPerOpMean:
		return "mean per batched operation (ms)"
	case MetricAbove:
		return "share above threshold (%)"
	case MetricP50:
		return "p50 latency (ms)"
	case MetricP99:
		return "p99 latency (ms)"
	case MetricReadP50:
		return "read p50 (ms)"
	case MetricReadP99:
		return "read p99 (ms)"
	case MetricWriteP50:
		return "write p50 (ms)"
	case MetricWriteP99:
		return "write p99 (ms)"
	case MetricMean:
		return "mean latency (ms)"
	case MetricReadMean:
		return "read mean (ms)"
	case MetricWriteMean:
		return "write mean (ms)"
	case MetricReadStd:
		return "read std (ms)"
	case MetricWriteStd:
		return "write std (ms)"
	case MetricStabiliseS:
		return "time to stabilise (s)"
	case MetricMsgsPerOp:
		return "messages per operation"
	case MetricCostPerMillion:
		return "cost (USD per million operations)"
	case MetricRequestCostPerMil:
		return "storage request cost (USD per million operations)"
	case MetricEgressCostPerMil:
		return "egress cost (USD per million operations)"
	case MetricRequestsPerOp:
		return "storage requests per operation"
	case MetricEgressBytesPerOp:
		return "bytes between regions per operation"
	}
	if km, ok := kindMetrics[m]; ok {
		return km.title
	}
	if cm, ok := counterMetrics[m]; ok {
		return cm.title
	}
	if fm, ok := funcMetrics[m]; ok {
		return fm.title
	}
	if ms, ok := aboveMs(m); ok {
		return fmt.Sprintf("share above %g ms (%%)", ms)
	}
	return m
}

func (rep *Report) writeMarkdown(path string, figs []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return rep.WriteMarkdown(f, figs)
}

// WriteMarkdown writes the report: the claim, our numbers beside the
// seed's and the floor, the checker's verdicts, the figures.
func (rep *Report) WriteMarkdown(w io.Writer, figs []string) error {
	e := rep.Experiment
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", e.Title)
	if rep.Incomplete {
		b.WriteString("> **INCOMPLETE**: the run was interrupted; only the points below were measured.\n\n")
	}
	fmt.Fprintf(&b, "`lightcone bench run %s --runtime %s --seed %d`", e.Name, rep.Runtime, rep.Seed)
	for _, k := range sortedKeys(rep.Overrides) {
		fmt.Fprintf(&b, " `--set %s=%s`", k, rep.Overrides[k])
	}
	fmt.Fprintf(&b, " — %s.\n\n%s\n\n", rep.Elapsed, e.Description)
	fmt.Fprintf(&b, "**Reference**: %s\n\n", e.Reference.Source)
	for _, c := range e.Reference.Claims {
		fmt.Fprintf(&b, "> %s\n\n", c)
	}
	if e.Calibrate {
		b.WriteString("## Measured round trips\n\n")
		b.WriteString("Each link pinged every 100 ms through the transport, WAN emulation included; configured = base delay plus mean jitter, both ways. A pair passes within 10% + 3 ms.\n\n")
		b.WriteString("| pair | base RTT | configured mean | pings | mean | min | max | std dev | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, p := range rep.Calibration {
			v := "ok"
			if !p.OK {
				v = "**off**"
			}
			fmt.Fprintf(&b, "| %s–%s | %.1f | %.1f | %d | %.1f | %.1f | %.1f | %.1f | %s |\n", p.From, p.To, p.BaseMs, p.ConfiguredMs, p.Count, p.MeanMs, p.MinMs, p.MaxMs, p.StdMs, v)
		}
		if len(e.Reference.Numbers) == 0 && len(e.Reference.Claims) > 0 {
			b.WriteString("\nThe seed's own check is quoted above.\n")
		}
	}
	if len(rep.Points) > 0 {
		rep.writeResults(&b)
	}
	if len(figs) > 0 {
		b.WriteString("\n## Figures\n\n")
		for _, f := range figs {
			fmt.Fprintf(&b, "![%s](%s)\n\n", f, f)
		}
	}
	fmt.Fprintf(&b, "Raw data: `results.json` and the CSV files beside it. %s\n", rep.caption(""))
	_, err := io.WriteString(w, b.String())
	return err
}

func (rep *Report) writeResults(b *strings.Builder) {
	e := rep.Experiment
	// Summary: one line per point.
	b.WriteString("## Results\n\n")
	b.WriteString("| runtime | series |")
	if e.Sweep != nil {
		fmt.Fprintf(b, " %s |", e.Sweep.Param)
	}
	b.WriteString(" ops | p50 ms | p99 ms | p99.9 ms | > threshold | seed's number | check |\n|---|---|")
	if e.Sweep != nil {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|---:|---:|---|---|\n")
	for _, p := range rep.Points {
		fmt.Fprintf(b, "| %s | %s |", p.Runtime, p.Series)
		if e.Sweep != nil {
			fmt.Fprintf(b, " %g |", p.X)
		}
		if p.Result == nil {
			fmt.Fprintf(b, " – | – | – | – | – | – | error: %s |\n", p.Error)
			continue
		}
		var all scenario.Row
		for _, r := range p.Result.Rows {
			if r.Region == "all" {
				all = r
			}
		}
		ref := "–"
		for _, n := range e.refs(p.Series, p.X, MetricAbove) {
			ref = fmt.Sprintf("%g%% (%s)", n.Value, n.Note)
		}
		check := "not recorded"
		if p.Result.Check != nil {
			check = p.Result.Check.Model + ": " + p.Result.Check.Verdict
		}
		if p.Error != "" {
			check += " (" + p.Error + ")"
		}
		fmt.Fprintf(b, " %d | %.1f | %.1f | %.1f | %.2f%% (> %g ms) | %s | %s |\n", p.Result.Ops, all.P50, all.P99, all.P999, 100*all.Above, p.Result.ThresholdMs, ref, check)
	}
	rep.writeMetrics(b)
	// Per region, for the first sweep value.
	x0 := uniqueXs(rep.Points)[0]
	b.WriteString("\n## By client region and operation\n\n")
	if e.Sweep != nil {
		fmt.Fprintf(b, "At %s = %g. ", e.Sweep.Param, x0)
	}
	b.WriteString("Floor: the network time the operation cannot avoid (the round trip to the nearest replicas its level needs); light: the same replicas at the speed of light in fibre.\n\n")
	b.WriteString("| runtime | series | region | op | count | p50 | p90 | p99 | p99.9 | max | floor | light |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range rep.Points {
		if p.Result == nil || p.X != x0 {
			continue
		}
		for _, r := range p.Result.Rows {
			if r.Region == "all" {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
				p.Runtime, p.Series, r.Region, r.Op, r.Count, r.P50, r.P90, r.P99, r.P999, r.Max, r.Floor, r.LightFloor)
		}
	}
}

// refs are the seed's numbers for a series at sweep value x.
func (e *Experiment) refs(series string, x float64, metric string) []RefNumber {
	var out []RefNumber
	for _, n := range e.Reference.Numbers {
		if n.Metric == metric && (n.Series == series || n.Series == "") && (n.X == 0 || n.X == x) {
			out = append(out, n)
		}
	}
	return out
}

// tabulated are the metrics the report tabulates per point: the
// experiment's, then its sweep's.
func (e *Experiment) tabulated() []string {
	out := append([]string{}, e.Metrics...)
	if e.Sweep != nil {
		for _, m := range e.Sweep.Metrics {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// writeMetrics writes the table of the experiment's metrics per point,
// each with the seed's numbers for it beside ours, and the notes saying
// where those numbers come from.
func (rep *Report) writeMetrics(b *strings.Builder) {
	e := rep.Experiment
	ms := e.tabulated()
	if len(ms) == 0 {
		return
	}
	b.WriteString("\n## Metrics\n\n")
	var warmups []float64
	for _, p := range rep.Points {
		if p.Result != nil && p.Result.WarmupSeconds > 0 && !slices.Contains(warmups, p.Result.WarmupSeconds) {
			warmups = append(warmups, p.Result.WarmupSeconds)
		}
	}
	switch len(warmups) {
	case 0:
	case 1:
		fmt.Fprintf(b, "Measured after a warm-up of %gs (operations started and messages sent earlier are not counted). ", warmups[0])
	default:
		fmt.Fprintf(b, "Measured after a warm-up of %g–%gs, depending on the point (operations started and messages sent earlier are not counted). ", slices.Min(warmups), slices.Max(warmups))
	}
	b.WriteString("In brackets: reference numbers for the point, each with a note below saying where it comes from (the seed's text, an inference from it, or a model).\n\n| runtime | series |")
	if e.Sweep != nil {
		fmt.Fprintf(b, " %s |", e.Sweep.Param)
	}
	for _, m := range ms {
		fmt.Fprintf(b, " %s |", metricTitle(m))
	}
	b.WriteString("\n|---|---|")
	if e.Sweep != nil {
		b.WriteString("---:|")
	}
	b.WriteString(strings.Repeat("---:|", len(ms)) + "\n")
	var notes []string
	for _, p := range rep.Points {
		fmt.Fprintf(b, "| %s | %s |", p.Runtime, p.Series)
		if e.Sweep != nil {
			fmt.Fprintf(b, " %g |", p.X)
		}
		for _, m := range ms {
			cell := "–"
			if v, ok := metric(p.Result, m); ok {
				cell = fmtMetric(v)
			}
			for _, n := range e.refs(p.Series, p.X, m) {
				note := n.Note
				if i := slices.Index(notes, note); i >= 0 {
					cell += fmt.Sprintf(" [%s, n%d]", fmtMetric(n.Value), i+1)
				} else {
					notes = append(notes, note)
					cell += fmt.Sprintf(" [%s, n%d]", fmtMetric(n.Value), len(notes))
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for i, n := range notes {
			fmt.Fprintf(b, "- n%d: %s\n", i+1, n)
		}
	}
}

func fmtMetric(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 10:
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// Summary is the machine-readable digest `bench run --json` prints.
type Summary struct {
	Experiment string         `json:"experiment"`
	Runtime    string         `json:"runtime"`
	Seed       uint64         `json:"seed"`
	Incomplete bool           `json:"incomplete"`
	Reference  Reference      `json:"reference"`
	Points     []SummaryPoint `json:"points"`
}

// SummaryPoint is one run's rows (per region and operation, and all/all).
type SummaryPoint struct {
	Series  string         `json:"series"`
	X       float64        `json:"x,omitempty"`
	Runtime string         `json:"runtime"`
	Rows    []scenario.Row `json:"rows"`
	Check   string         `json:"check,omitempty"`
	Error   string         `json:"error,omitempty"`
	// Metrics are the experiment's tabulated metrics for this point.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Summary digests the report.
func (rep *Report) Summary() Summary {
	s := Summary{Experiment: rep.Name, Runtime: rep.Runtime, Seed: rep.Seed, Incomplete: rep.Incomplete, Reference: rep.Experiment.Reference}
	for _, p := range rep.Points {
		sp := SummaryPoint{Series: p.Series, X: p.X, Runtime: p.Runtime, Error: p.Error}
		if p.Result != nil {
			sp.Rows = p.Result.Rows
			if c := p.Result.Check; c != nil {
				sp.Check = c.Model + ": " + c.Verdict
			}
			for _, m := range rep.Experiment.tabulated() {
				if v, ok := metric(p.Result, m); ok {
					if sp.Metrics == nil {
						sp.Metrics = map[string]float64{}
					}
					sp.Metrics[m] = v
				}
			}
		}
		s.Points = append(s.Points, sp)
	}
	return s
}
