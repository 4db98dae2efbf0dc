package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
)

// TestProgressLeavesUnknownTokensOut: a completed attempt whose output token
// count is unknown (some response reported none) adds neither tokens nor
// decode seconds to the live line, which says how many were left out,
// instead of lowering the decode rate with seconds that have no tokens.
func TestProgressLeavesUnknownTokensOut(t *testing.T) {
	var buf strings.Builder
	p := newProgress(&buf, false, 3)
	p.start(0, nil)
	p.began = time.Now()
	tokens, decode, unknownDecode := int64(300), 2.0, 5.0
	known := &evalctl.Attempt{ID: "1", Arm: "a", Case: "c", Repeat: "repeat-1", State: evalctl.Completed,
		Measurements: &evalctl.Measurements{NativeOutputTokens: &tokens, DecodeSeconds: &decode}}
	unknown := &evalctl.Attempt{ID: "2", Arm: "a", Case: "c", Repeat: "repeat-2", State: evalctl.Completed,
		Measurements: &evalctl.Measurements{DecodeSeconds: &unknownDecode}}
	p.end(known, &evalctl.Outcome{Functional: true})
	p.end(unknown, &evalctl.Outcome{Functional: true})
	if p.tokens != 300 || p.decodeSec != 2 || p.unmeasured != 1 {
		t.Errorf("pooled %d tokens in %v s with %d unknown; want 300 in 2 s with 1 unknown", p.tokens, p.decodeSec, p.unmeasured)
	}
	if line := p.summary(); !strings.Contains(line, "tokens 300 (+1 attempt(s) unknown, not counted)  decode TPS 150.0") {
		t.Errorf("live line %q", line)
	}
}
