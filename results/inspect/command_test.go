package inspect

import (
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestShow: 'evalctl show' by id prefix and by slot, as text and JSON; the
// user's mistakes are usage errors.
func TestShow(t *testing.T) {
	root := "../../cmd/evalctl/testdata/recorded"
	run := root + "/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"
	tests := []struct {
		name  string
		r     ShowRequest
		usage bool
		want  string
	}{
		{"by prefix, text", ShowRequest{Args: []string{"01a230a6-ae8e"}, Run: run, Format: "text"}, false, "01a230a6-ae8e-7d26-8bcd-7abc672f064a"},
		{"by prefix in every run", ShowRequest{Args: []string{"01a230a6-ae8e"}, Root: root, Format: "json"}, false, `"id": "01a230a6-ae8e-7d26-8bcd-7abc672f064a"`},
		{"by slot", ShowRequest{Args: []string{run, "flawed", "tsadd", "repeat-1"}, Format: "table"}, false, "01a230a6-ae9a-7445-918a-2cc4bb1c7f91"},
		{"bad format", ShowRequest{Args: []string{"x"}, Format: "yaml"}, true, `unknown --format "yaml" (want text or json)`},
		{"two arguments", ShowRequest{Args: []string{"a", "b"}, Format: "text"}, true, "name one attempt"},
		{"ambiguous", ShowRequest{Args: []string{"01a230a6-ae"}, Run: run, Format: "text"}, true, "ambiguous attempt"},
		{"no such attempt", ShowRequest{Args: []string{"zz"}, Run: run, Format: "text"}, true, "no such attempt"},
		{"no folder of runs", ShowRequest{Args: []string{"zz"}, Root: t.TempDir() + "/nope", Format: "text"}, true, "name its run with --run"},
		{"no such run", ShowRequest{Args: []string{"zz"}, Run: "nosuchrun", Root: root, Format: "text"}, true, "no such run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill, err := Show(tt.r)
			var ue *evalctl.UsageError
			if tt.usage {
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want a usage error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := fill(&b); err != nil || !strings.Contains(b.String(), tt.want) {
				t.Fatalf("error %v; output lacks %q:\n%.500s", err, tt.want, b.String())
			}
		})
	}
}
