package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"
)

func f(v float64) *float64 { return &v }
func i64(v int64) *int64   { return &v }

const mibB = 1024 * 1024

func TestParseNvidiaSMI(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		in      string
		want    []GPU
		wantErr string
	}{
		{
			name: "one GPU",
			file: "nvidia-smi-ok.csv",
			want: []GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090",
				MemoryUsedBytes: i64(22345 * mibB), MemoryFreeBytes: i64(1878 * mibB), MemoryTotalBytes: i64(24564 * mibB),
				UtilizationPct: f(97), PowerWatts: f(331.52), TemperatureC: f(71)}},
		},
		{
			name: "not supported cells are unknown, not zero",
			file: "nvidia-smi-two.csv",
			want: []GPU{
				{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: i64(1000 * mibB), MemoryFreeBytes: i64(80000 * mibB),
					MemoryTotalBytes: i64(81559 * mibB), UtilizationPct: f(0), PowerWatts: f(70.10), TemperatureC: f(30)},
				{Index: 1, Name: "NVIDIA H100 80GB HBM3", MemoryTotalBytes: i64(81559 * mibB), TemperatureC: f(31)},
			},
		},
		{name: "empty", in: "", want: nil},
		{name: "short row", in: "0, GPU, 1, 2\n", wantErr: "wrong number of fields"},
		{name: "bad index", in: "x, GPU, 1, 2, 3, 4, 5, 6\n", wantErr: `index "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			if tc.file != "" {
				var err error
				if in, err = os.ReadFile(filepath.Join("testdata", tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ParseNvidiaSMI(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a, b := mustJSON(t, got), mustJSON(t, tc.want); a != b {
				t.Fatalf("got  %s\nwant %s", a, b)
			}
		})
	}
}

func TestNvidiaSMIQuery(t *testing.T) {
	fake, _ := filepath.Abs("testdata/fake-nvidia-smi.sh")
	tests := []struct {
		name       string
		smi        NvidiaSMI
		env        map[string]string
		wantGPUs   int
		wantReason string
	}{
		{name: "answers", smi: NvidiaSMI{Path: fake}, env: map[string]string{"FAKE_SMI_CSV": "testdata/nvidia-smi-two.csv"}, wantGPUs: 2},
		{name: "driver broken", smi: NvidiaSMI{Path: fake}, env: map[string]string{"FAKE_SMI_FAIL": "1"},
			wantReason: "couldn't communicate with the NVIDIA driver"},
		{name: "binary missing", smi: NvidiaSMI{Path: "/nonexistent/nvidia-smi"}, wantReason: "nvidia-smi failed"},
		{name: "no output", smi: NvidiaSMI{Path: fake}, env: map[string]string{"FAKE_SMI_CSV": "/dev/null"}, wantReason: "listed no GPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			gpus, reason, err := tc.smi.Query(context.Background())
			if err != nil {
				t.Fatalf("absent or broken hardware must not be an error: %v", err)
			}
			if len(gpus) != tc.wantGPUs {
				t.Fatalf("gpus = %d, want %d (reason %q)", len(gpus), tc.wantGPUs, reason)
			}
			if tc.wantReason != "" && !strings.Contains(reason, tc.wantReason) {
				t.Fatalf("reason = %q, want it to contain %q", reason, tc.wantReason)
			}
			if tc.wantReason == "" && reason != "" {
				t.Fatalf("unexpected reason %q", reason)
			}
		})
	}
}

func TestNvidiaSMIArgsSelectGPUs(t *testing.T) {
	n := NvidiaSMI{GPUs: []int{0, 2}}
	got := strings.Join(n.Args(), " ")
	want := "--query-gpu=index,name,memory.used,memory.free,memory.total,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits -i 0,2"
	if got != want {
		t.Fatalf("args = %q\nwant   %q", got, want)
	}
}

func TestCPUTemperature(t *testing.T) {
	tests := []struct {
		root       string
		want       *float64
		wantReason string
	}{
		{root: "testdata/sysfs-intel", want: f(74.5)}, // hottest coretemp sensor; acpitz and nvme ignored
		{root: "testdata/sysfs-amd", want: f(93.25)},
		{root: "testdata/sysfs-zones", want: f(64)}, // x86_pkg_temp zone, acpitz ignored
		{root: "testdata/sysfs-none", wantReason: "no CPU temperature sensor"},
		{root: "testdata/does-not-exist", wantReason: "no CPU temperature sensor"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.root), func(t *testing.T) {
			th := Thermal{Root: tc.root}
			got, reason, err := th.CPUTemperature(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("got %v, want unknown", *got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Fatalf("got %v (%s), want %v", got, reason, *tc.want)
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Fatalf("reason %q, want %q", reason, tc.wantReason)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := (&Thermal{Root: "testdata/sysfs-amd"}).CPUTemperature(ctx); err == nil {
		t.Fatal("a cancelled context must be reported")
	}
}

// TestHostOnThisMachine reads the real machine: whatever it has, absent
// hardware must come back as reasons, never as an error or a zero.
func TestHostOnThisMachine(t *testing.T) {
	var h Host
	r, err := h.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) == 0 && r.GPUReason == "" {
		t.Fatal("no GPU and no reason")
	}
	if r.CPUTempC == nil && r.CPUReason == "" {
		t.Fatal("no CPU temperature and no reason")
	}
	if r.CPUTempC != nil && *r.CPUTempC <= 0 {
		t.Fatalf("implausible CPU temperature %v", *r.CPUTempC)
	}
}

// scripted is a fake Source that plays readings in order (repeating the
// last), gated by the stage the test sets, so each sample is known.
type scripted struct {
	mu       sync.Mutex
	readings []Reading
	// stages[i], when set, is the stage the caller enters just before
	// reading i is taken, as a screen would between requests.
	stages  []string
	sampler *Sampler
	n       int
}

func (s *scripted) Read(ctx context.Context) (Reading, error) {
	s.mu.Lock()
	i := s.n
	s.n++
	s.mu.Unlock()
	if i < len(s.stages) && s.stages[i] != "" {
		s.sampler.SetStage(s.stages[i])
	}
	j := min(i, len(s.readings)-1)
	r := s.readings[j]
	r.At = time.Unix(int64(1000+i), 0).UTC()
	return r, ctx.Err()
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func gpu(used, free int64, watts *float64) GPU {
	return GPU{MemoryUsedBytes: i64(used), MemoryFreeBytes: i64(free), MemoryTotalBytes: i64(used + free), PowerWatts: watts,
		UtilizationPct: f(50), TemperatureC: f(60)}
}

func TestSamplerPeaksAndMeanPower(t *testing.T) {
	src := &scripted{readings: []Reading{
		{GPUs: []GPU{gpu(10, 90, f(100))}, CPUTempC: f(50)},
		{GPUs: []GPU{gpu(80, 20, f(300))}, CPUTempC: f(70)},
		{GPUs: []GPU{gpu(40, 60, f(200))}, CPUTempC: f(60)},
	}, stages: []string{"startup", "179K-input-generation", "", "idle"}}
	var log bytes.Buffer
	s := NewSampler(src, time.Millisecond, &log)
	src.sampler = s
	s.Start(context.Background())
	waitFor(t, func() bool { return src.count() >= 6 })
	sum := s.Stop()

	if sum.MemoryPeak == nil || sum.MemoryPeak.UsedBytes != 80 || sum.MemoryPeak.FreeBytes != 20 || sum.MemoryPeak.TotalBytes != 100 {
		t.Fatalf("memory peak = %+v", sum.MemoryPeak)
	}
	if sum.MemoryPeak.Stage != "179K-input-generation" {
		t.Fatalf("peak stage = %q", sum.MemoryPeak.Stage)
	}
	if sum.CPUTempPeak == nil || sum.CPUTempPeak.Value != 70 || sum.CPUTempPeak.Stage != "179K-input-generation" {
		t.Fatalf("cpu peak = %+v", sum.CPUTempPeak)
	}
	// samples: 100, 300, then 200 repeated (Samples-2) times.
	wantMean := (100 + 300 + 200*float64(sum.Samples-2)) / float64(sum.Samples)
	if sum.PowerMeanWatts == nil || *sum.PowerMeanWatts != wantMean || sum.PowerSamples != sum.Samples {
		t.Fatalf("power mean = %v over %d, want %v over %d", sum.PowerMeanWatts, sum.PowerSamples, wantMean, sum.Samples)
	}
	if sum.PowerPeak == nil || sum.PowerPeak.Value != 300 {
		t.Fatalf("power peak = %+v", sum.PowerPeak)
	}
	if sum.MemoryReason != "" || sum.PowerReason != "" || sum.CPUReason != "" {
		t.Fatalf("reasons set although figures were read: %+v", sum)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != sum.Samples {
		t.Fatalf("log has %d lines for %d samples", len(lines), sum.Samples)
	}
	var first struct {
		Stage string `json:"stage"`
		GPUs  []GPU  `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Stage != "startup" || len(first.GPUs) != 1 {
		t.Fatalf("first log line %s (%v)", lines[0], err)
	}
	if again := s.Stop(); again.Samples != sum.Samples {
		t.Fatal("second Stop changed the summary")
	}
}

