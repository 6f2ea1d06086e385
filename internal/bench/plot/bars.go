package plot

import (
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// groupFraction is the share of each category's slot taken by its bars; the
// rest separates neighbouring groups.
const groupFraction = 0.8

// Bars draws grouped bars: one group per category (a region, say), one bar
// per series within each group (p50, p99, floor; or sim vs real), in series
// order. Each series gives its values in Y, one per category; X is ignored.
// Bars start at zero, so negative values draw downward.
func Bars(path string, m Meta, categories []string, series []Series) error {
	const kind = "Bars"
	if len(categories) == 0 {
		return invalidf("%s: no categories", kind)
	}
	if len(series) == 0 {
		return invalidf("%s: no series", kind)
	}
	ymin, ymax := 0.0, 0.0
	for i, s := range series {
		name := kind + " series " + seriesName(i, s)
		if len(s.Y) != len(categories) {
			return invalidf("%s: len(Y) = %d; want one value per category (%d)", name, len(s.Y), len(categories))
		}
		if err := checkFinite(name, "Y", s.Y); err != nil {
			return err
		}
		for _, y := range s.Y {
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}

	f := newFigure(kind, m)
	f.thumbW = vg.Points(14)
	f.p.NominalX(categories...)
	// Vertical grid lines would cut through the groups; keep the horizontal.
	f.grid.Vertical.Color = nil
	f.p.X.Padding, f.p.Y.Padding = 0, 0
	charts := make([]*plotter.BarChart, len(series))
	for i, s := range series {
		// The width is a placeholder until the data area is known (beforeDraw).
		b, err := plotter.NewBarChart(plotter.Values(s.Y), 1)
		if err != nil {
			return invalidf("%s series %s: %v", kind, seriesName(i, s), err)
		}
		b.Color = barPalette[i%len(barPalette)]
		b.LineStyle = draw.LineStyle{Color: colorAxis, Width: vg.Points(0.6)}
		charts[i] = b
		f.legend = append(f.legend, legendEntry{text: s.Label, thumbs: []gplot.Thumbnailer{b}})
	}
	f.p.X.Min, f.p.X.Max = -0.5, float64(len(categories))-0.5
	// Headroom above the tallest bar so it does not touch the frame.
	f.p.Y.Min = ymin - 0.05*(ymax-ymin)*b2f(ymin < 0)
	f.p.Y.Max = ymax + 0.05*(ymax-ymin)
	if f.p.Y.Max == f.p.Y.Min {
		f.p.Y.Max = f.p.Y.Min + 1
	}

	// barWidth is the width of one bar in dc: groupFraction of a category's
	// slot shared by the series.
	barWidth := func(dc draw.Canvas) vg.Length {
		return dc.Size().X / vg.Length(len(categories)) * groupFraction / vg.Length(len(series))
	}
	offset := func(i int, w vg.Length) vg.Length {
		return (vg.Length(i) - vg.Length(len(series)-1)/2) * w
	}
	f.beforeDraw = func(dc draw.Canvas) {
		w := barWidth(dc)
		for i, b := range charts {
			b.Width, b.Offset = w, offset(i, w)
			f.p.Add(b)
		}
	}
	f.obstacles = func(dc draw.Canvas, r vg.Rectangle) bool {
		trX, trY := f.p.Transforms(&dc)
		w := barWidth(dc)
		for i, s := range series {
			for j, y := range s.Y {
				x := trX(float64(j)) + offset(i, w)
				y0, y1 := trY(0), trY(y)
				bar := vg.Rectangle{
					Min: vg.Point{X: x - w/2, Y: vg.Length(math.Min(float64(y0), float64(y1)))},
					Max: vg.Point{X: x + w/2, Y: vg.Length(math.Max(float64(y0), float64(y1)))},
				}
				if rectsOverlap(bar, r) {
					return true
				}
			}
		}
		return false
	}
	return f.save(path)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
