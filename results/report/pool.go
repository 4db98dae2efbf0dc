package report

func gain(v, base *float64) *float64 {
	if v == nil || base == nil || *base == 0 {
		return nil
	}
	g := (*v / *base - 1) * 100
	return &g
}

// pool computes Stats over rows, summing in the given order.
func pool(rows []*Row) Stats {
	s := Stats{States: map[string]int{}, Replaced: map[string]int{}, Terminations: map[string]int{}}
	var fun, del int
	var tok, draftTok, draftAcc int64
	var dec, task float64
	var allTok int64
	var allTask float64
	var draftSeen, overlapUnknown bool
	var overlapped int
	var secs []float64
	var src timingSources
	for _, r := range rows {
		if !r.inPlan() {
			s.Replaced[r.State]++
			continue
		}
		s.States[r.State]++
		s.Attempts++
		if r.State == "completed" {
			s.Completed++
		}
		switch r.Status {
		case Scored:
			s.Scored++
		case Ungraded:
			s.Ungraded++
			continue
		case Pending:
			s.Pending++
			continue
		default:
			s.Unscored++
			continue
		}
		if *r.Functional {
			fun++
		}
		if *r.Delivered {
			del++
		}
		if r.Termination != nil {
			s.Terminations[*r.Termination]++
		}
		if r.NativeOutputTokens != nil {
			allTok += *r.NativeOutputTokens
			s.TotalOutputTokensAttempts++
		}
		if r.TaskSeconds != nil {
			allTask += *r.TaskSeconds
			s.TotalTaskSecondsAttempts++
			secs = append(secs, *r.TaskSeconds)
		}
		if !r.measured() {
			s.Unmeasured++
			continue
		}
		s.Measured++
		switch {
		case r.OverlappedAttempts == nil:
			overlapUnknown = true
		case *r.OverlappedAttempts > 0:
			overlapped++
		}
		src.add(r.TimingsSource)
		tok += *r.NativeOutputTokens
		dec += *r.DecodeSeconds
		task += *r.TaskSeconds
		if r.DraftTokens != nil && r.DraftAccepted != nil {
			draftSeen = true
			draftTok += *r.DraftTokens
			draftAcc += *r.DraftAccepted
		}
	}
	s.Functional = newRate(fun, s.Scored)
	s.Delivered = newRate(del, s.Scored)
	if s.Measured > 0 {
		s.NativeOutputTokens, s.DecodeSeconds, s.TaskSeconds = &tok, &dec, &task
		if dec > 0 {
			v := float64(tok) / dec
			s.DecodeTPS = &v
		}
		if task > 0 {
			v := float64(tok) / task
			s.TaskOutputTPS = &v
		}
		s.TimingsSource = src.result()
		if !overlapUnknown {
			s.Overlapped = &overlapped
		}
	}
	if s.TotalOutputTokensAttempts > 0 {
		s.TotalOutputTokens = &allTok
	}
	if s.TotalTaskSecondsAttempts > 0 {
		s.TotalTaskSeconds = &allTask
	}
	if m, ok := median(secs); ok {
		s.MedianAttemptSeconds = &m
		s.MedianAttemptSecondsAttempts = len(secs)
	}
	if draftSeen {
		s.DraftTokens, s.DraftAccepted = &draftTok, &draftAcc
		if draftTok > 0 {
			v := float64(draftAcc) / float64(draftTok)
			s.DraftAcceptance = &v
		}
	}
	return s
}

// timingSources collects the timings_source of pooled attempts.
type timingSources struct {
	server, client, mixed, unknown bool
}

func (t *timingSources) add(src *string) {
	switch {
	case src == nil:
		t.unknown = true
	case *src == TimingsServer:
		t.server = true
	case *src == TimingsClient:
		t.client = true
	case *src == TimingsMixed:
		t.mixed = true
	case *src == TimingsNone:
	default:
		t.unknown = true
	}
}

// result is the pool's source: one kind alone names itself, client and
// server together are mixed, and any attempt of unknown source makes the
// whole unknown rather than claim a kind; null when no attempt added time.
func (t *timingSources) result() *string {
	var v string
	switch {
	case t.unknown:
		v = TimingsUnknown
	case t.mixed || (t.server && t.client):
		v = TimingsMixed
	case t.client:
		v = TimingsClient
	case t.server:
		v = TimingsServer
	default:
		return nil
	}
	return &v
}
