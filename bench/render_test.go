package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"codeberg.org/go-fonts/dejavu/dejavusans"
	"codeberg.org/go-fonts/dejavu/dejavusansbold"
	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

var chartDir = flag.String("chartdir", "", "TestChartTextsInsideCanvas: also check the SVG files in this directory (e.g. charts, the checked-in ones)")

// box is a rectangle in the chart's user units (SVG viewBox: x to the right, y down).
type box struct{ x0, y0, x1, y1 float64 }

func (b box) String() string {
	return fmt.Sprintf("[%.1f,%.1f]×[%.1f,%.1f]", b.x0, b.x1, b.y0, b.y1)
}

// overlaps reports whether b and o share more than tol in both directions.
func (b box) overlaps(o box, tol float64) bool {
	return min(b.x1, o.x1)-max(b.x0, o.x0) > tol && min(b.y1, o.y1)-max(b.y0, o.y0) > tol
}

func (b box) union(o box) box {
	return box{min(b.x0, o.x0), min(b.y0, o.y0), max(b.x1, o.x1), max(b.y1, o.y1)}
}

// within reports whether b lies inside o, give or take tol.
func (b box) within(o box, tol float64) bool {
	return b.x0 >= o.x0-tol && b.y0 >= o.y0-tol && b.x1 <= o.x1+tol && b.y1 <= o.y1+tol
}

// affine is the SVG transform matrix(a b c d e f): (x, y) -> (ax+cy+e, bx+dy+f).
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

