package main

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"codeberg.org/go-fonts/dejavu/dejavusans"
	"codeberg.org/go-fonts/dejavu/dejavusansbold"
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The chart files writeCharts writes, each only when the run measured what it shows.
const (
	chartThroughput = "clients-throughput.svg"
	chartWaitP99    = "clients-wait-p99.svg"
	chartCommands   = "clients-commands.svg"
	chartObjects    = "objects.svg"
)

// chartImpl is how one implementation is drawn in every chart.
type chartImpl struct {
	label string
	color color.Color
	width vg.Length // line width
	dash  []vg.Length
	glyph draw.GlyphDrawer
}

func rgb(c uint32) color.RGBA {
	return color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 255}
}

// chartImpls are the implementations' styles, in legend order: this library first, drawn thickest
// in the first colour (colour-blind safe Okabe–Ito palette), the ceiling and the floor dashed.
var chartImpls = []struct {
	name string
	chartImpl
}{
	{"redisson", chartImpl{"Lock (this library)", rgb(0x0072B2), 3.5, nil, draw.CircleGlyph{}}},
	{"redisson-fair", chartImpl{"FairLock (this library)", rgb(0x56B4E9), 2, nil, draw.SquareGlyph{}}},
	{"redisson-spin", chartImpl{"SpinLock (this library)", rgb(0xCC79A7), 1.5, nil, draw.TriangleGlyph{}}},
	{"redsync", chartImpl{"redsync", rgb(0xE69F00), 1.5, nil, draw.CrossGlyph{}}},
	{"redislock", chartImpl{"redislock", rgb(0x009E73), 1.5, nil, draw.PlusGlyph{}}},
	{"rueidislock", chartImpl{"rueidislock", rgb(0xD55E00), 1.5, nil, draw.BoxGlyph{}}},
	{"rueidislock-km1", chartImpl{"rueidislock KeyMajority 1", rgb(0xB8A000), 1.5, nil, draw.PyramidGlyph{}}},
	{"bare", chartImpl{"bare queue design (yardstick)", rgb(0x444444), 1.5, []vg.Length{vg.Points(1), vg.Points(3)}, draw.SquareGlyph{}}},
	{"floor", chartImpl{"floor (SET NX PX, poll 1ms)", rgb(0x777777), 1.5, []vg.Length{vg.Points(5), vg.Points(3)}, draw.RingGlyph{}}},
	{"mutex", chartImpl{"sync.Mutex in-process (ceiling)", color.Black, 1.5, []vg.Length{vg.Points(2), vg.Points(2)}, draw.RingGlyph{}}},
}

// styleOf returns the style of an implementation; unknown names get a thin grey line.
func styleOf(name string) (int, chartImpl) {
	for i, c := range chartImpls {
		if c.name == name {
			return i, c.chartImpl
		}
	}
	return len(chartImpls), chartImpl{name, rgb(0x999999), 1, nil, draw.CircleGlyph{}}
}

// sweepSeries is one implementation's results over the per-Client contended scenarios, by number of
// Clients.
type sweepSeries struct {
	impl string
	rs   []*scenarioResult
}

// clientSweep returns the per-Client contended results (contended-<n>c, not the shared Client's
// "contended") by implementation in legend order, each sorted by number of Clients, and the numbers
// of Clients measured. Results without acquisitions are left out.
func clientSweep(rep *report) ([]sweepSeries, []int) {
	by := map[string][]*scenarioResult{}
	var clients []int
	for _, r := range rep.Contended {
		if r.Scenario == "contended" || r.Acquisitions == 0 {
			continue
		}
		by[r.Impl] = append(by[r.Impl], r)
		if !slices.Contains(clients, r.Goroutines) {
			clients = append(clients, r.Goroutines)
		}
	}
	var out []sweepSeries
	for name, rs := range by {
		slices.SortFunc(rs, func(a, b *scenarioResult) int { return a.Goroutines - b.Goroutines })
		out = append(out, sweepSeries{name, rs})
	}
	slices.SortFunc(out, func(a, b sweepSeries) int {
		ia, _ := styleOf(a.impl)
		ib, _ := styleOf(b.impl)
		return cmp.Or(ia-ib, strings.Compare(a.impl, b.impl))
	})
	slices.Sort(clients)
	return out, clients
}