func TestSamplerAbsentHardwareIsNullWithReason(t *testing.T) {
	src := &scripted{readings: []Reading{{GPUReason: "nvidia-smi not found in PATH", CPUReason: "no CPU temperature sensor"}}}
	s := NewSampler(src, time.Millisecond, nil)
	s.Start(context.Background())
	waitFor(t, func() bool { return src.count() >= 2 })
	sum := s.Stop()
	if sum.Samples == 0 {
		t.Fatal("no samples")
	}
	if sum.MemoryPeak != nil || sum.PowerMeanWatts != nil || sum.CPUTempPeak != nil || sum.GPUTempPeak != nil {
		t.Fatalf("figures invented for absent hardware: %+v", sum)
	}
	if sum.MemoryReason != "nvidia-smi not found in PATH" || sum.PowerReason != "nvidia-smi not found in PATH" ||
		sum.CPUReason != "no CPU temperature sensor" {
		t.Fatalf("reasons = %q / %q / %q", sum.MemoryReason, sum.PowerReason, sum.CPUReason)
	}
	b, _ := json.Marshal(sum)
	for _, k := range []string{`"memory_peak":null`, `"power_mean_watts":null`, `"cpu_temp_peak_c":null`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Fatalf("JSON lacks %s: %s", k, b)
		}
	}
}

func TestSamplerPartialGPUIsNotWhole(t *testing.T) {
	// Two GPUs, one without memory figures: the sum would understate the
	// whole, so no peak is recorded.
	src := &scripted{readings: []Reading{{GPUs: []GPU{gpu(10, 10, f(50)), {Index: 1}}}}}
	s := NewSampler(src, time.Millisecond, nil)
	s.Start(context.Background())
	waitFor(t, func() bool { return src.count() >= 1 })
	sum := s.Stop()
	if sum.MemoryPeak != nil || sum.PowerMeanWatts != nil {
		t.Fatalf("partial reading summed as whole: %+v", sum)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	poll.Until(t, "the sampler", 5*time.Second, cond)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
