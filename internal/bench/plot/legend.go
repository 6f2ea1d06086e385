package plot

import (
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendEntry is one legend row: the series label and the thumbnails that
// show its style (a line, a glyph, a bar).
type legendEntry struct {
	text   string
	thumbs []gplot.Thumbnailer
}

// The legend is drawn by this package rather than gonum's Plot.Legend so that
// it gets an opaque box (grid lines do not run through the text) and so that
// its rectangle is known exactly for placement.
const (
	legendPad    = vg.Length(5) // inside the box
	legendInset  = vg.Length(6) // between the box and the data-area edge
	legendGap    = vg.Length(5) // between thumbnail and text
	legendClear  = vg.Length(3) // data must stay this far from the box
	legendLead   = 1.3          // row height as a multiple of the font height
	outsideGap   = vg.Length(10)
	outsideMaxFr = 0.4 // widest legend, as a fraction of the plot width, to put outside
)

var legendStyle = text.Style{
	Color:   colorText,
	Font:    legendFont,
	XAlign:  draw.XLeft,
	YAlign:  draw.YCenter,
	Handler: gplot.DefaultTextHandler,
}

// legendThumbWidth is wide enough to show a full period of the longest dash
// pattern; bars override it with a square swatch.
var legendThumbWidth = vg.Length(30)

func (f *figure) labeled() []legendEntry {
	var out []legendEntry
	for _, e := range f.legend {
		if e.text != "" {
			out = append(out, e)
		}
	}
	return out
}

func (f *figure) thumbWidth() vg.Length {
	if f.thumbW > 0 {
		return f.thumbW
	}
	return legendThumbWidth
}

func legendRowHeight() vg.Length {
	return legendStyle.Rectangle("Mg").Size().Y * legendLead
}

// legendSize returns the size of the legend box including its padding.
func (f *figure) legendSize(entries []legendEntry) (w, h vg.Length) {
	var textW vg.Length
	for _, e := range entries {
		if tw := legendStyle.Width(e.text); tw > textW {
			textW = tw
		}
	}
	w = 2*legendPad + f.thumbWidth() + legendGap + textW
	h = 2*legendPad + legendRowHeight()*vg.Length(len(entries))
	return w, h
}

// placeLegend decides where the legend goes and returns the canvas left for
// the plot (title, axes and data) and the legend's rectangle, nil when no
// series is labeled. The first data-area position that no data crosses wins:
// the corners (top-left, top-right, bottom-right, bottom-left), then the
// middles of the edges (top, right, bottom, left), then the center, which is
// often free between the curves of a log-scale CDF. When all are taken the legend goes to the right of the axes, shrinking the plot; if it is
// too wide for that it goes top-left over the data, on its opaque box.
func (f *figure) placeLegend(area draw.Canvas) (draw.Canvas, *vg.Rectangle) {
	entries := f.labeled()
	if len(entries) == 0 {
		f.legend = nil
		return area, nil
	}
	f.legend = entries
	w, h := f.legendSize(entries)

	dc := f.p.DataCanvas(area)
	corners := func(dc draw.Canvas) []vg.Rectangle {
		l, r := dc.Min.X+legendInset, dc.Max.X-legendInset-w
		b, t := dc.Min.Y+legendInset, dc.Max.Y-legendInset-h
		cx, cy := (l+r)/2, (b+t)/2
		at := func(x, y vg.Length) vg.Rectangle {
			return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
		}
		return []vg.Rectangle{
			at(l, t), at(r, t), at(r, b), at(l, b), // corners
			at(cx, t), at(r, cy), at(cx, b), at(l, cy), at(cx, cy), // edges, center
		}
	}
	fits := w+2*legendInset <= dc.Size().X && h+2*legendInset <= dc.Size().Y
	if fits {
		for _, r := range corners(dc) {
			if f.obstacles == nil || !f.obstacles(dc, grow(r, legendClear)) {
				return area, &r
			}
		}
	}
	if w+outsideGap <= vg.Length(outsideMaxFr)*area.Size().X {
		plotArea := draw.Crop(area, 0, -(w + outsideGap), 0, 0)
		dc := f.p.DataCanvas(plotArea)
		x := plotArea.Max.X + outsideGap
		r := vg.Rectangle{Min: vg.Point{X: x, Y: dc.Max.Y - h}, Max: vg.Point{X: x + w, Y: dc.Max.Y}}
		return plotArea, &r
	}
	r := corners(dc)[0]
	return area, &r
}

// drawLegend draws the legend box at r.
func (f *figure) drawLegend(c draw.Canvas, r vg.Rectangle) {
	c.SetColor(color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xf0})
	c.Fill(r.Path())
	c.SetLineStyle(draw.LineStyle{Color: colorLegendBox, Width: vg.Points(0.6)})
	c.Stroke(r.Path())

	rowH := legendRowHeight()
	tw := f.thumbWidth()
	top := r.Max.Y - legendPad
	for i, e := range f.legend {
		mid := top - rowH*vg.Length(i) - rowH/2
		x := r.Min.X + legendPad
		thumbH := rowH * 0.7
		tc := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: mid - thumbH/2},
			Max: vg.Point{X: x + tw, Y: mid + thumbH/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(tc)
		}
		c.FillText(legendStyle, vg.Point{X: x + tw + legendGap, Y: mid}, e.text)
	}
}

func grow(r vg.Rectangle, d vg.Length) vg.Rectangle {
	return vg.Rectangle{
		Min: vg.Point{X: r.Min.X - d, Y: r.Min.Y - d},
		Max: vg.Point{X: r.Max.X + d, Y: r.Max.Y + d},
	}
}

// polylinesHit reports whether any series, drawn as a polyline through its
// points in dc, passes through r.
func polylinesHit(p *gplot.Plot, dc draw.Canvas, series []Series, r vg.Rectangle) bool {
	trX, trY := p.Transforms(&dc)
	for _, s := range series {
		prev := vg.Point{X: trX(s.X[0]), Y: trY(s.Y[0])}
		if contains(r, prev) {
			return true
		}
		for j := 1; j < len(s.X); j++ {
			cur := vg.Point{X: trX(s.X[j]), Y: trY(s.Y[j])}
			if segmentHitsRect(prev, cur, r) {
				return true
			}
			prev = cur
		}
	}
	return false
}

func contains(r vg.Rectangle, p vg.Point) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

func rectsOverlap(a, b vg.Rectangle) bool {
	return a.Min.X <= b.Max.X && b.Min.X <= a.Max.X && a.Min.Y <= b.Max.Y && b.Min.Y <= a.Max.Y
}

// segmentHitsRect reports whether segment ab intersects r (Liang-Barsky
// clipping: the segment hits iff some parameter interval survives clipping
// against all four edges).
func segmentHitsRect(a, b vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	clip := func(p, q float64) bool {
		if p == 0 {
			return q >= 0
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			if t > t0 {
				t0 = t
			}
		} else {
			if t < t0 {
				return false
			}
			if t < t1 {
				t1 = t
			}
		}
		return true
	}
	return clip(-dx, float64(a.X-r.Min.X)) &&
		clip(dx, float64(r.Max.X-a.X)) &&
		clip(-dy, float64(a.Y-r.Min.Y)) &&
		clip(dy, float64(r.Max.Y-a.Y))
}