// writeCharts writes the charts of rep as SVG files into dir (created if missing) and returns their
// paths. A chart whose data the run did not measure is not written (an older file of that name is
// left as it is).
func writeCharts(dir string, rep *report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	save := func(name string, c *chart) error {
		if c == nil {
			return nil
		}
		path := filepath.Join(dir, name)
		if err := c.save(path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
		return nil
	}
	series, clients := clientSweep(rep)
	setting := fmt.Sprintf("one key, critical section %s, %s per run", cmp.Or(rep.Config["critical"], "?"), cmp.Or(rep.Config["contended_duration"], "?"))
	if r := rep.Config["rounds"]; r != "" && r != "1" {
		setting += " × " + r + " rounds"
	}
	for _, c := range []struct {
		name string
		make func() (*chart, error)
	}{
		{chartThroughput, func() (*chart, error) { return throughputChart(series, clients, setting) }},
		{chartWaitP99, func() (*chart, error) { return waitChart(series, clients, setting) }},
		{chartCommands, func() (*chart, error) { return commandsChart(series, clients, setting) }},
		{chartObjects, func() (*chart, error) { return objectsChart(rep.Obj) }},
	} {
		ch, err := c.make()
		if err != nil {
			return files, fmt.Errorf("%s: %w", c.name, err)
		}
		if err := save(c.name, ch); err != nil {
			return files, err
		}
	}
	return files, nil
}

// chart is a plot with its legend drawn to the right of it, outside the data area, and a subtitle
// under its title.
type chart struct {
	p        *plot.Plot
	legend   plot.Legend
	subtitle string
	w, h     vg.Length
	lines    [][]plot.Plotter // added to p at save, in reverse: the first (ours) drawn on top
}

// newChart makes a chart; title's lines after the first are the subtitle, drawn smaller and not
// bold under it, both wrapped at save to the canvas' width.
func newChart(title, xLabel, yLabel string, w, h vg.Length) *chart {
	title, subtitle, _ := strings.Cut(title, "\n")
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansFont(true), 13)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont(false), 11)
		a.Tick.Label.Font = font.From(sansFont(false), 10)
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.Y.Tick.Marker = linearTicks
	p.Add(plotter.NewGrid())
	lg := plot.NewLegend()
	lg.TextStyle.Font = font.From(sansFont(false), 10)
	lg.Top, lg.Left = true, true
	lg.ThumbnailWidth = vg.Points(28)
	lg.Padding = vg.Points(3)
	return &chart{p: p, legend: lg, subtitle: subtitle, w: w, h: h}
}

