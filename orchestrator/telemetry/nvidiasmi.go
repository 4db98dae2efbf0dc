package telemetry

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// smiFields is the query nvidia-smi answers, in column order. nvidia-smi is
// used instead of an NVML binding so evalctl needs no cgo and no driver
// library at build time; one call costs a few tens of milliseconds, well
// inside a 200 ms sampling period.
var smiFields = []string{
	"index", "name", "memory.used", "memory.free", "memory.total",
	"utilization.gpu", "power.draw", "temperature.gpu",
}

// NvidiaSMI queries GPUs by running nvidia-smi. The zero value runs
// "nvidia-smi" from PATH on every GPU with a 5 s timeout.
type NvidiaSMI struct {
	// Path of the nvidia-smi binary; "" means look it up in PATH.
	Path string
	// GPUs limits the query to these indexes ("-i"); empty means all.
	GPUs []int
	// Timeout bounds one call; 0 means 5 s.
	Timeout time.Duration
}

// Args returns the arguments Query passes to nvidia-smi.
func (n *NvidiaSMI) Args() []string {
	args := []string{"--query-gpu=" + strings.Join(smiFields, ","), "--format=csv,noheader,nounits"}
	if len(n.GPUs) > 0 {
		ids := make([]string, len(n.GPUs))
		for i, g := range n.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		args = append(args, "-i", strings.Join(ids, ","))
	}
	return args
}

// Query reads every selected GPU. Absent hardware or a broken driver gives
// no GPUs and a reason; err is non-nil only when ctx is done.
func (n *NvidiaSMI) Query(ctx context.Context) ([]GPU, string, error) {
	path := n.Path
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, "nvidia-smi not found in PATH (no NVIDIA driver on this machine?)", ctx.Err()
		}
		path = p
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(cctx, path, n.Args()...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if cctx.Err() != nil {
		return nil, fmt.Sprintf("nvidia-smi did not answer within %s", timeout), nil
	}
	if runErr != nil {
		msg := firstLine(stdout.String() + stderr.String())
		return nil, fmt.Sprintf("nvidia-smi failed (%v): %s", runErr, msg), nil
	}
	gpus, err := ParseNvidiaSMI(stdout.Bytes())
	if err != nil {
		return nil, err.Error(), nil
	}
	if len(gpus) == 0 {
		return nil, "nvidia-smi listed no GPU", nil
	}
	return gpus, "", nil
}

// ParseNvidiaSMI parses the CSV that Args asks for (noheader, nounits).
// Memory comes in MiB and is returned in bytes. Cells such as "[N/A]" or
// "[Not Supported]" become nil.
func ParseNvidiaSMI(out []byte) ([]GPU, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = len(smiFields)
	var gpus []GPU
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return gpus, nil
		}
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi output not understood: %w", err)
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		idx, err := strconv.Atoi(rec[0])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi output not understood: index %q", rec[0])
		}
		g := GPU{Index: idx, Name: rec[1]}
		g.MemoryUsedBytes = mib(rec[2])
		g.MemoryFreeBytes = mib(rec[3])
		g.MemoryTotalBytes = mib(rec[4])
		g.UtilizationPct = num(rec[5])
		g.PowerWatts = num(rec[6])
		g.TemperatureC = num(rec[7])
		gpus = append(gpus, g)
	}
}

// num parses a figure; anything that is not a number ("[N/A]") is unknown.
func num(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &v
}

func mib(s string) *int64 {
	v := num(s)
	if v == nil {
		return nil
	}
	b := int64(*v * 1024 * 1024)
	return &b
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no output"
	}
	return s
}
