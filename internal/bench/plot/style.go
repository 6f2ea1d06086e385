package plot

import (
	"image/color"

	xfont "golang.org/x/image/font"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Typography: sans-serif throughout, 11-12 pt for everything a reader needs,
// a little smaller for the caption so that it reads as a footnote.
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}

	titleFont   = font.From(sansBold, 13)
	labelFont   = font.From(sans, 12)
	tickFont    = font.From(sans, 11)
	legendFont  = font.From(sans, 11)
	markFont    = font.From(sans, 10)
	captionFont = font.From(sans, 10)

	colorWhite     = color.White
	colorGrid      = color.Gray{Y: 0xe0}
	colorAxis      = color.Gray{Y: 0x40}
	colorText      = color.Gray{Y: 0x20}
	colorCaption   = color.Gray{Y: 0x30}
	colorMark      = color.Gray{Y: 0x55}
	colorLegendBox = color.Gray{Y: 0xb0}

	captionStyle = text.Style{
		Color:   colorCaption,
		Font:    captionFont,
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: gplot.DefaultTextHandler,
	}
)

const (
	outerMargin    = 0.12 * vg.Inch
	captionGap     = 8 // points between the x axis label and the caption
	captionLeading = 1.2
	lineWidth      = 1.6 // points
	glyphRadius    = 2.6 // points
)

// seriesStyle is how one series is drawn. The palette is Okabe-Ito (safe for
// color-blind readers); the dashes and glyphs make series distinguishable in
// grayscale too.
type seriesStyle struct {
	color  color.Color
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}

var (
	linePalette = []color.Color{
		rgb(0x00, 0x72, 0xb2), // blue
		rgb(0xd5, 0x5e, 0x00), // vermillion
		rgb(0x00, 0x9e, 0x73), // bluish green
		rgb(0xcc, 0x79, 0xa7), // reddish purple
		rgb(0xe6, 0x9f, 0x00), // orange
		rgb(0x56, 0xb4, 0xe9), // sky blue
		rgb(0x00, 0x00, 0x00), // black
		rgb(0x99, 0x99, 0x99), // gray
	}
	dashPalette = [][]vg.Length{
		nil, // solid
		{vg.Points(6), vg.Points(3)},
		{vg.Points(1.5), vg.Points(2.5)},
		{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
		{vg.Points(11), vg.Points(3.5)},
		{vg.Points(4), vg.Points(2), vg.Points(1.5), vg.Points(2), vg.Points(1.5), vg.Points(2)},
		{vg.Points(3), vg.Points(3)},
	}
	glyphPalette = []draw.GlyphDrawer{
		draw.CircleGlyph{},
		draw.SquareGlyph{},
		draw.TriangleGlyph{},
		draw.RingGlyph{},
		draw.BoxGlyph{},
		draw.PyramidGlyph{},
		draw.CrossGlyph{},
		draw.PlusGlyph{},
	}
	// barPalette is ordered so that neighbouring bars differ in lightness,
	// not just hue, and survive grayscale printing.
	barPalette = []color.Color{
		rgb(0x1f, 0x4e, 0x79), // dark blue
		rgb(0xe6, 0x9f, 0x00), // orange
		rgb(0x00, 0x9e, 0x73), // bluish green
		rgb(0xa6, 0xce, 0xe3), // pale blue
		rgb(0xd5, 0x5e, 0x00), // vermillion
		rgb(0xcc, 0x79, 0xa7), // reddish purple
		rgb(0x55, 0x55, 0x55), // dark gray
		rgb(0xf0, 0xe4, 0x42), // yellow
	}
)

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// styleFor returns the style of series i. Dash patterns cycle with a period
// coprime to the colors' so that series 8 and up still differ from 0..7.
func styleFor(i int) seriesStyle {
	return seriesStyle{
		color:  linePalette[i%len(linePalette)],
		dashes: dashPalette[i%len(dashPalette)],
		glyph:  glyphPalette[i%len(glyphPalette)],
	}
}

func (s seriesStyle) line() draw.LineStyle {
	return draw.LineStyle{Color: s.color, Width: vg.Points(lineWidth), Dashes: s.dashes}
}

// newFigure returns a figure with the house style applied: title, axis labels,
// fonts, light-gray grid.
func newFigure(kind string, m Meta) *figure {
	p := gplot.New()
	p.Title.Text = m.Title
	p.Title.TextStyle.Font = titleFont
	p.Title.TextStyle.Color = colorText
	p.Title.Padding = vg.Points(8)
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = labelFont
		ax.Label.TextStyle.Color = colorText
		ax.Label.Padding = vg.Points(4)
		ax.Tick.Label.Font = tickFont
		ax.Tick.Label.Color = colorText
		ax.Color = colorAxis
		ax.Tick.Color = colorAxis
		ax.Width = vg.Points(0.8)
		ax.Tick.Width = vg.Points(0.8)
		ax.Tick.Marker = niceTicks{}
	}
	p.X.Label.Text = m.XLabel
	p.Y.Label.Text = m.YLabel

	g := plotter.NewGrid()
	g.Vertical = draw.LineStyle{Color: colorGrid, Width: vg.Points(0.6)}
	g.Horizontal = draw.LineStyle{Color: colorGrid, Width: vg.Points(0.6)}
	p.Add(g)
	return &figure{kind: kind, meta: m, p: p, grid: g}
}