// wrapText breaks each line of s into lines no wider than width in sty: at "; " where it can, else
// between words (a word wider than width stays whole on a line of its own).
func wrapText(s string, sty text.Style, width vg.Length) string {
	var out []string
	fits := func(l string) bool { return sty.Width(l) <= width }
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		add := func(piece string) { // piece on cur's line if it fits there, else on a new one
			switch {
			case cur == "":
				cur = piece
			case fits(cur + " " + piece):
				cur += " " + piece
			default:
				out, cur = append(out, cur), piece
			}
		}
		for _, clause := range strings.SplitAfter(line, "; ") {
			if clause = strings.TrimSuffix(clause, " "); fits(clause) {
				add(clause)
				continue
			}
			for _, word := range strings.Fields(clause) {
				add(word)
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// The charts' text is named in the SVG by chartFontFamily and measured by chartText with the widest
// of the fonts that list names (their metrics embedded here): a viewer draws it with the first it
// has, or its sans-serif, and every text still fits the space laid out for it.
const chartFontFamily = "'DejaVu Sans','Liberation Sans',Arial,Helvetica,sans-serif"

// chartTypefaces are the typefaces measured (Variant Sans), in chartFontFamily's order: DejaVu Sans,
// the widest and the sans-serif of most Linux systems, then Liberation Sans, which has the metrics
// of Arial and Helvetica.
var chartTypefaces = []font.Typeface{"DejaVu", "Liberation"}

func init() {
	coll := font.Collection{}
	for _, f := range []struct {
		bold bool
		ttf  []byte
	}{{false, dejavusans.TTF}, {true, dejavusansbold.TTF}} {
		face, err := opentype.Parse(f.ttf)
		if err != nil {
			panic(fmt.Sprintf("DejaVu Sans: %v", err))
		}
		fnt := font.Font{Typeface: "DejaVu", Variant: "Sans"}
		if f.bold {
			fnt.Weight = xfont.WeightBold
		}
		coll = append(coll, font.Face{Font: fnt, Face: face})
	}
	font.DefaultCache.Add(coll)
	plot.DefaultTextHandler = chartText{text.Plain{Fonts: font.DefaultCache}}
}

// sansFont is the charts' font (chartTypefaces' first; chartText measures it with them all).
func sansFont(bold bool) font.Font {
	f := font.Font{Typeface: chartTypefaces[0], Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// chartText is the charts' text handler: text.Plain, but each text measured with the widest of
// chartTypefaces (its width, ascent and descent the largest of theirs), and drawn, on an
// anchorCanvas, at the point its alignment refers to, with an SVG text-anchor: a right-aligned
// tick label ends at its tick and a centred title is centred in any font.
type chartText struct{ text.Plain }

func (h chartText) faces(fnt font.Font) []font.Face {
	var faces []font.Face
	for _, tf := range chartTypefaces {
		f := fnt
		f.Typeface = tf
		faces = append(faces, h.Fonts.Lookup(f, fnt.Size))
	}
	return faces
}

// Extents are the largest ascent, descent and line height of the typefaces.
func (h chartText) Extents(fnt font.Font) font.Extents {
	var e font.Extents
	for _, f := range h.faces(fnt) {
		fe := f.Extents()
		e.Ascent, e.Descent, e.Height = max(e.Ascent, fe.Ascent), max(e.Descent, fe.Descent), max(e.Height, fe.Height)
	}
	return e
}

// Box is the widest of the typefaces' widths of txt, with Extents' ascent and descent.
func (h chartText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	for _, f := range h.faces(fnt) {
		width = max(width, f.Width(txt))
	}
	e := h.Extents(fnt)
	return width, e.Ascent, e.Descent
}

// Draw draws txt as text.Plain does, with the line pitch of Extents and, on an anchorCanvas, each
// line at its alignment point with the matching text-anchor.
func (h chartText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	ac := anchorCanvasOf(c)
	face := h.faces(sty.Font)[0]
	e := h.Extents(sty.Font)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		defer c.Pop()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	sin, cos := vg.Length(sin64), vg.Length(cos64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	// The last line's baseline, where text.Style.Rectangle has it (the box's bottom one descent
	// and line gap below it).
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - (e.Height - e.Ascent - e.Descent)
	for i, line := range lines {
		p := pt.Add(vg.Point{Y: vg.Length(len(lines)-1-i) * e.Height})
		anchor := map[text.XAlignment]string{text.XLeft: "start", text.XCenter: "middle", text.XRight: "end"}[sty.XAlign]
		if ac == nil || anchor == "" {
			w, _, _ := h.Box(line, sty.Font)
			p.X += vg.Length(sty.XAlign) * w
		} else {
			ac.next = anchor
		}
		c.FillString(face, p, line)
	}
}

// anchorCanvas is an SVG canvas that records the text-anchor of each text drawn (chartText sets
// next before each FillString), for withAnchors to write into the SVG.
type anchorCanvas struct {
	*vgsvg.Canvas
	next    string
	anchors []string
}

func (a *anchorCanvas) FillString(f font.Face, pt vg.Point, s string) {
	a.anchors = append(a.anchors, cmp.Or(a.next, "start"))
	a.next = ""
	a.Canvas.FillString(f, pt, s)
}

// anchorCanvasOf returns the anchorCanvas that c draws on, or nil (gonum's draw.Canvas wraps one
// in others).
func anchorCanvasOf(c vg.Canvas) *anchorCanvas {
	for {
		switch v := c.(type) {
		case *anchorCanvas:
			return v
		case *draw.Canvas:
			c = v.Canvas
		case draw.Canvas:
			c = v.Canvas
		default:
			return nil
		}
	}
}

// withAnchors returns svg with the text-anchor of anchors (in order) on each of its <text>
// elements, and chartFontFamily as their font family.
func withAnchors(svg []byte, anchors []string) ([]byte, error) {
	tag := []byte("<text ")
	if n := bytes.Count(svg, tag); n != len(anchors) {
		return nil, fmt.Errorf("%d texts drawn, %d in the SVG", len(anchors), n)
	}
	var out bytes.Buffer
	for _, a := range anchors {
		j := bytes.Index(svg, tag) + len(tag)
		out.Write(svg[:j])
		if a != "start" {
			fmt.Fprintf(&out, `text-anchor="%s" `, a)
		}
		svg = svg[j:]
	}
	out.Write(svg)
	family := []byte("font-family:DejaVu Sans;")
	if !bytes.Contains(out.Bytes(), family) {
		return nil, fmt.Errorf("no %s in the SVG", family)
	}
	return bytes.ReplaceAll(out.Bytes(), family, []byte("font-family:"+chartFontFamily+";")), nil
}

// save writes the chart to path in the format its extension names (svg; others if their vg backend
// is linked in).
func (c *chart) save(path string) error {
	var canvas vg.CanvasWriterTo
	var ac *anchorCanvas
	if ext := strings.TrimPrefix(filepath.Ext(path), "."); ext == "svg" {
		ac = &anchorCanvas{Canvas: vgsvg.New(c.w, c.h)}
		canvas = ac
	} else {
		var err error
		if canvas, err = draw.NewFormattedCanvas(c.w, c.h, ext); err != nil {
			return err
		}
	}
	for i := len(c.lines) - 1; i >= 0; i-- {
		c.p.Add(c.lines[i]...)
	}
	c.lines = nil
	dc := draw.New(canvas)
	dc.SetColor(color.White) // the legend's strip too, for dark page backgrounds
	dc.Fill(dc.Rectangle.Path())
	lw := c.legend.Rectangle(dc).Size().X + vg.Points(16)
	// The title and the subtitle, centred on the canvas and wrapped to its width; the plot below
	// them on the left, the legend on the right.
	margin := vg.Points(6)
	top := dc.Max.Y - vg.Points(4)
	header := func(txt string, sty text.Style) {
		txt = wrapText(txt, sty, c.w-2*margin)
		r := sty.Rectangle(txt)
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: top - r.Max.Y}, txt)
		top -= r.Size().Y
	}
	tsty := c.p.Title.TextStyle
	header(c.p.Title.Text, tsty)
	if c.subtitle != "" {
		top -= vg.Points(3)
		ssty := tsty
		ssty.Font = font.From(sansFont(false), 11)
		header(c.subtitle, ssty)
	}
	top -= c.p.Title.Padding
	c.p.Title.Text = ""
	c.p.Draw(draw.Crop(dc, vg.Points(4), -lw, vg.Points(4), top-dc.Max.Y))
	c.legend.Draw(draw.Crop(dc, c.w-lw+vg.Points(8), 0, 0, top-dc.Max.Y-vg.Points(10)))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return err
	}
	b := buf.Bytes()
	if ac != nil {
		var err error
		if b, err = withAnchors(b, ac.anchors); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b, 0o644)
}

// clientsAxis makes p's X axis the number of Clients, on a log scale with a tick at each count: the
// points are drawn at log2(Clients) on a linear axis (gonum's LogScale misplaces the axis label's
// glyph box, which shrinks the plot).
func clientsAxis(p *plot.Plot, clients []int) {
	var ticks plot.ConstantTicks
	for _, n := range clients {
		ticks = append(ticks, plot.Tick{Value: math.Log2(float64(n)), Label: strconv.Itoa(n)})
	}
	p.X.Tick.Marker = ticks
}

// linearTicks labels 5 to 10 round values (1, 2 or 5 times a power of ten apart) between lo and hi.
var linearTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	base := math.Pow(10, math.Floor(math.Log10(hi-lo))-1) // (hi-lo)/base is in [10, 100)
	step := 10 * base
	for _, m := range []float64{2, 5} {
		if (hi-lo)/(m*base) <= 10 {
			step = m * base
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		ticks = append(ticks, plot.Tick{Value: i * step, Label: strconv.FormatFloat(i*step, 'f', decimals, 64)})
	}
	return ticks
})

// logTicks returns ticks for an axis drawn at log10(value) from lo to hi (> 0): labelled at 1, 2
// and 5 times each power of ten, unlabelled between.
func logTicks(lo, hi float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow(10, e)
			t := plot.Tick{Value: math.Log10(v)}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// lineOf adds the line of one implementation to c, with its style and a glyph at every point.
func (c *chart) lineOf(impl string, xys plotter.XYs) error {
	_, st := styleOf(impl)
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = st.color, vg.Points(float64(st.width)), st.dash
	s.Color, s.Shape, s.Radius = st.color, st.glyph, vg.Points(2.5+float64(st.width)/2)
	c.lines = append(c.lines, []plot.Plotter{l, s})
	c.legend.Add(st.label, l, s)
	return nil
}

const clientsLabel = "Clients (log scale)"

// sweepSetting describes the per-Client scenarios in a chart's subtitle.
func sweepSetting(setting string) string {
	return "each Client its own connection and goroutine, as separate processes; " + setting
}

// throughputChart: acquisitions per second against the number of Clients, a line per implementation.
func throughputChart(series []sweepSeries, clients []int, setting string) (*chart, error) {
	if len(series) == 0 {
		return nil, nil
	}
	c := newChart("Contended lock: throughput (higher is better)\n"+sweepSetting(setting),
		clientsLabel, "acquisitions/s", 24*vg.Centimeter, 13*vg.Centimeter)
	clientsAxis(c.p, clients)
	c.p.Y.Min = 0
	for _, s := range series {
		var xys plotter.XYs
		for _, r := range s.rs {
			xys = append(xys, plotter.XY{X: math.Log2(float64(r.Goroutines)), Y: r.OpsPerSec})
		}
		if err := c.lineOf(s.impl, xys); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// minLogWaitMs is the bottom of the wait chart's log scale: shorter waits (the in-process mutex
// with one Client waits for nothing) are drawn there.
const minLogWaitMs = 0.01

// waitChart: p99 wait against the number of Clients; the Y axis is logarithmic when the values span
// more than a factor of 20 (zero waits are then left out, and those below minLogWaitMs drawn at it).
func waitChart(series []sweepSeries, clients []int, setting string) (*chart, error) {
	if len(series) == 0 {
		return nil, nil
	}
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		for _, r := range s.rs {
			if r.WaitP99Ms > 0 {
				lo, hi = min(lo, max(r.WaitP99Ms, minLogWaitMs)), max(hi, r.WaitP99Ms)
			}
		}
	}
	logY := hi > 20*lo
	yLabel := "p99 wait, ms"
	if logY {
		yLabel += " (log scale, from 0.01)"
	}
	c := newChart("Contended lock: p99 wait from calling Lock to holding it (lower is better)\n"+sweepSetting(setting),
		clientsLabel, yLabel, 24*vg.Centimeter, 13*vg.Centimeter)
	clientsAxis(c.p, clients)
	if logY {
		c.p.Y.Tick.Marker = logTicks(lo, hi)
	} else {
		c.p.Y.Min = 0
	}
	for _, s := range series {
		var xys plotter.XYs
		for _, r := range s.rs {
			if logY && r.WaitP99Ms <= 0 {
				continue
			}
			y := r.WaitP99Ms
			if logY {
				y = math.Log10(max(y, minLogWaitMs))
			}
			xys = append(xys, plotter.XY{X: math.Log2(float64(r.Goroutines)), Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		if err := c.lineOf(s.impl, xys); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// barLabel formats a bar's value: one decimal below 100.
func barLabel(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// labelsAbove returns the values of bars as labels just above them, upright (reading upwards: a
// bar is narrower than its value written across); offset is the bars' Offset.
func labelsAbove(xs, vs []float64, offset vg.Length, format func(float64) string) (*plotter.Labels, error) {
	var d plotter.XYLabels
	for i, v := range vs {
		if math.IsNaN(v) {
			continue
		}
		d.XYs = append(d.XYs, plotter.XY{X: xs[i], Y: v})
		d.Labels = append(d.Labels, format(v))
	}
	l, err := plotter.NewLabels(d)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sansFont(false), 8)
		l.TextStyle[i].Rotation = math.Pi / 2
		l.TextStyle[i].XAlign = text.XLeft
		l.TextStyle[i].YAlign = text.YCenter
	}
	l.Offset = vg.Point{X: offset, Y: vg.Points(2)}
	return l, nil
}

// commandsChart: Redis commands per acquisition, grouped bars by number of Clients, a bar per
// implementation (the in-process mutex sends none and is left out).
func commandsChart(series []sweepSeries, clients []int, setting string) (*chart, error) {
	series = slices.DeleteFunc(slices.Clone(series), func(s sweepSeries) bool { return s.impl == "mutex" })
	if len(series) == 0 {
		return nil, nil
	}
	c := newChart("Contended lock: Redis commands per acquisition (lower is better)\n"+sweepSetting(setting),
		"Clients", "Redis commands per acquisition (inside Lua too)", 26*vg.Centimeter, 13*vg.Centimeter)
	var names []string
	for _, n := range clients {
		names = append(names, fmt.Sprintf("%d Client%s", n, map[bool]string{true: "s"}[n != 1]))
	}
	c.p.NominalX(names...)
	c.p.X.Tick.Label.Font = font.From(sansFont(false), 11)
	c.p.Y.Min = 0
	groupW := 19 * vg.Centimeter / vg.Length(max(len(clients), 1))
	barW := min(groupW*0.85/vg.Length(len(series)), vg.Points(22))
	var labels []plot.Plotter
	for i, s := range series {
		_, st := styleOf(s.impl)
		vs := make(plotter.Values, len(clients))
		xs := make([]float64, len(clients))
		for j, n := range clients {
			xs[j] = float64(j)
			vs[j] = math.NaN()
			if k := slices.IndexFunc(s.rs, func(r *scenarioResult) bool { return r.Goroutines == n }); k >= 0 {
				vs[j] = s.rs[k].CmdsPerAcqAll
			}
		}
		shown := slices.Clone(vs)
		for j := range shown {
			if math.IsNaN(shown[j]) {
				shown[j] = 0 // not measured: no bar (and no label)
			}
		}
		b, err := plotter.NewBarChart(shown, barW)
		if err != nil {
			return nil, err
		}
		b.Color = st.color
		b.LineStyle.Width = 0
		if s.impl == "redisson" {
			b.LineStyle.Width, b.LineStyle.Color = vg.Points(1.5), color.Black // ours outlined
		}
		b.Offset = (vg.Length(i) - vg.Length(len(series)-1)/2) * barW
		c.p.Add(b)
		c.legend.Add(st.label, b)
		l, err := labelsAbove(xs, vs, b.Offset, barLabel)
		if err != nil {
			return nil, err
		}
		labels = append(labels, l)
	}
	c.p.Add(labels...)
	return c, nil
}

// objectsChart: each data object operation's throughput as a ratio of raw go-redis doing the same
// work (1 = the floor), as horizontal bars, the first row on top.
func objectsChart(o *objResult) (*chart, error) {
	if o == nil || len(o.Rows) == 0 {
		return nil, nil
	}
	n := len(o.Rows)
	c := newChart("Data objects against raw go-redis doing the same work (higher is better)\n"+
		"throughput ours ÷ raw, each row alternating the two sides", "throughput: ours ÷ raw go-redis", "",
		24*vg.Centimeter, vg.Length(4+1.4*float64(n))*vg.Centimeter)
	names := make([]string, n)
	vs := make(plotter.Values, n)
	ys := make([]float64, n)
	for i, r := range o.Rows {
		j := n - 1 - i // NominalY puts the first name at the bottom
		names[j] = fmt.Sprintf("%s, %d goroutine%s, batch %d\nraw: %s", r.Op, r.Goroutines,
			map[bool]string{true: "s"}[r.Goroutines != 1], r.Batch, r.RawCmds)
		vs[j], ys[j] = r.Ratio, float64(j)
	}
	c.p.NominalY(names...)
	c.p.Y.Tick.Label.Font = font.From(sansFont(false), 9)
	c.p.X.Tick.Marker = linearTicks
	c.p.X.Min = 0
	_, st := styleOf("redisson")
	b, err := plotter.NewBarChart(vs, vg.Points(20))
	if err != nil {
		return nil, err
	}
	b.Horizontal = true
	b.Color = st.color
	b.LineStyle.Width = 0
	c.p.Add(b)
	c.legend.Add("this library ÷ raw go-redis", b)
	floor, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(n) - 0.5}})
	if err != nil {
		return nil, err
	}
	floor.Color, floor.Width, floor.Dashes = color.Black, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	c.p.Add(floor)
	c.legend.Add("raw go-redis (the floor) = 1", floor)
	var d plotter.XYLabels
	for j, v := range vs {
		d.XYs = append(d.XYs, plotter.XY{X: 0, Y: ys[j]}) // inside the bar, clear of the floor line
		d.Labels = append(d.Labels, strconv.FormatFloat(v, 'f', 2, 64))
	}
	l, err := plotter.NewLabels(d)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sansFont(true), 10)
		l.TextStyle[i].Color = color.White
		l.TextStyle[i].YAlign = text.YCenter
	}
	l.Offset = vg.Point{X: vg.Points(5)}
	c.p.Add(l)
	return c, nil
}
