package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and inline SVG charts (success rates with Wilson intervals per arm,
// pooled decode TPS per arm, a case x arm grid) followed by the tables. It
// loads nothing: no scripts, fonts, images or style sheets from anywhere.
func WriteHTML(w io.Writer, r *Report) error { return WriteHTMLWith(w, r, nil) }

// WriteHTMLWith is WriteHTML with what the report JSON does not hold: each
// arm's settings and server identity, and (in the viewer) where a grid
// cell's attempts are listed. setup may be nil.
func WriteHTMLWith(w io.Writer, r *Report, setup *Setup) error {
	var link func(c, arm string) string
	if setup != nil {
		link = setup.CellLink
	}
	data := struct {
		R       *Report
		Title   string
		Mixed   []string
		Header  []string
		Setup   template.HTML
		Tables  []table
		Success template.HTML
		TPS     template.HTML
		Grid    template.HTML
		Sweep   template.HTML
	}{r, reportTitle(r), mixedLines(r), headerLines(r), template.HTML(setupHTML(setup)), tables(r), template.HTML(successSVG(r)), template.HTML(tpsSVG(r)), template.HTML(gridSVG(r, link)), template.HTML(sweepSVG(r))}
	return pageTemplate.Execute(w, data)
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}{{if .R.Baseline}}: baseline {{.R.Baseline}}{{end}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#1a202c;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin:0 0 8px}
h2{font-size:1.15em;margin:28px 0 8px;border-bottom:1px solid #e2e8f0;padding-bottom:4px}
.meta{color:#4a5568;font-size:.9em;margin:2px 0}
.mixed{background:#fff5f5;border:2px solid #c53030;color:#742a2a;padding:8px 12px;margin:12px 0;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
figure{margin:0}
figcaption{font-size:.9em;color:#2d3748;margin-bottom:4px;font-weight:600}
svg text{font-family:inherit}
table{border-collapse:collapse;font-size:.88em;margin:4px 0 8px}
.scroll{overflow-x:auto;max-width:100%}
th,td{border:1px solid #e2e8f0;padding:4px 8px;text-align:right;white-space:nowrap}
td:last-child{white-space:normal}
th{background:#f7fafc}
td:first-child,th:first-child{text-align:left}
ul.words li{margin:4px 0}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Mixed}}<div class="mixed" id="mixed">{{.}}</div>
{{end}}{{range .Header}}<p class="meta">{{.}}</p>
{{end}}{{.Setup}}
<div class="charts">
<figure id="chart-success"><figcaption>Success rate per arm, 95% Wilson intervals</figcaption>{{.Success}}</figure>
<figure id="chart-tps"><figcaption>Pooled decode and task-output TPS per arm, 95% case bootstrap intervals</figcaption>{{.TPS}}</figure>
</div>
<figure id="chart-grid"><figcaption>Per case and arm: functional / delivered of scored attempts</figcaption>{{.Grid}}</figure>{{.Sweep}}
{{range .Tables}}<h2>{{.Title}}</h2>
<div class="scroll"><table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}{{if .R.Notes}}<h2>In words</h2>
<ul class="words">
{{range .R.Notes}}<li>{{.}}</li>
{{end}}</ul>
{{end}}<h2>Legend</h2>
<dl class="legend" id="legend">
{{range .R.Legend}}<dt>{{.Term}}</dt><dd>{{.Meaning}}</dd>
{{end}}</dl>
</body>
</html>
`))

// Chart colours: functional, delivered, task TPS, the grid's scale and the
// timing-source mark.
const (
	colFunctional = "#2b6cb0"
	colDelivered  = "#38a169"
	colDecode     = "#2c5282"
	colTask       = "#90cdf4"
	colAxis       = "#4a5568"
	colGrid       = "#e2e8f0"
	colNull       = "#edf2f7"
	colMark       = "#c05621" // a decode TPS that is not purely server-timed
)

func esc(s string) string { return html.EscapeString(s) }

func num(v float64) string { return fmt.Sprintf("%.1f", v) }

// successSVG draws, per arm, a functional and a delivered bar with a
// whisker for the Wilson interval.
func successSVG(r *Report) string {
	const left, top, plotH, barW = 44.0, 16.0, 200.0, 40.0
	group := 132.0
	for _, a := range r.Arms {
		group = math.Max(group, textWidth(a.Arm, 12)+16)
	}
	width := left + group*float64(max(len(r.Arms), 1)) + 12
	height := top + plotH + 64
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="success rate per arm">`, num(width), num(height), num(width), num(height))
	b.WriteString(`<title>Success rate per arm with 95% Wilson intervals</title>`)
	y := func(p float64) float64 { return top + plotH*(1-p) }
	for _, p := range []float64{0, .25, .5, .75, 1} {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, num(left), num(y(p)), num(width-8), num(y(p)), colGrid)
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="%s">%d%%</text>`, num(left-6), num(y(p)+4), colAxis, int(p*100))
	}
	for i, a := range r.Arms {
		x0 := left + group*float64(i) + (group-2*barW-10)/2
		for j, s := range []struct {
			name, col string
			rate      Rate
		}{{"functional", colFunctional, a.Functional}, {"delivered", colDelivered, a.Delivered}} {
			x := x0 + float64(j)*(barW+10)
			cx := x + barW/2
			if s.rate.Rate == nil {
				fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="%s">no scored</text>`, num(cx), num(y(0)-6), colAxis)
				continue
			}
			p, lo, hi := *s.rate.Rate, *s.rate.Low, *s.rate.High
			fmt.Fprintf(&b, `<rect class="bar %s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`,
				s.name, num(x), num(y(p)), num(barW), num(plotH*p), s.col, esc(a.Arm), s.name, esc(fmtRate(s.rate)))
			fmt.Fprintf(&b, `<line class="whisker" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a202c" stroke-width="1.5"/>`, num(cx), num(y(hi)), num(cx), num(y(lo)))
			for _, v := range []float64{lo, hi} {
				fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a202c" stroke-width="1.5"/>`, num(cx-7), num(y(v)), num(cx+7), num(y(v)))
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="#1a202c">%d/%d</text>`, num(cx), num(y(0)+14), s.rate.Count, s.rate.Of)
		}
		fmt.Fprintf(&b, `<text class="arm" x="%s" y="%s" font-size="12" font-weight="600" text-anchor="middle" fill="#1a202c">%s</text>`,
			num(x0+barW+5), num(y(0)+32), esc(a.Arm))
	}
	lx := left
	for _, s := range []struct{ name, col string }{{"functional", colFunctional}, {"delivered", colDelivered}} {
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="10" height="10" fill="%s"/><text x="%s" y="%s" font-size="11" fill="%s">%s</text>`,
			num(lx), num(height-14), s.col, num(lx+14), num(height-5), colAxis, s.name)
		lx += 90
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// tpsSVG draws, per arm, a bar of pooled decode TPS and a thinner one of
// task-output TPS on a shared scale.
func tpsSVG(r *Report) string {
	const top, rowH, plotW = 30.0, 46.0, 360.0
	left := 60.0
	for _, a := range r.Arms {
		left = math.Max(left, textWidth(armLabel(r, a.Arm), 12)+16)
		if m := timingMark(a.TimingsSource); m != "" && a.DecodeTPS != nil {
			left = math.Max(left, textWidth(m, 10)+16)
		}
	}
	width := left + plotW + 110
	height := top + rowH*float64(max(len(r.Arms), 1)) + 30
	maxV := 0.0
	for _, a := range r.Arms {
		for _, v := range []*float64{a.DecodeTPS, a.TaskOutputTPS, intervalHigh(a.DecodeTPSInterval), intervalHigh(a.TaskOutputTPSInterval)} {
			if v != nil && *v > maxV {
				maxV = *v
			}
		}
	}
	// The axis runs just past the data (a 1-1.2-1.5-2-2.5-3-4-5-6-8 step),
	// not to the next 1-2-5 power that could leave most of it empty.
	scale := niceCeil(maxV)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="decode TPS per arm">`, num(width), num(height), num(width), num(height))
	b.WriteString(`<title>Pooled decode TPS and task-output TPS per arm</title>`)
	xs := func(v float64) float64 { return left + plotW*v/scale }
	for k := 0; k <= 4; k++ {
		v := scale * float64(k) / 4
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, num(xs(v)), num(top), num(xs(v)), num(height-24), colGrid)
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="%s">%s</text>`, num(xs(v)), num(height-10), colAxis, trimFloat(v))
	}
	for i, a := range r.Arms {
		y0 := top + rowH*float64(i)
		label := armLabel(r, a.Arm)
		fmt.Fprintf(&b, `<text class="arm" x="%s" y="%s" font-size="12" font-weight="600" text-anchor="end" fill="#1a202c">%s</text>`, num(left-8), num(y0+17), esc(label))
		if m := timingMark(a.TimingsSource); m != "" && a.DecodeTPS != nil {
			// Under the arm's name: its decode TPS is not purely server-timed.
			fmt.Fprintf(&b, `<text class="timing" x="%s" y="%s" font-size="10" font-style="italic" text-anchor="end" fill="%s">%s</text>`, num(left-8), num(y0+31), colMark, esc(m))
		}
		if a.DecodeTPS == nil {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="%s">no measured attempts</text>`, num(left+4), num(y0+17), colAxis)
			continue
		}
		d := *a.DecodeTPS
		fmt.Fprintf(&b, `<rect class="bar decode" x="%s" y="%s" width="%s" height="20" fill="%s"><title>%s decode TPS %s</title></rect>`,
			num(left), num(y0+4), num(xs(d)-left), colDecode, esc(a.Arm), esc(fmtDecodeTPS(&a.Stats)))
		gain := ""
		if a.DecodeTPSGainPercent != nil {
			gain = " (" + fmtGain(a.DecodeTPSGainPercent) + ")"
		}
		textX := xs(d) + 5
		if iv := a.DecodeTPSInterval; iv != nil && iv.Low != nil && iv.High != nil {
			b.WriteString(whisker(xs(*iv.Low), xs(*iv.High), y0+14, 7, "decode", fmt.Sprintf("%s decode TPS 95%% interval %.2f to %.2f over %d cases", a.Arm, *iv.Low, *iv.High, iv.Cases)))
			textX = math.Max(textX, xs(*iv.High)+5)
		}
		fmt.Fprintf(&b, `<text class="value" x="%s" y="%s" font-size="11" fill="#1a202c">%s%s</text>`, num(textX), num(y0+18), fmtF(a.DecodeTPS, 2), esc(gain))
		if a.TaskOutputTPS != nil {
			t := *a.TaskOutputTPS
			fmt.Fprintf(&b, `<rect class="bar task" x="%s" y="%s" width="%s" height="10" fill="%s"><title>%s task-output TPS %s</title></rect>`,
				num(left), num(y0+26), num(xs(t)-left), colTask, esc(a.Arm), fmtF(a.TaskOutputTPS, 2))
			tx := xs(t) + 5
			if iv := a.TaskOutputTPSInterval; iv != nil && iv.Low != nil && iv.High != nil {
				b.WriteString(whisker(xs(*iv.Low), xs(*iv.High), y0+31, 5, "task", fmt.Sprintf("%s task-output TPS 95%% interval %.2f to %.2f over %d cases", a.Arm, *iv.Low, *iv.High, iv.Cases)))
				tx = math.Max(tx, xs(*iv.High)+5)
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" fill="%s">%s</text>`, num(tx), num(y0+35), colAxis, fmtF(a.TaskOutputTPS, 2))
		}
	}
	fmt.Fprintf(&b, `<rect x="%s" y="4" width="10" height="10" fill="%s"/><text x="%s" y="13" font-size="11" fill="%s">decode TPS</text>`,
		num(left), colDecode, num(left+14), colAxis)
	fmt.Fprintf(&b, `<rect x="%s" y="4" width="10" height="10" fill="%s"/><text x="%s" y="13" font-size="11" fill="%s">task-output TPS</text>`,
		num(left+100), colTask, num(left+114), colAxis)
	b.WriteString(`</svg>`)
	return b.String()
}

