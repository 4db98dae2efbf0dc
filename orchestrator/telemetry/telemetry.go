// Package telemetry reads what the hardware says while a model server works:
// whole-GPU memory, utilisation, board power and temperatures, and the CPU
// temperature. Screens and capacity probes record peaks and mean power from
// it, and a cohort's temperature guard stops a run cleanly when it passes a
// threshold.
//
// Absent hardware is a normal answer, not an error: a figure that cannot be
// read is nil, with a reason saying why, so a report shows "unknown" rather
// than a made-up zero. Errors are returned only when the caller's context
// ends.
package telemetry

import (
	"context"
	"time"
)

// GPU is one GPU's reading. Every figure is nil when the driver did not
// report it ("[N/A]", "[Not Supported]") so that unknown never reads as 0.
type GPU struct {
	Index            int      `json:"index"`
	Name             string   `json:"name"`
	MemoryUsedBytes  *int64   `json:"memory_used_bytes"`
	MemoryFreeBytes  *int64   `json:"memory_free_bytes"`
	MemoryTotalBytes *int64   `json:"memory_total_bytes"`
	UtilizationPct   *float64 `json:"utilization_percent"`
	PowerWatts       *float64 `json:"power_watts"`
	TemperatureC     *float64 `json:"temperature_c"`
}

// Reading is one sample of everything a Source can see at one moment.
type Reading struct {
	At time.Time `json:"at"`
	// GPUs is empty when no GPU could be read; GPUReason then says why.
	GPUs      []GPU  `json:"gpus"`
	GPUReason string `json:"gpu_reason,omitempty"`
	// CPUTempC is the hottest CPU package sensor; nil with CPUReason when
	// none is readable (containers, virtual machines).
	CPUTempC  *float64 `json:"cpu_temp_c"`
	CPUReason string   `json:"cpu_reason,omitempty"`
}

// Source produces readings. Host is the real one; tests substitute a
// scripted one. Read must honour ctx and must not fail for absent hardware:
// it reports that in the Reading's reasons and returns an error only when
// ctx is done.
type Source interface {
	Read(ctx context.Context) (Reading, error)
}

// Host reads this machine: GPUs through nvidia-smi, the CPU temperature from
// sysfs. The zero value reads the real machine.
type Host struct {
	GPU     NvidiaSMI
	Thermal Thermal
}

// Read samples GPUs and the CPU temperature.
func (h *Host) Read(ctx context.Context) (Reading, error) {
	r := Reading{At: time.Now().UTC()}
	gpus, reason, err := h.GPU.Query(ctx)
	if err != nil {
		return r, err
	}
	r.GPUs, r.GPUReason = gpus, reason
	t, reason, err := h.Thermal.CPUTemperature(ctx)
	if err != nil {
		return r, err
	}
	r.CPUTempC, r.CPUReason = t, reason
	return r, nil
}

// Memory returns the whole-GPU memory of a reading, summed over its GPUs
// (one GPU: that GPU). ok is false when any GPU lacks a figure, so a partial
// sum never poses as the whole.
func (r Reading) Memory() (used, free, total int64, ok bool) {
	if len(r.GPUs) == 0 {
		return 0, 0, 0, false
	}
	for _, g := range r.GPUs {
		if g.MemoryUsedBytes == nil || g.MemoryFreeBytes == nil || g.MemoryTotalBytes == nil {
			return 0, 0, 0, false
		}
		used += *g.MemoryUsedBytes
		free += *g.MemoryFreeBytes
		total += *g.MemoryTotalBytes
	}
	return used, free, total, true
}

// PowerWatts returns the board power summed over the reading's GPUs; ok is
// false when any GPU did not report power.
func (r Reading) PowerWatts() (w float64, ok bool) {
	if len(r.GPUs) == 0 {
		return 0, false
	}
	for _, g := range r.GPUs {
		if g.PowerWatts == nil {
			return 0, false
		}
		w += *g.PowerWatts
	}
	return w, true
}

// GPUTempC returns the hottest GPU temperature of the reading.
func (r Reading) GPUTempC() (float64, bool) {
	var max float64
	ok := false
	for _, g := range r.GPUs {
		if g.TemperatureC != nil && (!ok || *g.TemperatureC > max) {
			max, ok = *g.TemperatureC, true
		}
	}
	return max, ok
}

// UtilizationPct returns the mean utilisation over the reading's GPUs.
func (r Reading) UtilizationPct() (float64, bool) {
	if len(r.GPUs) == 0 {
		return 0, false
	}
	var sum float64
	for _, g := range r.GPUs {
		if g.UtilizationPct == nil {
			return 0, false
		}
		sum += *g.UtilizationPct
	}
	return sum / float64(len(r.GPUs)), true
}
