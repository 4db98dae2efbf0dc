package agent

import (
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// meter sums what the server reported about each response (the
// attempt's measurements). A figure some response did not report makes the sum
// unknown (nil), never a partial number passed off as the whole.
type meter struct {
	responses     int
	outputTokens  int64
	outputKnown   bool
	decodeSeconds float64
	decodeKnown   bool
	// spent is what the budget counts: every non-negative count the
	// server gave, accepted as a measurement or not (see
	// model.Response.SpentTokens), so that it never counts backwards.
	spent                  int64
	unknowns               int
	anomalies              []string
	promptTokens, cached   int64
	promptSeconds          float64
	promptKnown, cacheKnow bool
	maxSeq                 int64
	maxSeqKnown            bool
	maxResp                *int64
	draftN, draftAccepted  int64
	draftSeen              bool
	serverTimed, clientRun int
	finish                 map[string]int
	toolCalls, toolErrors  int
	taskSeconds            float64
	// firstCached is the first response's cache_n: 0 when the attempt
	// started cold on the server.
	firstCached *int64
	firstSeen   bool
}

func (m *meter) init() {
	m.outputKnown, m.decodeKnown, m.promptKnown, m.cacheKnow = true, true, true, true
	m.finish = map[string]int{}
}

// unknown records a response whose figures are unknown (failed after
// delivery, or cut by the wall-time budget): the server may have generated
// any number of tokens, so the sums are unknown, never the partial sum of
// the others.
func (m *meter) unknown() {
	m.unknowns++
	m.outputKnown, m.decodeKnown, m.promptKnown, m.cacheKnow = false, false, false, false
}

func (m *meter) add(r *model.Response) {
	if !m.firstSeen {
		m.firstSeen = true
		if r.Timings != nil && r.Timings.CacheN != nil {
			m.firstCached = ptr(*r.Timings.CacheN)
		}
	}
	m.responses++
	m.spent += r.SpentTokens()
	m.anomalies = append(m.anomalies, r.Anomalies...)
	if !r.Measured() {
		m.unknown()
		m.finish[finishKey(r.FinishReason)]++
		return
	}
	// A response that reported no output token count makes the attempt's
	// count unknown: adding 0 for it would understate the tokens while its
	// decode seconds still count, a decode TPS lower than the truth.
	if n, ok := r.OutputTokens(); ok {
		m.outputTokens += n
		if m.maxResp == nil || n > *m.maxResp {
			m.maxResp = ptr(n)
		}
	} else {
		m.outputKnown = false
	}
	// Decode time is never missing: without server timings it is measured
	// by the client (first to last token of a stream, else the wall time),
	// which TimingsSource marks.
	sec, server := r.DecodeSeconds()
	m.decodeSeconds += sec
	if server {
		m.serverTimed++
	} else {
		m.clientRun++
	}
	t := r.Timings
	if t != nil && t.PromptN != nil && t.PromptMS != nil {
		m.promptTokens += *t.PromptN
		m.promptSeconds += *t.PromptMS / 1000
	} else {
		m.promptKnown = false
	}
	if t != nil && t.CacheN != nil {
		m.cached += *t.CacheN
	} else {
		m.cacheKnow = false
	}
	if n, ok := r.SequenceTokens(); ok {
		m.maxSeqKnown = true
		m.maxSeq = max(m.maxSeq, n)
	}
	if t != nil && t.DraftN != nil && t.DraftNAccepted != nil {
		m.draftSeen = true
		m.draftN += *t.DraftN
		m.draftAccepted += *t.DraftNAccepted
	}
	m.finish[finishKey(r.FinishReason)]++
}

func finishKey(reason string) string {
	if reason == "" {
		return "none"
	}
	return reason
}

func (m *meter) result() *evalctl.Measurements {
	out := &evalctl.Measurements{
		TaskSeconds:   m.taskSeconds,
		ToolCalls:     m.toolCalls,
		ToolErrors:    m.toolErrors,
		Responses:     m.responses,
		FinishReasons: map[string]int{},
	}
	if m.outputKnown {
		out.NativeOutputTokens = ptr(m.outputTokens)
	}
	if m.decodeKnown {
		out.DecodeSeconds = ptr(m.decodeSeconds)
	}
	out.UnknownResponses = m.unknowns
	out.Anomalies = append([]string(nil), m.anomalies...)
	for k, v := range m.finish {
		out.FinishReasons[k] = v
	}
	if m.promptKnown {
		out.PromptTokens, out.PromptSeconds = ptr(m.promptTokens), ptr(m.promptSeconds)
	}
	if m.cacheKnow {
		out.CachedTokens = ptr(m.cached)
	}
	out.FirstCachedTokens = m.firstCached
	if m.maxSeqKnown {
		out.MaxSequenceTokens = ptr(m.maxSeq)
	}
	if m.maxResp != nil {
		out.MaxResponseTokens = ptr(*m.maxResp)
	}
	if m.draftSeen {
		out.DraftTokens, out.DraftAccepted = ptr(m.draftN), ptr(m.draftAccepted)
	}
	switch {
	case m.responses == 0:
		out.TimingsSource = "none"
	case m.clientRun == 0:
		out.TimingsSource = "server"
	case m.serverTimed == 0:
		out.TimingsSource = "client"
	default:
		out.TimingsSource = "mixed"
	}
	return out
}

// usedWall is the time spent in turns so far, for the wall-time budget.
func (m *meter) usedWall() time.Duration {
	return time.Duration(m.taskSeconds * float64(time.Second))
}

func ptr[T any](v T) *T { return &v }
