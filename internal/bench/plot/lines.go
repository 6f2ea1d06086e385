package plot

import (
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Lines plots Y against X for each series as a line through marked points,
// for sweep curves (read ratio, lease length, delay, load). Points are joined
// in the order given, so sort X when the sweep is not already ordered. The y
// axis starts at zero when all Y are nonnegative and the smallest is at most
// half the largest, so that differences are not exaggerated; otherwise it
// fits the data.
func Lines(path string, m Meta, series []Series) error {
	const kind = "Lines"
	if err := validateSeries(kind, series); err != nil {
		return err
	}
	f := newFigure(kind, m)
	for i, s := range series {
		st := styleFor(i)
		l, sc, err := plotter.NewLinePoints(xys(s))
		if err != nil {
			return invalidf("%s series %s: %v", kind, seriesName(i, s), err)
		}
		l.LineStyle = st.line()
		sc.GlyphStyle = draw.GlyphStyle{Color: st.color, Radius: vg.Points(glyphRadius), Shape: st.glyph}
		f.p.Add(l, sc)
		f.legend = append(f.legend, legendEntry{text: s.Label, thumbs: []gplot.Thumbnailer{l, sc}})
	}
	includeZero(f.p)
	f.obstacles = func(dc draw.Canvas, r vg.Rectangle) bool {
		return polylinesHit(f.p, dc, series, grow(r, vg.Points(glyphRadius)))
	}
	return f.save(path)
}

// TimeSeries plots Y against time in seconds (X) as plain lines, for latency
// spikes and elasticity runs. Each mark is a dashed vertical line with its
// label just above the data area, such as a load step at t=50s; the x axis
// is widened to show every mark. As in Lines, the y axis starts at zero when
// the data is nonnegative and its minimum is at most half its maximum.
func TimeSeries(path string, m Meta, series []Series, marks []Mark) error {
	const kind = "TimeSeries"
	if err := validateSeries(kind, series); err != nil {
		return err
	}
	for i, mk := range marks {
		if math.IsNaN(mk.X) || math.IsInf(mk.X, 0) {
			return invalidf("%s: mark #%d %q: X = %v; want a finite time", kind, i, mk.Label, mk.X)
		}
	}
	f := newFigure(kind, m)
	for i, s := range series {
		l, err := plotter.NewLine(xys(s))
		if err != nil {
			return invalidf("%s series %s: %v", kind, seriesName(i, s), err)
		}
		l.LineStyle = styleFor(i).line()
		f.p.Add(l)
		f.legend = append(f.legend, legendEntry{text: s.Label, thumbs: []gplot.Thumbnailer{l}})
	}
	includeZero(f.p)
	for _, mk := range marks {
		f.p.X.Min = math.Min(f.p.X.Min, mk.X)
		f.p.X.Max = math.Max(f.p.X.Max, mk.X)
		if mk.Label != "" {
			// Labels go in a band above the data so they never hide it.
			f.topBand = markRowHeight()
		}
	}
	f.obstacles = func(dc draw.Canvas, r vg.Rectangle) bool {
		if polylinesHit(f.p, dc, series, r) {
			return true
		}
		for _, box := range markBoxes(f.p, dc, marks) {
			if rectsOverlap(box, r) {
				return true
			}
		}
		return false
	}
	f.overlay = func(dc draw.Canvas) { drawMarks(f.p, dc, marks) }
	return f.save(path)
}

var markStyle = text.Style{
	Color:   colorText,
	Font:    markFont,
	XAlign:  draw.XLeft,
	YAlign:  draw.YTop,
	Handler: gplot.DefaultTextHandler,
}

const (
	markLabelGap = vg.Length(3) // between the line and its label
	markLabelPad = vg.Length(1.5)
)

// includeZero extends the y axis down to zero when the data is nonnegative
// and zero is not far from it.
func includeZero(p *gplot.Plot) {
	if p.Y.Min >= 0 && p.Y.Min <= p.Y.Max/2 {
		p.Y.Min = 0
	}
}

func markRowHeight() vg.Length {
	return markStyle.Rectangle("Mg").Size().Y + 2*markLabelPad
}

// markBoxes returns, for each mark, the rectangle covering its line and
// label: the line spans the data area's height, the label sits right of the
// line in the band above the data area (left of the line if it would run past
// the right edge) and moves down a row while it overlaps an earlier label.
// The line boxes come first, then the label boxes of labeled marks.
func markBoxes(p *gplot.Plot, dc draw.Canvas, marks []Mark) []vg.Rectangle {
	trX, _ := p.Transforms(&dc)
	var boxes, labels []vg.Rectangle
	rowH := markRowHeight()
	for _, mk := range marks {
		x := trX(mk.X)
		boxes = append(boxes, vg.Rectangle{Min: vg.Point{X: x - 1, Y: dc.Min.Y}, Max: vg.Point{X: x + 1, Y: dc.Max.Y}})
		if mk.Label == "" {
			labels = append(labels, vg.Rectangle{})
			continue
		}
		w := markStyle.Width(mk.Label) + 2*markLabelPad
		lx := x + markLabelGap
		if lx+w > dc.Max.X {
			lx = x - markLabelGap - w
		}
		r := vg.Rectangle{Min: vg.Point{X: lx, Y: dc.Max.Y}, Max: vg.Point{X: lx + w, Y: dc.Max.Y + rowH}}
		for moved := true; moved; {
			moved = false
			for _, prev := range labels {
				if prev != (vg.Rectangle{}) && rectsOverlap(prev, r) {
					r.Min.Y -= rowH
					r.Max.Y -= rowH
					moved = true
				}
			}
			if r.Min.Y < dc.Min.Y {
				break // out of rows: overlap rather than leave the figure
			}
		}
		labels = append(labels, r)
	}
	for _, l := range labels {
		if l != (vg.Rectangle{}) {
			boxes = append(boxes, l)
		}
	}
	return boxes
}

func drawMarks(p *gplot.Plot, dc draw.Canvas, marks []Mark) {
	if len(marks) == 0 {
		return
	}
	trX, _ := p.Transforms(&dc)
	ls := draw.LineStyle{Color: colorMark, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	for _, mk := range marks {
		x := trX(mk.X)
		dc.StrokeLine2(ls, x, dc.Min.Y, x, dc.Max.Y)
	}
	boxes := markBoxes(p, dc, marks)
	labelBoxes := boxes[len(marks):]
	k := 0
	for _, mk := range marks {
		if mk.Label == "" {
			continue
		}
		r := labelBoxes[k]
		k++
		dc.SetColor(colorWhite)
		dc.Fill(r.Path())
		dc.FillText(markStyle, vg.Point{X: r.Min.X + markLabelPad, Y: r.Max.Y - markLabelPad}, mk.Label)
	}
}
