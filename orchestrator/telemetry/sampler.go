package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// DefaultInterval is the sampling period of screens and capacity probes:
// short enough to catch the memory peak of a prompt-processing burst.
const DefaultInterval = 200 * time.Millisecond

// MemoryPeak is the highest whole-GPU memory use seen, with when and during
// which stage. Its JSON shape is the results file's memory_peak_200ms.
type MemoryPeak struct {
	At         time.Time `json:"at"`
	Stage      string    `json:"stage"`
	UsedBytes  int64     `json:"used_bytes"`
	FreeBytes  int64     `json:"free_bytes"`
	TotalBytes int64     `json:"total_bytes"`
}

// Peak is the highest value of one figure, with when and during which stage.
type Peak struct {
	At    time.Time `json:"at"`
	Stage string    `json:"stage"`
	Value float64   `json:"value"`
}

// Summary is what a sampler saw over its run. Every figure is nil when no
// sample carried it, with the matching reason saying why.
type Summary struct {
	Started         time.Time `json:"started"`
	Finished        time.Time `json:"finished"`
	IntervalSeconds float64   `json:"interval_seconds"`
	Samples         int       `json:"samples"`

	MemoryPeak   *MemoryPeak `json:"memory_peak"`
	MemoryReason string      `json:"memory_reason,omitempty"`

	// PowerMeanWatts is the mean GPU board power over the samples that
	// reported power (samples are evenly spaced, so this is the run's mean).
	PowerMeanWatts *float64 `json:"power_mean_watts"`
	PowerSamples   int      `json:"power_samples"`
	PowerPeak      *Peak    `json:"power_peak"`
	PowerReason    string   `json:"power_reason,omitempty"`

	UtilizationMeanPct *float64 `json:"utilization_mean_percent"`
	UtilizationPeak    *Peak    `json:"utilization_peak"`

	GPUTempPeak *Peak  `json:"gpu_temp_peak_c"`
	CPUTempPeak *Peak  `json:"cpu_temp_peak_c"`
	CPUReason   string `json:"cpu_reason,omitempty"`

	// ReadErrors counts samples lost to a failed read (not absent hardware,
	// which is a reason, but e.g. a cancelled read at the very end).
	ReadErrors int `json:"read_errors"`
}

// Sampler reads a Source at a fixed interval in the background and keeps
// running peaks and means, labelled with the stage the caller is in.
type Sampler struct {
	src      Source
	interval time.Duration
	log      io.Writer

	mu      sync.Mutex
	stage   string
	sum     Summary
	powSum  float64
	utilSum float64
	utilN   int

	cancel context.CancelFunc
	done   chan struct{}
}

// NewSampler returns a sampler of src every interval (DefaultInterval when
// 0). If log is not nil every reading is written to it as one JSON line
// with its stage, so a run keeps the raw series beside the summary.
func NewSampler(src Source, interval time.Duration, log io.Writer) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Sampler{src: src, interval: interval, log: log}
}

// Start begins sampling (one reading at once, then one per interval) until
// Stop or until ctx is done. It must be called once.
func (s *Sampler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.mu.Lock()
	s.sum.Started = time.Now().UTC()
	s.sum.IntervalSeconds = s.interval.Seconds()
	s.mu.Unlock()
	go s.loop(ctx)
}

// SetStage labels the samples that follow (e.g. "startup",
// "179K-input-generation"); peaks carry the stage they happened in.
func (s *Sampler) SetStage(stage string) {
	s.mu.Lock()
	s.stage = stage
	s.mu.Unlock()
}

// Stop ends sampling, waits for the sampling goroutine and returns the
// summary. Calling it again returns the same summary.
func (s *Sampler) Stop() Summary {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sum.Finished.IsZero() {
		s.sum.Finished = time.Now().UTC()
	}
	return s.sum
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		r, err := s.src.Read(ctx)
		if ctx.Err() != nil {
			return // a reading cut short by Stop is not a sample
		}
		s.add(r, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) add(r Reading, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.sum.ReadErrors++
		return
	}
	stage := s.stage
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	sum := &s.sum
	sum.Samples++
	if used, free, total, ok := r.Memory(); ok {
		if sum.MemoryPeak == nil || used > sum.MemoryPeak.UsedBytes {
			sum.MemoryPeak = &MemoryPeak{At: r.At, Stage: stage, UsedBytes: used, FreeBytes: free, TotalBytes: total}
		}
		sum.MemoryReason = ""
	} else if sum.MemoryPeak == nil {
		sum.MemoryReason = orDefault(r.GPUReason, "GPU memory not reported")
	}
	if w, ok := r.PowerWatts(); ok {
		s.powSum += w
		sum.PowerSamples++
		mean := s.powSum / float64(sum.PowerSamples)
		sum.PowerMeanWatts = &mean
		sum.PowerPeak = higher(sum.PowerPeak, r.At, stage, w)
		sum.PowerReason = ""
	} else if sum.PowerSamples == 0 {
		sum.PowerReason = orDefault(r.GPUReason, "GPU board power not reported")
	}
	if u, ok := r.UtilizationPct(); ok {
		s.utilSum += u
		s.utilN++
		mean := s.utilSum / float64(s.utilN)
		sum.UtilizationMeanPct = &mean
		sum.UtilizationPeak = higher(sum.UtilizationPeak, r.At, stage, u)
	}
	if t, ok := r.GPUTempC(); ok {
		sum.GPUTempPeak = higher(sum.GPUTempPeak, r.At, stage, t)
	}
	if r.CPUTempC != nil {
		sum.CPUTempPeak = higher(sum.CPUTempPeak, r.At, stage, *r.CPUTempC)
		sum.CPUReason = ""
	} else if sum.CPUTempPeak == nil {
		sum.CPUReason = orDefault(r.CPUReason, "CPU temperature not reported")
	}
	if s.log != nil {
		line, _ := json.Marshal(struct {
			Stage string `json:"stage"`
			Reading
		}{stage, r})
		s.log.Write(append(line, '\n'))
	}
}

func higher(p *Peak, at time.Time, stage string, v float64) *Peak {
	if p == nil || v > p.Value {
		return &Peak{At: at, Stage: stage, Value: v}
	}
	return p
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
