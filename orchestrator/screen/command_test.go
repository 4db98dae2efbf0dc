package screen

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
)

// TestCommandOptions checks the option rules of 'screen' and 'capacity':
// what is accepted, and that every mistake is a usage error (exit 2).
func TestCommandOptions(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string // "" means accepted
	}{
		{"machine defaults", func() error { _, err := Machine{Interval: time.Second}.Options(nil); return err }, ""},
		{"gpu list", func() error { _, err := Machine{Interval: time.Second, GPUs: "0, 1"}.Options(nil); return err }, ""},
		{"zero interval", func() error { _, err := Machine{}.Options(nil); return err }, "--telemetry-interval must be positive"},
		{"bad gpu", func() error { _, err := Machine{Interval: time.Second, GPUs: "0,x"}.Options(nil); return err }, `--gpus: "x" is not a GPU index`},
		{"negative gpu", func() error { _, err := Machine{Interval: time.Second, GPUs: "-1"}.Options(nil); return err }, `"-1" is not a GPU index`},
		{"table", ReportOptions{Format: "table"}.Check, ""},
		{"html compare", ReportOptions{Format: "html", Compare: "a,b"}.Check, ""},
		{"pdf", ReportOptions{Format: "pdf"}.Check, `unknown --format "pdf" (want table, json or html)`},
		{"one mode", ReportOptions{Format: "json", Compare: "a"}.Check, "--compare wants two modes, A,B"},
		{"empty mode", ReportOptions{Format: "json", Compare: "a,"}.Check, "--compare wants two modes, A,B"},
		{"no spec", func() error { return Start(context.Background(), "", "", Machine{}, nil, nil) }, "screen needs --spec FILE"},
		{"no contexts", func() error {
			return StartCapacity(context.Background(), CapacityRequest{Profile: "p"}, Machine{}, nil, nil)
		}, "capacity needs --profile and --contexts"},
		{"bad context", func() error { _, err := parseContexts("8192,8k"); return err }, `--contexts: "8k" is not a context size`},
		{"zero context", func() error { _, err := parseContexts("0"); return err }, `"0" is not a context size`},
		{"capacity format", func() error { _, err := CapacityReportDir(t.TempDir(), "html"); return err }, `unknown --format "html" (want table or json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ue *evalctl.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (%T), want a usage error containing %q", err, err, tt.want)
			}
		})
	}
}

func TestContextSizes(t *testing.T) {
	got, err := parseContexts("196608, 225280,262144")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{196608, 225280, 262144}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestMachineOptions(t *testing.T) {
	o, err := Machine{Interval: 3 * time.Second, GPUs: "0,2", NvidiaSMI: "/opt/nvidia-smi", Quiet: true}.Options(new(strings.Builder))
	if err != nil {
		t.Fatal(err)
	}
	if o.Progress != nil || o.Interval != 3*time.Second || o.Hashes == nil {
		t.Fatalf("options %+v", o)
	}
	h, ok := o.Telemetry.(*telemetry.Host)
	if !ok || h.GPU.Path != "/opt/nvidia-smi" || !reflect.DeepEqual(h.GPU.GPUs, []int{0, 2}) {
		t.Fatalf("telemetry %#v", o.Telemetry)
	}
	if o, _ := (Machine{Interval: time.Second, NoTelemetry: true}).Options(nil); o.Telemetry != nil {
		t.Fatalf("--no-telemetry still samples: %#v", o.Telemetry)
	}
}
