package orchestrator

import (
	"testing"
	"time"
)

// The documented default request timeout applies when an arm names none.
func TestDefaultRequestTimeoutApplied(t *testing.T) {
	var a Arm
	if got := armParams(&a, 1).Timeout; got != 1800*time.Second {
		t.Errorf("default request timeout %v, want 30m", got)
	}
	a.Endpoint.TimeoutSeconds = 5
	if got := armParams(&a, 1).Timeout; got != 5*time.Second {
		t.Errorf("timeout %v, want 5s", got)
	}
}
