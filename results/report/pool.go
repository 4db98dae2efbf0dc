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
	var sum poolSums
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
		sum.addScored(&s, r)
	}
	sum.fill(&s)
	return s
}

// poolSums are what pool adds up over the scored rows.
type poolSums struct {
	fun, del                  int
	tok, draftTok, draftAcc   int64
	dec, task                 float64
	allTok                    int64
	allTask                   float64
	draftSeen, overlapUnknown bool
	overlapped                int
	secs                      []float64
	src                       timingSources
}

// addScored adds a scored row: its outcome and totals and, when it is
// measured, its measured sums (counting it in s).
func (p *poolSums) addScored(s *Stats, r *Row) {
	if *r.Functional {
		p.fun++
	}
	if *r.Delivered {
		p.del++
	}
	if r.Termination != nil {
		s.Terminations[*r.Termination]++
	}
	if r.NativeOutputTokens != nil {
		p.allTok += *r.NativeOutputTokens
		s.TotalOutputTokensAttempts++
	}
	if r.TaskSeconds != nil {
		p.allTask += *r.TaskSeconds
		s.TotalTaskSecondsAttempts++
		p.secs = append(p.secs, *r.TaskSeconds)
	}
	if !r.measured() {
		s.Unmeasured++
		return
	}
	s.Measured++
	switch {
	case r.OverlappedAttempts == nil:
		p.overlapUnknown = true
	case *r.OverlappedAttempts > 0:
		p.overlapped++
	}
	p.src.add(r.TimingsSource)
	p.tok += *r.NativeOutputTokens
	p.dec += *r.DecodeSeconds
	p.task += *r.TaskSeconds
	if r.DraftTokens != nil && r.DraftAccepted != nil {
		p.draftSeen = true
		p.draftTok += *r.DraftTokens
		p.draftAcc += *r.DraftAccepted
	}
}

// fill sets s's rates, sums and ratios from the sums.
func (p *poolSums) fill(s *Stats) {
	s.Functional = newRate(p.fun, s.Scored)
	s.Delivered = newRate(p.del, s.Scored)
	if s.Measured > 0 {
		tok, dec, task := p.tok, p.dec, p.task
		s.NativeOutputTokens, s.DecodeSeconds, s.TaskSeconds = &tok, &dec, &task
		if dec > 0 {
			v := float64(tok) / dec
			s.DecodeTPS = &v
		}
		if task > 0 {
			v := float64(tok) / task
			s.TaskOutputTPS = &v
		}
		s.TimingsSource = p.src.result()
		if !p.overlapUnknown {
			overlapped := p.overlapped
			s.Overlapped = &overlapped
		}
	}
	if s.TotalOutputTokensAttempts > 0 {
		allTok := p.allTok
		s.TotalOutputTokens = &allTok
	}
	if s.TotalTaskSecondsAttempts > 0 {
		allTask := p.allTask
		s.TotalTaskSeconds = &allTask
	}
	if m, ok := median(p.secs); ok {
		s.MedianAttemptSeconds = &m
		s.MedianAttemptSecondsAttempts = len(p.secs)
	}
	if p.draftSeen {
		draftTok, draftAcc := p.draftTok, p.draftAcc
		s.DraftTokens, s.DraftAccepted = &draftTok, &draftAcc
		if draftTok > 0 {
			v := float64(draftAcc) / float64(draftTok)
			s.DraftAcceptance = &v
		}
	}
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