func (m affine) mul(n affine) affine { // m then applied to the result of n
	return affine{
		m[0]*n[0] + m[2]*n[1], m[1]*n[0] + m[3]*n[1],
		m[0]*n[2] + m[2]*n[3], m[1]*n[2] + m[3]*n[3],
		m[0]*n[4] + m[2]*n[5] + m[4], m[1]*n[4] + m[3]*n[5] + m[5],
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

// boxOf returns the bounding box of b's corners transformed by m.
func (m affine) boxOf(b box) box {
	out := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, c := range [][2]float64{{b.x0, b.y0}, {b.x1, b.y0}, {b.x0, b.y1}, {b.x1, b.y1}} {
		x, y := m.apply(c[0], c[1])
		out = out.union(box{x, y, x, y})
	}
	return out
}

var transformRE = regexp.MustCompile(`(\w+)\s*\(([^)]*)\)`)

// parseTransform parses an SVG transform attribute (matrix, translate, scale, rotate).
func parseTransform(s string) (affine, error) {
	m := identity
	for _, f := range transformRE.FindAllStringSubmatch(s, -1) {
		var a []float64
		for _, v := range strings.FieldsFunc(f[2], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return m, fmt.Errorf("transform %q: %w", s, err)
			}
			a = append(a, x)
		}
		arg := func(i int, def float64) float64 {
			if i < len(a) {
				return a[i]
			}
			return def
		}
		var t affine
		switch f[1] {
		case "matrix":
			if len(a) != 6 {
				return m, fmt.Errorf("transform %q: matrix needs 6 numbers", s)
			}
			copy(t[:], a)
		case "translate":
			t = affine{1, 0, 0, 1, arg(0, 0), arg(1, 0)}
		case "scale":
			t = affine{arg(0, 1), 0, 0, arg(1, arg(0, 1)), 0, 0}
		case "rotate":
			if len(a) > 1 {
				return m, fmt.Errorf("transform %q: rotate about a point not handled", s)
			}
			sin, cos := math.Sincos(arg(0, 0) * math.Pi / 180)
			t = affine{cos, sin, -sin, cos, 0, 0}
		default:
			return m, fmt.Errorf("transform %q: %s not handled", s, f[1])
		}
		m = m.mul(t)
	}
	return m, nil
}

// svgText is one <text> element of a chart.
type svgText struct {
	content  string
	x, y     float64
	m        affine   // the element's and its ancestors' transforms: text coordinates to user units
	size     float64  // font-size, user units
	bold     bool     // font-weight bold
	anchor   string   // text-anchor: start, middle, end
	raw      []byte   // the element as written
	ancestry [][]byte // the start tags of its ancestors below <svg>, outermost first
}

func (t svgText) String() string {
	return fmt.Sprintf("%q (x=%g y=%g)", t.content, t.x, t.y)
}

// chartSVG is a chart file read for its canvas and texts.
type chartSVG struct {
	canvas box // the viewBox
	texts  []svgText
}

var styleSizeRE = regexp.MustCompile(`font-size:\s*([0-9.]+)(px)?`)

// readChartSVG reads the viewBox and every <text> of an SVG file (as gonum's vgsvg writes them:
// position in x and y, font in the style attribute, no tspan).
func readChartSVG(data []byte) (*chartSVG, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var out chartSVG
	type open struct {
		raw []byte
		m   affine
	}
	var stack []open
	var cur *svgText
	var curStart int64
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		end := d.InputOffset()
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			m := identity
			if len(stack) > 0 {
				m = stack[len(stack)-1].m
			}
			if t, ok := attr["transform"]; ok {
				tm, err := parseTransform(t)
				if err != nil {
					return nil, err
				}
				m = m.mul(tm)
			}
			if tok.Name.Local == "svg" && len(stack) == 0 {
				var vb []float64
				for _, v := range strings.Fields(strings.ReplaceAll(attr["viewBox"], ",", " ")) {
					f, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return nil, fmt.Errorf("viewBox %q: %w", attr["viewBox"], err)
					}
					vb = append(vb, f)
				}
				if len(vb) != 4 {
					return nil, fmt.Errorf("viewBox %q: want 4 numbers", attr["viewBox"])
				}
				out.canvas = box{vb[0], vb[1], vb[0] + vb[2], vb[1] + vb[3]}
			}
			if tok.Name.Local == "text" {
				if cur != nil {
					return nil, errors.New("nested <text>")
				}
				t := svgText{m: m, anchor: cmpOr(attr["text-anchor"], "start")}
				if t.x, err = strconv.ParseFloat(attr["x"], 64); err != nil {
					return nil, fmt.Errorf("<text> x %q: %w", attr["x"], err)
				}
				if t.y, err = strconv.ParseFloat(attr["y"], 64); err != nil {
					return nil, fmt.Errorf("<text> y %q: %w", attr["y"], err)
				}
				style := attr["style"]
				sm := styleSizeRE.FindStringSubmatch(style)
				if sm == nil {
					return nil, fmt.Errorf("<text> without font-size: %q", style)
				}
				t.size, _ = strconv.ParseFloat(sm[1], 64)
				t.bold = strings.Contains(style, "font-weight:bold")
				for _, a := range stack[1:] {
					t.ancestry = append(t.ancestry, a.raw)
				}
				cur, curStart = &t, off
			}
			stack = append(stack, open{data[off:end], m})
		case xml.CharData:
			if cur != nil {
				cur.content += string(tok)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if tok.Name.Local == "text" && cur != nil {
				cur.raw = data[curStart:end]
				out.texts = append(out.texts, *cur)
				cur = nil
			}
		}
	}
	if out.canvas == (box{}) {
		return nil, errors.New("no <svg> viewBox")
	}
	return &out, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// metricFaces are the regular and bold fonts of the charts' font-family list that the test can
// measure with: DejaVu Sans (the widest) and Liberation Sans (Arial's and Helvetica's widths).
var metricFaces = sync.OnceValue(func() [2][]*opentype.Font {
	var out [2][]*opentype.Font
	for i, ttfs := range [2][][]byte{{dejavusans.TTF, liberationsansregular.TTF}, {dejavusansbold.TTF, liberationsansbold.TTF}} {
		for _, ttf := range ttfs {
			f, err := opentype.Parse(ttf)
			if err != nil {
				panic(err)
			}
			out[i] = append(out[i], f)
		}
	}
	return out
})

