package plot

import (
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logFloorFallbackMs is where nonpositive latencies go on a log axis when no
// series has a positive value to clamp them to.
const logFloorFallbackMs = 1e-3

// CDF plots cumulative distributions. Each series is a quantile curve of
// latency samples: X is latency in ms, nondecreasing; Y is the cumulative
// fraction, nondecreasing within [0, 1]. With logX the x axis is logarithmic,
// from 1, 2 or 5 times a power of ten below the data to one above it (the
// data may run from 0.1 ms to seconds), and
// nonpositive X values are clamped to the smallest positive X of any series,
// so zero-latency samples pile up at the left edge instead of vanishing.
func CDF(path string, m Meta, series []Series, logX bool) error {
	const kind = "CDF"
	if err := validateSeries(kind, series); err != nil {
		return err
	}
	for i, s := range series {
		name := kind + " series " + seriesName(i, s)
		for j := range s.X {
			if s.Y[j] < 0 || s.Y[j] > 1 {
				return invalidf("%s: Y[%d] = %v; want a cumulative fraction in [0, 1]", name, j, s.Y[j])
			}
			if j > 0 && s.X[j] < s.X[j-1] {
				return invalidf("%s: X[%d] = %v < X[%d] = %v; want ascending latencies", name, j, s.X[j], j-1, s.X[j-1])
			}
			if j > 0 && s.Y[j] < s.Y[j-1] {
				return invalidf("%s: Y[%d] = %v < Y[%d] = %v; want a nondecreasing CDF", name, j, s.Y[j], j-1, s.Y[j-1])
			}
		}
	}

	drawn := series
	if logX {
		drawn = clampPositive(series)
	}
	f := newFigure(kind, m)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, s := range drawn {
		l, err := plotter.NewLine(xys(s))
		if err != nil {
			return invalidf("%s series %s: %v", kind, seriesName(i, s), err)
		}
		l.LineStyle = styleFor(i).line()
		f.p.Add(l)
		f.legend = append(f.legend, legendEntry{text: s.Label, thumbs: []gplot.Thumbnailer{l}})
		xmin, xmax = math.Min(xmin, s.X[0]), math.Max(xmax, s.X[len(s.X)-1])
	}
	f.p.Y.Min, f.p.Y.Max = 0, 1
	if logX {
		f.p.X.Scale = gplot.LogScale{}
		f.p.X.Tick.Marker = logTicks{}
		f.p.X.Min, f.p.X.Max = floor125(xmin), ceil125(xmax)
		if f.p.X.Max <= f.p.X.Min {
			f.p.X.Max = f.p.X.Min * 10
		}
	} else {
		f.p.X.Min = math.Min(0, xmin)
		if xmax <= f.p.X.Min {
			f.p.X.Max = f.p.X.Min + 1
		}
	}
	f.obstacles = func(dc draw.Canvas, r vg.Rectangle) bool {
		return polylinesHit(f.p, dc, drawn, r)
	}
	return f.save(path)
}

// clampPositive returns a copy of series with nonpositive X values raised to
// the smallest positive X in any series (logFloorFallbackMs if there is none).
func clampPositive(series []Series) []Series {
	floor := math.Inf(1)
	for _, s := range series {
		for _, x := range s.X {
			if x > 0 && x < floor {
				floor = x
			}
		}
	}
	if math.IsInf(floor, 1) {
		floor = logFloorFallbackMs
	}
	out := make([]Series, len(series))
	for i, s := range series {
		xs := make([]float64, len(s.X))
		for j, x := range s.X {
			xs[j] = math.Max(x, floor)
		}
		out[i] = Series{Label: s.Label, X: xs, Y: s.Y}
	}
	return out
}

func xys(s Series) plotter.XYs {
	pts := make(plotter.XYs, len(s.X))
	for i := range s.X {
		pts[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
	}
	return pts
}

// logTicks marks a log axis at every 1..9 times a power of ten, labeling
// (and so drawing grid lines at) the powers of ten, and also 2x and 5x when
// the axis spans at most four decades, where decade-only labels would leave
// too few reference points. It replaces plot.LogTicks, which starts its
// ticks a decade late when min is below 1 (int(math.Log10(0.1)) rounds
// toward zero).
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gplot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	dense := math.Log10(max/min) <= 4+1e-9
	var ticks []gplot.Tick
	for k := int(math.Floor(math.Log10(min))); k <= int(math.Ceil(math.Log10(max))); k++ {
		for i := 1; i <= 9; i++ {
			v := float64(i) * math.Pow10(k)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			if i == 1 || (dense && (i == 2 || i == 5)) {
				t.Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
