package plot

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// ErrInvalid is wrapped by every error caused by bad input (as opposed to an
// I/O failure writing the file).
var ErrInvalid = errors.New("plot: invalid input")

const (
	// dpi is the resolution of every PNG: a 7 in wide figure is 1050 px.
	dpi = 150
	// defaultWidthIn and defaultHeightIn are the figure size when Meta leaves
	// it zero.
	defaultWidthIn  = 7.0
	defaultHeightIn = 4.5
	// maxSideIn bounds each side so that a typo cannot allocate gigabytes
	// (40 in at 150 dpi is 6000 px).
	maxSideIn = 40.0
)

// Meta is the figure metadata shared by all plots.
type Meta struct {
	// Title is drawn on top of the figure.
	Title string
	// Caption is drawn under the axes, wrapped to the image width. It names
	// the experiment, world, workload and seed; the caller writes it.
	Caption string
	// XLabel and YLabel label the axes; units belong in them ("latency (ms)").
	XLabel, YLabel string
	// Width and Height are the figure size in inches; zero means the default
	// 7 x 4.5 in. The PNG is rendered at 150 dpi.
	Width, Height float64
}

// Series is one named curve (or, in Bars, one bar per category).
type Series struct {
	// Label names the series in the legend; an empty label gets no legend
	// entry.
	Label string
	// X and Y are the coordinates; they must have the same length.
	X, Y []float64
}

// Mark is a labeled vertical marker line in a TimeSeries, such as a load step
// at t=50s.
type Mark struct {
	// X is the time of the marker in seconds.
	X float64
	// Label is written next to the top of the marker line; it may be empty.
	Label string
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// size returns the figure size after defaults, or an error for a nonsensical
// size.
func (m Meta) size(kind string) (w, h vg.Length, err error) {
	wIn, hIn := m.Width, m.Height
	if wIn == 0 {
		wIn = defaultWidthIn
	}
	if hIn == 0 {
		hIn = defaultHeightIn
	}
	for _, v := range []float64{wIn, hIn} {
		if math.IsNaN(v) || v < 1 || v > maxSideIn {
			return 0, 0, invalidf("%s: figure size %gx%g in: each side must be within [1, %g] in", kind, wIn, hIn, maxSideIn)
		}
	}
	return vg.Length(wIn) * vg.Inch, vg.Length(hIn) * vg.Inch, nil
}

// validateSeries checks the rules shared by all plot kinds: at least one
// series, each non-empty, len(X) == len(Y) and all values finite.
func validateSeries(kind string, series []Series) error {
	if len(series) == 0 {
		return invalidf("%s: no series", kind)
	}
	for i, s := range series {
		name := kind + " series " + seriesName(i, s)
		if len(s.X) != len(s.Y) {
			return invalidf("%s: len(X) = %d, len(Y) = %d; want equal", name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			return invalidf("%s: no points", name)
		}
		if err := checkFinite(name, "X", s.X); err != nil {
			return err
		}
		if err := checkFinite(name, "Y", s.Y); err != nil {
			return err
		}
	}
	return nil
}

func checkFinite(series, axis string, vs []float64) error {
	for j, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalidf("%s: %s[%d] = %v; want a finite value", series, axis, j, v)
		}
	}
	return nil
}

func seriesName(i int, s Series) string {
	if s.Label == "" {
		return fmt.Sprintf("#%d", i)
	}
	return fmt.Sprintf("#%d %q", i, s.Label)
}

// figure is a plot being assembled: the gonum plot plus what this package
// draws itself (legend, overlays, caption).
type figure struct {
	kind string // "CDF", "Lines", ... for error messages
	meta Meta
	p    *gplot.Plot
	// legend holds the entries in series order.
	legend []legendEntry
	// obstacles reports whether anything drawn in the data area crosses r,
	// for legend placement. dc is the final data canvas.
	obstacles func(dc draw.Canvas, r vg.Rectangle) bool
	// beforeDraw, if set, runs once the data canvas is known (bar widths
	// depend on it).
	beforeDraw func(dc draw.Canvas)
	// overlay, if set, draws over the data after the plot (marker lines).
	overlay func(dc draw.Canvas)
	// grid is the background grid, drawn first.
	grid *plotter.Grid
	// topBand is kept free between the title and the data area (for mark
	// labels).
	topBand vg.Length
	// thumbW overrides the legend thumbnail width when nonzero.
	thumbW vg.Length
}

// save renders f and writes it to path as PNG, creating parent directories.
// The file is written to a temporary name and renamed, so a failed run never
// leaves a truncated PNG behind for the report to pick up.
func (f *figure) save(path string) (err error) {
	if path == "" {
		return invalidf("%s: empty output path", f.kind)
	}
	w, h, err := f.meta.size(f.kind)
	if err != nil {
		return err
	}
	c, err := f.render(w, h)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot: creating directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".plot-*.png.tmp")
	if err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(tmp); err != nil {
		return fmt.Errorf("plot: encoding %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}

// render draws the figure onto a fresh image canvas. Validation should make
// gonum's panics unreachable; the recover is a backstop so that a report run
// fails with an error naming the figure instead of crashing the harness.
func (f *figure) render(w, h vg.Length) (c *vgimg.Canvas, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("plot: rendering %s %q: %v", f.kind, f.meta.Title, r)
		}
	}()
	c = vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(colorWhite))
	full := draw.New(c)
	area := draw.Crop(full, outerMargin, -outerMargin, outerMargin, -outerMargin)

	// Caption lines take a strip at the bottom; the plot gets the rest.
	lines := wrapCaption(f.meta.Caption, area.Size().X)
	if len(lines) > 0 {
		lineH := captionStyle.Rectangle("Mg").Size().Y * captionLeading
		capH := lineH*vg.Length(len(lines)) + captionGap
		if capH > area.Size().Y/2 {
			return nil, invalidf("%s: caption of %d lines does not fit a %.1f in tall figure", f.kind, len(lines), float64(h/vg.Inch))
		}
		y := area.Min.Y + lineH*vg.Length(len(lines)-1)
		for _, ln := range lines {
			area.FillText(captionStyle, vg.Point{X: area.Min.X, Y: y}, ln)
			y -= lineH
		}
		area = draw.Crop(area, 0, 0, capH, 0)
	}

	if f.topBand > 0 {
		if f.p.Title.Text != "" {
			f.p.Title.Padding += f.topBand
		} else {
			area = draw.Crop(area, 0, 0, 0, -f.topBand)
		}
	}
	plotArea, leg := f.placeLegend(area)
	dc := f.p.DataCanvas(plotArea)
	if f.beforeDraw != nil {
		f.beforeDraw(dc)
	}
	f.p.Draw(plotArea)
	if f.overlay != nil {
		f.overlay(dc)
	}
	if leg != nil {
		f.drawLegend(full, *leg)
	}
	return c, nil
}