// metricBox returns the bounding box of t in user units from the advance width and the ink of
// each font of metricFaces (their union), positioned as the renderer does with t's text-anchor.
func metricBox(t svgText) (box, error) {
	faces := metricFaces()[0]
	if t.bold {
		faces = metricFaces()[1]
	}
	b := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, f := range faces {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: t.size, DPI: 72, Hinting: xfont.HintingNone})
		if err != nil {
			return b, err
		}
		ink, adv := xfont.BoundString(face, t.content)
		face.Close()
		shift := 0.0
		switch t.anchor {
		case "middle":
			shift = -fix(adv) / 2
		case "end":
			shift = -fix(adv)
		}
		// In the text's coordinates y grows downwards from the baseline, as the font's.
		local := box{t.x + shift + min(0, fix(ink.Min.X)), t.y + fix(ink.Min.Y), t.x + shift + max(fix(adv), fix(ink.Max.X)), t.y + fix(ink.Max.Y)}
		b = b.union(t.m.boxOf(local))
	}
	return b, nil
}

func fix(v fixed.Int26_6) float64 { return float64(v) / 64 }

// rendered is what renderTexts found of one text.
type rendered struct {
	window box  // where it was looked for (user units)
	ink    box  // its ink's bounding box, if ok
	ok     bool // some ink in the window
}

// renderTexts renders each text alone, in its window (user units), with rsvg-convert, and returns
// the bounding box of each one's ink (pixels of any but faint opacity). The windows are laid out
// side by side in one SVG, each a nested <svg> (which clips to it), so that rsvg-convert runs once:
// it takes about 0.15 s to start. The background is transparent: white text is found like black.
func renderTexts(rsvg string, texts []svgText, windows []box) ([]rendered, error) {
	const (
		zoom = 3    // pixels per user unit
		rowW = 3000 // pixels
		gap  = 4    // pixels between windows
	)
	type place struct{ x, y, w, h int }
	places := make([]place, len(texts))
	x, y, rowH, width := 0, 0, 0, 0
	for i, w := range windows {
		pw, ph := int(math.Ceil((w.x1-w.x0)*zoom)), int(math.Ceil((w.y1-w.y0)*zoom))
		if x > 0 && x+pw > rowW {
			x, y, rowH = 0, y+rowH+gap, 0
		}
		places[i] = place{x, y, pw, ph}
		x += pw + gap
		rowH, width = max(rowH, ph), max(width, x)
	}
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", width, y+rowH, width, y+rowH)
	for i, t := range texts {
		w, p := windows[i], places[i]
		fmt.Fprintf(&doc, `<svg x="%d" y="%d" width="%d" height="%d" viewBox="%g %g %g %g" preserveAspectRatio="none">`,
			p.x, p.y, p.w, p.h, w.x0, w.y0, w.x1-w.x0, w.y1-w.y0)
		for _, a := range t.ancestry {
			doc.Write(a)
		}
		doc.Write(t.raw)
		for range t.ancestry {
			doc.WriteString("</g>")
		}
		doc.WriteString("</svg>\n")
	}
	doc.WriteString("</svg>\n")
	cmd := exec.Command(rsvg, "-f", "png")
	cmd.Stdin = &doc
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("rsvg-convert: %w: %s", err, stderr.Bytes())
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	nrgba, ok := img.(*image.NRGBA)
	if !ok {
		b := img.Bounds()
		nrgba = image.NewNRGBA(b)
		draw.Draw(nrgba, b, img, b.Min, draw.Src)
	}
	res := make([]rendered, len(texts))
	for i, p := range places {
		w := windows[i]
		px := image.Rectangle{Min: image.Pt(p.x+p.w, p.y+p.h), Max: image.Pt(p.x, p.y)}
		for yy := p.y; yy < p.y+p.h; yy++ {
			row := nrgba.Pix[nrgba.PixOffset(p.x, yy):]
			for xx := 0; xx < p.w; xx++ {
				if row[4*xx+3] > 16 { // more than faint anti-aliasing
					px = px.Union(image.Rect(p.x+xx, yy, p.x+xx+1, yy+1))
				}
			}
		}
		res[i].window = w
		if px.Empty() {
			continue
		}
		sx, sy := (w.x1-w.x0)/float64(p.w), (w.y1-w.y0)/float64(p.h)
		res[i].ok = true
		res[i].ink = box{w.x0 + float64(px.Min.X-p.x)*sx, w.y0 + float64(px.Min.Y-p.y)*sy,
			w.x0 + float64(px.Max.X-p.x)*sx, w.y0 + float64(px.Max.Y-p.y)*sy}
	}
	return res, nil
}

