package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHTMLSelfContained: the page refers to nothing outside itself.
func TestHTMLSelfContained(t *testing.T) {
	page := render(t, seedReport(t, Options{Baseline: "original_q4"}), FormatHTML)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the HTML report contains %q: it must be one self-contained file", bad)
		}
	}
	if strings.Count(page, "<svg") != 3 {
		t.Errorf("%d SVG charts, want 3", strings.Count(page, "<svg"))
	}
}

// TestHTMLEscapes: names come from user files and must not become markup.
func TestHTMLEscapes(t *testing.T) {
	T := bp(true)
	rep, err := Build(&Input{Rows: []Row{row("<b>arm</b>", "c&d", "repeat-1", T, T)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, rep, FormatHTML)
	if strings.Contains(page, "<b>arm</b>") || !strings.Contains(page, "&lt;b&gt;arm&lt;/b&gt;") || strings.Contains(page, "c&d") {
		t.Error("arm or case names are not escaped in the HTML report")
	}
}

func findChromium() string {
	if p := os.Getenv("EVALCTL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromium runs headless Chromium on a file with extra arguments and
// returns its standard output.
func chromium(t *testing.T, bin, file string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars", "--window-size=1280,1400"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, lastLines(stderr.String(), 15))
	}
	return stdout.Bytes()
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// probeScript measures the rendered page from inside Chromium: the text a
// reader sees, the laid-out size of every chart and bar, and how many
// resources the page fetched. It is added to a copy of the report only;
// the report itself carries no script.
const probeScript = `<pre id="probe-out"></pre><script>
(function(){
  var out = {};
  out.text = document.body.innerText;
  out.svgs = Array.prototype.map.call(document.querySelectorAll('svg'), function(s){
    var r = s.getBoundingClientRect(); return {id: s.parentNode.id, w: r.width, h: r.height};
  });
  out.bars = Array.prototype.map.call(document.querySelectorAll('rect.bar'), function(r){
    var b = r.getBBox(); return {cls: r.getAttribute('class'), w: b.width, h: b.height};
  });
  out.whiskers = document.querySelectorAll('line.whisker').length;
  out.cells = document.querySelectorAll('rect.cell').length;
  out.resources = performance.getEntriesByType('resource').length;
  document.getElementById('probe-out').textContent = JSON.stringify(out);
})();
</script>`

// TestHTMLInChromium loads the HTML report in a real headless Chromium and
// checks what it rendered: arm names and figures in the visible text, three
// laid-out SVG charts with bars of non-zero size, one grid cell per case
// and arm, nothing fetched, and the chart colours painted in a screenshot.
func TestHTMLInChromium(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		t.Skip("no Chromium binary found (install Debian's chromium package, or set EVALCTL_CHROMIUM): the HTML report was not checked in a browser")
	}
	rep := seedReport(t, Options{Baseline: "original_q4"})
	page := render(t, rep, FormatHTML)
	dir := t.TempDir()
	// A probed copy: measurements of the rendered layout.
	probed := strings.Replace(page, "</body>", probeScript+"</body>", 1)
	probePath := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probePath, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	// One launch (Chromium takes seconds to start): the DOM after the probe
	// ran, and a screenshot.
	shot := filepath.Join(dir, "report.png")
	out := string(chromium(t, bin, probePath, "--dump-dom", "--virtual-time-budget=2000", "--screenshot="+shot))
	for _, want := range []string{"<svg", `id="chart-success"`, `id="chart-tps"`, `id="chart-grid"`, "original_q4 (baseline)"} {
		if !strings.Contains(out, want) {
			t.Errorf("Chromium's DOM lacks %q", want)
		}
	}
	i := strings.Index(out, `<pre id="probe-out">`)
	j := strings.Index(out, "</pre>")
	if i < 0 || j < i {
		t.Fatalf("the probe did not run; DOM:\n%s", lastLines(out, 20))
	}
	var probe struct {
		Text string `json:"text"`
		SVGs []struct {
			ID string  `json:"id"`
			W  float64 `json:"w"`
			H  float64 `json:"h"`
		} `json:"svgs"`
		Bars []struct {
			Cls string  `json:"cls"`
			W   float64 `json:"w"`
			H   float64 `json:"h"`
		} `json:"bars"`
		Whiskers  int `json:"whiskers"`
		Cells     int `json:"cells"`
		Resources int `json:"resources"`
	}
	raw := html.UnescapeString(out[i+len(`<pre id="probe-out">`) : j])
	if err := json.Unmarshal([]byte(raw), &probe); err != nil {
		t.Fatalf("probe output %q: %v", raw, err)
	}
	for _, want := range []string{"candidate", "current_iq3", "original_q4", "62.36", "59.87", "33.29", "22/24 91.7% [74.2-97.7]", "+79.8%", "inside the noise", "McNemar exact p"} {
		if !strings.Contains(probe.Text, want) {
			t.Errorf("the rendered text lacks %q", want)
		}
	}
	if len(probe.SVGs) != 3 {
		t.Errorf("%d SVG charts rendered, want 3", len(probe.SVGs))
	}
	for _, s := range probe.SVGs {
		if s.W < 100 || s.H < 100 {
			t.Errorf("chart %s rendered at %vx%v", s.ID, s.W, s.H)
		}
	}
	// success: functional and delivered per arm; TPS: decode and task per arm.
	if len(probe.Bars) != 4*len(rep.Arms) {
		t.Errorf("%d bars rendered, want %d", len(probe.Bars), 4*len(rep.Arms))
	}
	for _, b := range probe.Bars {
		if b.W <= 0 || b.H <= 0 {
			t.Errorf("bar %s rendered empty (%vx%v)", b.Cls, b.W, b.H)
		}
	}
	if probe.Whiskers != 2*len(rep.Arms) {
		t.Errorf("%d interval whiskers, want %d", probe.Whiskers, 2*len(rep.Arms))
	}
	if probe.Cells != len(rep.Cases)*len(rep.Arms) {
		t.Errorf("%d grid cells, want %d", probe.Cells, len(rep.Cases)*len(rep.Arms))
	}
	if probe.Resources != 0 {
		t.Errorf("the page fetched %d resources; it must be self-contained", probe.Resources)
	}

	// A screenshot: the charts' colours were actually painted.
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]uint8{"functional blue": {0x2b, 0x6c, 0xb0}, "delivered green": {0x38, 0xa1, 0x69}, "task-TPS blue": {0x90, 0xcd, 0xf4}, "decode-TPS blue": {0x2c, 0x52, 0x82}} {
		if n := countColour(img, want); n < 500 {
			t.Errorf("the screenshot has %d pixels of %s; the chart was not painted", n, name)
		}
	}
	if os.Getenv("EVALCTL_KEEP_SCREENSHOT") != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(os.Getenv("EVALCTL_KEEP_SCREENSHOT"), data, 0o644)
	}
}

func countColour(img image.Image, c [3]uint8) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near8(r, c[0]) && near8(g, c[1]) && near8(bl, c[2]) {
				n++
			}
		}
	}
	return n
}

func near8(v uint32, want uint8) bool {
	d := int(v>>8) - int(want)
	return d >= -3 && d <= 3
}
