package screen

import (
	"fmt"
	"html/template"
	"io"
	"math"
)

// The chart is plain SVG drawn here rather than through a plotting
// library: a grouped bar chart is a few rectangles, and the page must be
// self-contained (no script, no font or stylesheet fetched) to be opened
// from a run directory on a machine without network.

type htmlBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type htmlLabel struct {
	X, Y   float64
	Text   string
	Anchor string
}

type htmlChart struct {
	Target        int
	Width, Height float64
	Bars          []htmlBar
	Labels        []htmlLabel
	GridY         []htmlLabel
	BaselineY     *float64
	BaselineText  string
	PlotX, PlotW  float64
}

type htmlPage struct {
	R      *Report
	Charts []htmlChart
	Cmp    *Comparison
}

var htmlFuncs = template.FuncMap{
	"f":      func(p *float64, prec int) string { return fmtF(p, prec) },
	"signed": fmtSigned,
	"i":      fmtI,
	"gib":    gib,
}

var pageTmpl = template.Must(template.New("page").Funcs(htmlFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Screen {{.R.Name}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child{text-align:left}
.decode{fill:#3b6ea5}.e2e{fill:#e39b3b}.grid{stroke:#ddd}.base{stroke:#b00;stroke-dasharray:6 4}
svg text{font:12px system-ui,sans-serif;fill:#333}
.note{color:#666}
</style></head><body>
<h1>Screen {{.R.Name}}</h1>
<p>Run {{.R.RunID}}: {{.R.State}}, {{.R.CompletedMeasurements}} of {{.R.PlannedMeasurements}} measured
({{.R.CountedMeasurements}} counted, {{.R.MarkedMeasurements}} marked), {{.R.FailedMeasurements}} failed.
{{.R.OutputTokens}} output tokens per sample; baseline mode {{.R.Baseline}}.</p>
<p class="note">Decode TPS = generated tokens / server decode seconds (pooled, no prefill).
End-to-end TPS = generated tokens / wall seconds (prefill included). Gains are against the mean of baseline_start and baseline_end.</p>
{{range $c := .Charts}}
<h2>Prompt target {{.Target}} tokens</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" role="img">
{{range .GridY}}<line class="grid" x1="{{$c.PlotX}}" x2="{{.X}}" y1="{{.Y}}" y2="{{.Y}}"/><text x="55" y="{{.Y}}" text-anchor="end" dy="4">{{.Text}}</text>
{{end}}{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{with .BaselineY}}<line class="base" x1="{{$c.PlotX}}" x2="{{$c.PlotW}}" y1="{{.}}" y2="{{.}}"/>{{end}}
{{range .Labels}}<text x="{{.X}}" y="{{.Y}}" text-anchor="{{.Anchor}}">{{.Text}}</text>
{{end}}</svg>
<p class="note"><svg width="12" height="12"><rect class="decode" width="12" height="12"/></svg> decode TPS
<svg width="12" height="12"><rect class="e2e" width="12" height="12"/></svg> end-to-end TPS
{{if .BaselineText}}— dashed: {{.BaselineText}}{{end}}</p>
{{end}}
<h2>Aggregates</h2>
<table><tr><th>mode</th><th>target</th><th>prompt tokens</th><th>samples</th><th>decode TPS</th><th>min</th><th>max</th>
<th>end-to-end TPS</th><th>QPS</th><th>mean wall s</th><th>decode gain %</th><th>e2e gain %</th></tr>
{{range .R.Aggregates}}<tr><td>{{.Mode}}</td><td>{{.PromptTarget}}</td><td>{{f .MeanPromptTokens 0}}</td><td>{{.Samples}}/{{.Planned}}</td>
<td>{{f .DecodeTPS 2}}</td><td>{{f .DecodeTPSMin 2}}</td><td>{{f .DecodeTPSMax 2}}</td><td>{{f .EndToEndTPS 2}}</td>
<td>{{f .RequestQPS 4}}</td><td>{{f .MeanWallSeconds 2}}</td><td>{{signed .DecodeGainPercent}}</td><td>{{signed .EndToEndGainPercent}}</td></tr>
{{end}}</table>
{{if .R.Drift}}<h2>Baseline drift</h2><table><tr><th>target</th><th>start decode</th><th>end decode</th><th>decode drift %</th><th>e2e drift %</th></tr>
{{range .R.Drift}}<tr><td>{{.PromptTarget}}</td><td>{{f .StartDecodeTPS 2}}</td><td>{{f .EndDecodeTPS 2}}</td><td>{{signed .DecodeDriftPercent}}</td><td>{{signed .EndToEndDriftPercent}}</td></tr>
{{end}}</table>{{end}}
{{with .Cmp}}<h2>{{.A}} against {{.B}}</h2><table><tr><th>fixture</th><th>input tokens</th><th>output</th><th>{{.A}} TPS</th><th>{{.B}} TPS</th><th>change %</th><th>{{.A}} wall s</th><th>{{.B}} wall s</th></tr>
{{range .Rows}}<tr><td>{{.Fixture}}</td><td>{{f .InputTokens 0}}</td><td>{{.OutputTokens}}</td><td>{{f .ATPS 2}}</td><td>{{f .BTPS 2}}</td><td>{{signed .ChangePercent}}</td><td>{{f .AWallSeconds 2}}</td><td>{{f .BWallSeconds 2}}</td></tr>
{{end}}</table>{{end}}
<h2>Hardware</h2>
<p>GPU board power: {{if .R.MeasuredGPUMeanW}}mean {{f .R.MeasuredGPUMeanW 1}} W{{else}}unknown{{end}} ({{.R.PowerScope}}).
{{with .R.MemoryPeak}}GPU memory peak: {{printf "%.2f" (gib .UsedBytes)}} GiB used of {{printf "%.2f" (gib .TotalBytes)}} GiB during {{.Stage}}.{{end}}
{{if .R.CPUPeakC}}CPU temperature peak: {{f .R.CPUPeakC 2}} °C.{{end}}</p>
{{range .R.TelemetryNotes}}<p class="note">Unknown {{.}}</p>{{end}}
{{if .R.Marked}}<h2>Marked samples (left out)</h2><ul>{{range .R.Marked}}<li>{{.Key}}: {{range .Marks}}{{.}} {{end}}(predicted_n {{i .PredictedN}} of {{.Requested}})</li>{{end}}</ul>{{end}}
{{if .R.Failed}}<h2>Failed samples</h2><ul>{{range .R.Failed}}<li>{{.Key}}: {{range .Marks}}{{.}}{{end}}</li>{{end}}</ul>{{end}}
</body></html>
`))

// WriteHTML writes a self-contained page: one bar chart per prompt target,
// the aggregates, drift, an optional comparison and the hardware figures.
func (r *Report) WriteHTML(w io.Writer, cmp *Comparison) error {
	page := htmlPage{R: r, Cmp: cmp}
	targets := []int{}
	seen := map[int]bool{}
	for _, a := range r.Aggregates {
		if !seen[a.PromptTarget] {
			seen[a.PromptTarget] = true
			targets = append(targets, a.PromptTarget)
		}
	}
	for _, t := range targets {
		page.Charts = append(page.Charts, r.chart(t))
	}
	return pageTmpl.Execute(w, page)
}

func (r *Report) chart(target int) htmlChart {
	var rows []Aggregate
	top := 0.0
	for _, a := range r.Aggregates {
		if a.PromptTarget != target {
			continue
		}
		rows = append(rows, a)
		for _, v := range []*float64{a.DecodeTPS, a.EndToEndTPS} {
			if v != nil && *v > top {
				top = *v
			}
		}
	}
	const left, groupW, barW, plotH, topPad, bottom = 60.0, 110.0, 36.0, 240.0, 10.0, 60.0
	c := htmlChart{Target: target, PlotX: left}
	c.Width = left + groupW*float64(len(rows)) + 20
	c.Height = topPad + plotH + bottom
	c.PlotW = c.Width - 10
	step := niceStep(top)
	if step == 0 {
		step = 1
	}
	ymax := math.Ceil(top/step) * step
	if ymax == 0 {
		ymax = step
	}
	y := func(v float64) float64 { return topPad + plotH - v/ymax*plotH }
	for v := 0.0; v <= ymax+step/2; v += step {
		c.GridY = append(c.GridY, htmlLabel{X: c.PlotW, Y: round1(y(v)), Text: trimFloat(v)})
	}
	for i, a := range rows {
		x := left + groupW*float64(i) + (groupW-2*barW)/2
		for j, v := range []*float64{a.DecodeTPS, a.EndToEndTPS} {
			if v == nil {
				continue
			}
			class, name := "decode", "decode"
			if j == 1 {
				class, name = "e2e", "end-to-end"
			}
			c.Bars = append(c.Bars, htmlBar{X: round1(x + float64(j)*barW), Y: round1(y(*v)), W: barW - 2,
				H: round1(y(0) - y(*v)), Class: class, Title: fmt.Sprintf("%s %s: %.2f tok/s", a.Mode, name, *v)})
		}
		c.Labels = append(c.Labels, htmlLabel{X: round1(left + groupW*float64(i) + groupW/2), Y: topPad + plotH + 18, Text: a.Mode, Anchor: "middle"})
		if a.DecodeGainPercent != nil {
			c.Labels = append(c.Labels, htmlLabel{X: round1(left + groupW*float64(i) + groupW/2), Y: topPad + plotH + 34,
				Text: fmtSigned(a.DecodeGainPercent) + "%", Anchor: "middle"})
		}
	}
	for _, d := range r.Drift {
		if d.PromptTarget == target && d.MeanDecodeTPS != nil {
			by := round1(y(*d.MeanDecodeTPS))
			c.BaselineY = &by
			c.BaselineText = fmt.Sprintf("baseline mean decode %.2f tok/s", *d.MeanDecodeTPS)
		}
	}
	return c
}

// niceStep picks a grid step of 1, 2 or 5 times a power of ten giving about
// five lines up to top.
func niceStep(top float64) float64 {
	if top <= 0 {
		return 0
	}
	raw := top / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func trimFloat(v float64) string { return fmt.Sprintf("%g", v) }