// chartFiles returns the chart files to check: those writeCharts draws of chartTestReport into a
// temporary directory, then those of -chartdir.
func chartFiles(t *testing.T) []string {
	dir := t.TempDir()
	files, err := writeCharts(dir, chartTestReport())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("writeCharts wrote %v, want 4 charts", files)
	}
	if *chartDir != "" {
		more, err := filepath.Glob(filepath.Join(*chartDir, "*.svg"))
		if err != nil || len(more) == 0 {
			t.Fatalf("-chartdir %s: no SVG files (%v)", *chartDir, err)
		}
		files = append(files, more...)
	}
	return files
}

// TestChartTextsInsideCanvas checks that every text of every chart lies inside the canvas (the
// SVG's viewBox): its position (the anchor point of x and y, after the transforms); its box as
// measured with the fonts of the font-family list the test has (DejaVu Sans, Liberation Sans);
// and, with rsvg-convert (librsvg2-bin; required when REDISTEST_REQUIRE=1, as under make test),
// the ink of the text rendered alone with the fonts of this machine.
func TestChartTextsInsideCanvas(t *testing.T) {
	rsvg, rsvgErr := exec.LookPath("rsvg-convert")
	if rsvgErr != nil && os.Getenv("REDISTEST_REQUIRE") == "1" {
		t.Fatalf("rsvg-convert not found (REDISTEST_REQUIRE=1): install it with apt-get install librsvg2-bin (make deps does): %v", rsvgErr)
	}
	for _, path := range chartFiles(t) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel() // rsvg-convert runs in each
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			svg, err := readChartSVG(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(svg.texts) == 0 {
				t.Fatalf("%s: no text", path)
			}
			canvas := svg.canvas
			metric := make([]box, len(svg.texts))
			for i, tx := range svg.texts {
				if x, y := tx.m.apply(tx.x, tx.y); !(box{x, y, x, y}).within(canvas, 0) {
					t.Errorf("%s: text %v at (%.1f, %.1f): outside the canvas %v", path, tx, x, y, canvas)
				}
				if metric[i], err = metricBox(tx); err != nil {
					t.Fatal(err)
				}
				if !metric[i].within(canvas, 0) {
					t.Errorf("%s: text %v: measured box %v outside the canvas %v", path, tx, metric[i], canvas)
				}
			}
			if rsvgErr != nil {
				t.Skipf("rendering skipped: rsvg-convert not found (apt-get install librsvg2-bin): %v", rsvgErr)
			}
			windows := make([]box, len(svg.texts))
			for i, m := range metric {
				// A window around the text's measured box, wide enough for a font half as wide
				// again; ink at its edge may go on beyond it.
				mx, my := 10+(m.x1-m.x0)/4, 10+(m.y1-m.y0)/4
				windows[i] = box{m.x0 - mx, m.y0 - my, m.x1 + mx, m.y1 + my}
			}
			results, err := renderTexts(rsvg, svg.texts, windows)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for i, r := range results {
				tx, win := svg.texts[i], r.window
				switch {
				case !r.ok:
					if strings.TrimSpace(tx.content) != "" {
						t.Errorf("%s: text %v: rendered no ink in %v (measured %v)", path, tx, win, metric[i])
					}
				case !r.ink.within(box{win.x0 + 0.5, win.y0 + 0.5, win.x1 - 0.5, win.y1 - 0.5}, 0):
					t.Errorf("%s: text %v: rendered ink %v reaches the edge of the window %v around its measured box %v", path, tx, r.ink, win, metric[i])
				case !r.ink.within(canvas, 0.5):
					t.Errorf("%s: text %v: rendered ink %v outside the canvas %v", path, tx, r.ink, canvas)
				}
			}
			for i := range results {
				for j := i + 1; j < len(results); j++ {
					if results[i].ok && results[j].ok && results[i].ink.overlaps(results[j].ink, 0.5) {
						t.Errorf("%s: texts %v and %v overlap: rendered ink %v and %v", path, svg.texts[i], svg.texts[j], results[i].ink, results[j].ink)
					}
				}
			}
		})
	}
}
