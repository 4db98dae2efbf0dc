package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// SweepReport is a sweep's trend: one point per expanded arm, ordered by
// the value (numerically when one field is swept over numbers, else as
// declared), with the arm's pooled figures.
type SweepReport struct {
	Name   string      `json:"name"`
	Fields []string    `json:"fields"`
	Points []SweepStat `json:"points"`
}

// SweepStat is one point of a sweep.
type SweepStat struct {
	Arm           string            `json:"arm"`
	Values        []json.RawMessage `json:"values"`
	Scored        int               `json:"scored"`
	Measured      int               `json:"measured"`
	DecodeTPS     *float64          `json:"decode_tps"`
	TaskOutputTPS *float64          `json:"task_output_tps"`
	Functional    Rate              `json:"functional"`
	Delivered     Rate              `json:"delivered"`
}

// planSweeps reads the sweeps a registered plan recorded (none for plans
// without sweeps, or run kinds whose plan has no such field).
func planSweeps(data []byte) ([]evalctl.SweepRecord, error) {
	var p evalctl.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return p.Sweeps, nil
}

func readPlanSweeps(dir string) ([]evalctl.SweepRecord, error) {
	data, err := os.ReadFile(filepath.Join(dir, runstore.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("read plan of %s: %w", dir, err)
	}
	s, err := planSweeps(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, runstore.PlanFile), err)
	}
	return s, nil
}

// numericKeys returns the sweep's values as numbers when it sweeps one
// field over numbers only.
func numericKeys(s evalctl.SweepRecord) ([]float64, bool) {
	if len(s.Fields) != 1 {
		return nil, false
	}
	keys := make([]float64, len(s.Arms))
	for i, p := range s.Arms {
		if len(p.Values) != 1 {
			return nil, false
		}
		v := bytes.TrimSpace(p.Values[0])
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || strings.ContainsAny(string(v), `"`) {
			return nil, false
		}
		keys[i] = f
	}
	return keys, true
}

// sweepOrdered returns s's arms in trend order: by value when numeric
// (ties as declared), else as declared.
func sweepOrdered(s evalctl.SweepRecord) []evalctl.SweepPoint {
	pts := append([]evalctl.SweepPoint(nil), s.Arms...)
	if keys, ok := numericKeys(s); ok {
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
		out := make([]evalctl.SweepPoint, len(pts))
		for i, j := range idx {
			out[i] = pts[j]
		}
		return out
	}
	return pts
}

// orderSweeps reorders arm names so that each sweep's arms stand in trend
// order, in the places its arms took in first-met order; other arms keep
// their places. The first sweep naming an arm decides.
func orderSweeps(names []string, sweeps []evalctl.SweepRecord) []string {
	out := append([]string(nil), names...)
	pos := map[string]int{}
	for i, n := range out {
		pos[n] = i
	}
	taken := map[string]bool{}
	for _, s := range sweeps {
		var ordered []string
		var places []int
		for _, p := range sweepOrdered(s) {
			if i, ok := pos[p.Arm]; ok && !taken[p.Arm] {
				taken[p.Arm] = true
				ordered = append(ordered, p.Arm)
				places = append(places, i)
			}
		}
		sort.Ints(places)
		for k, i := range places {
			out[i] = ordered[k]
		}
	}
	return out
}

// sweepReports builds each sweep's trend from the arms' pooled figures.
func sweepReports(r *Report, sweeps []evalctl.SweepRecord) []SweepReport {
	out := []SweepReport{}
	taken := map[string]bool{}
	for _, s := range sweeps {
		sr := SweepReport{Name: s.Name, Fields: s.Fields, Points: []SweepStat{}}
		for _, p := range sweepOrdered(s) {
			a := r.Arm(p.Arm)
			if a == nil || taken[p.Arm] {
				continue
			}
			taken[p.Arm] = true
			sr.Points = append(sr.Points, SweepStat{Arm: p.Arm, Values: p.Values, Scored: a.Scored, Measured: a.Measured,
				DecodeTPS: a.DecodeTPS, TaskOutputTPS: a.TaskOutputTPS, Functional: a.Functional, Delivered: a.Delivered})
		}
		if len(sr.Points) > 0 {
			out = append(out, sr)
		}
	}
	return out
}