// gridSVG draws one cell per case and arm, coloured by the functional rate
// (grey when nothing was scored) and labelled functional / delivered.
func gridSVG(r *Report, link func(c, arm string) string) string {
	const top, cellH = 30.0, 26.0
	left, cellW := 60.0, 110.0
	for _, c := range r.Cases {
		left = math.Max(left, textWidth(c.Case, 12)+16)
	}
	for _, a := range r.Arms {
		cellW = math.Max(cellW, textWidth(a.Arm, 12)+12)
	}
	width := left + cellW*float64(max(len(r.Arms), 1)) + 8
	height := top + cellH*float64(max(len(r.Cases), 1)) + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="per case and arm grid">`, num(width), num(height), num(width), num(height))
	b.WriteString(`<title>Functional and delivered per case and arm</title>`)
	for j, a := range r.Arms {
		fmt.Fprintf(&b, `<text class="arm" x="%s" y="%s" font-size="12" font-weight="600" text-anchor="middle" fill="#1a202c">%s</text>`,
			num(left+cellW*float64(j)+cellW/2), num(top-10), esc(a.Arm))
	}
	for i, c := range r.Cases {
		y := top + cellH*float64(i)
		fmt.Fprintf(&b, `<text class="case" x="%s" y="%s" font-size="12" text-anchor="end" fill="#1a202c">%s</text>`, num(left-8), num(y+17), esc(c.Case))
		for j, ca := range c.Arms {
			x := left + cellW*float64(j)
			fill, label, ink := colNull, dash, colAxis
			if ca.Functional.Rate != nil {
				fill, ink = rateColour(*ca.Functional.Rate), "#1a202c"
				label = fmtCount(ca.Functional) + " / " + fmtCount(ca.Delivered)
			}
			if link != nil {
				fmt.Fprintf(&b, `<a class="cell-link" href="%s">`, esc(link(c.Case, ca.Arm)))
			}
			fmt.Fprintf(&b, `<rect class="cell" x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#fff" stroke-width="2"><title>%s, %s: functional %s, delivered %s</title></rect>`,
				num(x), num(y), num(cellW), num(cellH), fill, esc(c.Case), esc(ca.Arm), esc(fmtCount(ca.Functional)), esc(fmtCount(ca.Delivered)))
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="12" text-anchor="middle" fill="%s">%s</text>`, num(x+cellW/2), num(y+17), ink, esc(label))
			if link != nil {
				b.WriteString(`</a>`)
			}
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// rateColour runs from red (0) through amber to green (1), light enough to
// read dark text on.
func rateColour(p float64) string {
	type rgb struct{ r, g, b float64 }
	stops := []rgb{{0xfe, 0xb2, 0xb2}, {0xfa, 0xf0, 0x89}, {0x9a, 0xe6, 0xb4}}
	p = math.Max(0, math.Min(1, p))
	seg := p * 2
	i := int(seg)
	if i >= 2 {
		i = 1
	}
	t := seg - float64(i)
	a, c := stops[i], stops[i+1]
	mix := func(x, y float64) int { return int(math.Round(x + (y-x)*t)) }
	return fmt.Sprintf("#%02x%02x%02x", mix(a.r, c.r), mix(a.g, c.g), mix(a.b, c.b))
}

// niceCeil rounds v up to a round step (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6
// or 8 times a power of ten; 10 at least), so an axis ends near its data.
func niceCeil(v float64) float64 {
	if v <= 10 {
		return 10
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func intervalHigh(iv *Interval) *float64 {
	if iv == nil {
		return nil
	}
	return iv.High
}

// whisker draws an interval as a line with end caps.
func whisker(x1, x2, y, half float64, class, title string) string {
	return fmt.Sprintf(`<g class="whisker %s"><title>%s</title><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a202c" stroke-width="1.5"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a202c"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a202c"/></g>`,
		class, esc(title), num(x1), num(y), num(x2), num(y), num(x1), num(y-half), num(x1), num(y+half), num(x2), num(y-half), num(x2), num(y+half))
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

func armLabel(r *Report, arm string) string {
	if arm == r.Baseline {
		return arm + " (baseline)"
	}
	return arm
}

// textWidth estimates the rendered width of s at a font size: SVG text does
// not wrap or measure itself, so layout leaves room for the longest label.
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * 0.62
}
