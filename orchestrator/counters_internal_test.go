package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
)

// busyServer is a counterReader whose slot never becomes idle.
type busyServer struct{ n float64 }

func (b *busyServer) Counters(context.Context) (*model.Counters, error) {
	b.n += 7
	v := b.n
	now := time.Now()
	return &model.Counters{Start: now, End: now, GeneratedTokens: &v}, nil
}
func (b *busyServer) Busy(context.Context) (int, error) { return 1, nil }
func (b *busyServer) BaseURL() string                   { return "http://busy" }

// A window whose server never settles after a cut cannot be attributed to
// the attempt: the figures are null with the reason, never a number.
func TestUnsettledWindowIsNull(t *testing.T) {
	ac := &attemptCounters{c: &busyServer{}, bound: 50 * time.Millisecond}
	ac.before, _ = ac.c.Counters(context.Background())
	d := ac.stop(context.Background(), true, true)
	if d == nil || d.GeneratedTokens != nil || !strings.Contains(d.Unattributed, "still processing") || d.SettleSeconds < 0.05 {
		t.Fatalf("delta %+v; want null figures, the reason, the wait", d)
	}
	// Not cut: no wait, the delta as read.
	d = ac.stop(context.Background(), false, true)
	if d == nil || d.GeneratedTokens == nil || d.Unattributed != "" {
		t.Fatalf("delta %+v; want the figures", d)
	}
}