// sweepTables are the trend tables of the text formats.
func sweepTables(r *Report) []table {
	var ts []table
	for _, s := range r.Sweeps {
		t := table{Title: fmt.Sprintf("Sweep %s over %s (ordered by value)", s.Name, strings.Join(s.Fields, " x ")),
			Header: []string{"arm", "value", "scored", "measured", "decode TPS", "task TPS", "functional", "delivered"}}
		for _, p := range s.Points {
			vals := make([]string, len(p.Values))
			for i, v := range p.Values {
				vals[i] = string(v)
			}
			t.Rows = append(t.Rows, []string{p.Arm, strings.Join(vals, " x "), strconv.Itoa(p.Scored), strconv.Itoa(p.Measured),
				fmtF(p.DecodeTPS, 2), fmtF(p.TaskOutputTPS, 2), fmtRate(p.Functional), fmtRate(p.Delivered)})
		}
		ts = append(ts, t)
	}
	return ts
}

// sweepSVG draws each sweep's trend as line charts: functional and
// delivered rates with their 95% Wilson intervals (whiskers), and decode
// TPS, against the swept value in trend order.
func sweepSVG(r *Report) string {
	var b strings.Builder
	for si, s := range r.Sweeps {
		n := len(s.Points)
		if n == 0 {
			continue
		}
		const w, h, left, right, top, bottom = 560.0, 260.0, 48.0, 56.0, 16.0, 44.0
		pw, ph := w-left-right, h-top-bottom
		x := func(i int) float64 {
			if n == 1 {
				return left + pw/2
			}
			return left + pw*float64(i)/float64(n-1)
		}
		yRate := func(v float64) float64 { return top + ph*(1-v) }
		maxTPS := 0.0
		for _, p := range s.Points {
			if p.DecodeTPS != nil && *p.DecodeTPS > maxTPS {
				maxTPS = *p.DecodeTPS
			}
		}
		maxTPS = niceCeil(maxTPS)
		yTPS := func(v float64) float64 { return top + ph*(1-v/maxTPS) }
		fmt.Fprintf(&b, `<figure id="chart-sweep-%d"><figcaption>Sweep %s over %s: success rates (95%% Wilson intervals, left axis) and decode TPS (right axis)</figcaption>`,
			si, esc(s.Name), esc(strings.Join(s.Fields, " x ")))
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img">`, num(w), num(h), num(w), num(h))
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, num(left), num(top+ph), num(left+pw), num(top+ph), colAxis)
		for _, t := range []float64{0, 0.5, 1} {
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><text x="%s" y="%s" font-size="11" text-anchor="end">%s%%</text>`,
				num(left), num(yRate(t)), num(left+pw), num(yRate(t)), colGrid, num(left-4), num(yRate(t)+4), trimFloat(t*100))
		}
		if maxTPS > 0 {
			for _, t := range []float64{0, maxTPS / 2, maxTPS} {
				fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11">%s</text>`, num(left+pw+4), num(yTPS(t)+4), trimFloat(t))
			}
		}
		line := func(get func(SweepStat) *float64, y func(float64) float64, colour, dash string) {
			var pts []string
			for i, p := range s.Points {
				if v := get(p); v != nil {
					pts = append(pts, num(x(i))+","+num(y(*v)))
				}
			}
			if len(pts) > 0 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), colour, dash)
			}
		}
		for _, rate := range []struct {
			get    func(SweepStat) Rate
			colour string
			dx     float64
		}{{func(p SweepStat) Rate { return p.Functional }, colFunctional, -3}, {func(p SweepStat) Rate { return p.Delivered }, colDelivered, 3}} {
			for i, p := range s.Points {
				rt := rate.get(p)
				if rt.Rate == nil {
					continue
				}
				cx := x(i) + rate.dx
				fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><circle cx="%s" cy="%s" r="3" fill="%s"><title>%s %d/%d</title></circle>`,
					num(cx), num(yRate(*rt.Low)), num(cx), num(yRate(*rt.High)), rate.colour, num(cx), num(yRate(*rt.Rate)), rate.colour, esc(p.Arm), rt.Count, rt.Of)
			}
			get := rate.get
			line(func(p SweepStat) *float64 { return get(p).Rate }, yRate, rate.colour, "")
		}
		if maxTPS > 0 {
			line(func(p SweepStat) *float64 { return p.DecodeTPS }, yTPS, colDecode, ` stroke-dasharray="5,3"`)
		}
		for i, p := range s.Points {
			vals := make([]string, len(p.Values))
			for k, v := range p.Values {
				vals[k] = string(v)
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle">%s</text><text x="%s" y="%s" font-size="10" text-anchor="middle" fill="%s">%s</text>`,
				num(x(i)), num(top+ph+16), esc(strings.Join(vals, " x ")), num(x(i)), num(top+ph+30), colAxis, esc(p.Arm))
		}
		b.WriteString(`</svg></figure>`)
	}
	return b.String()
}
