package agent

import (
	"slices"
	"testing"
	"time"
)

// TestEveryToolRuns: the tools the model is offered and the tools the loop
// can run are the same set, so no offered tool answers "unknown tool".
func TestEveryToolRuns(t *testing.T) {
	var offered []string
	for _, tool := range Tools(time.Minute) {
		offered = append(offered, tool.Name)
		if toolRuns[tool.Name] == nil {
			t.Errorf("tool %s is offered to the model but has no run", tool.Name)
		}
	}
	for name := range toolRuns {
		if !slices.Contains(offered, name) {
			t.Errorf("tool %s runs but is never offered to the model", name)
		}
	}
}
