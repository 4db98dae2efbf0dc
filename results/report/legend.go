package report

// LegendEntry says what one reported figure means and over which attempts
// it is pooled.
type LegendEntry struct {
	Term    string `json:"term"`
	Meaning string `json:"meaning"`
}

// Legend is the one legend every report format carries (text, Markdown,
// HTML, JSON and CSV all print these entries), so a reader never has to
// guess what a figure means or what it is pooled over.
func Legend() []LegendEntry {
	return []LegendEntry{
		{"functional", "every phase's answer and the final answer pass the frozen checks the model never saw, with no protected file changed and no starter file missing, and the arm was unchanged during the attempt; a rate over scored attempts (infrastructure failures, cancelled and interrupted attempts are unscored, planned and running ones pending, completed ones whose grade the records cannot give ungraded: all left out, never counted as failures)"},
		{"delivered", "functional, and the agent itself finished every turn normally: the expected number of turns, no budget stop, a final message after its last tool call, and its own last test run passed (TypeScript: and its last typecheck); a rate over scored attempts; delivered <= functional"},
		{"measured", "scored attempts whose token count and seconds are all known; the speed figures pool exactly these"},
		{"overlapped", "measured attempts that had another attempt in flight on the same device while they ran; 0 is the normal case, anything else means their speed figures are contaminated"},
		{"decode TPS", "sum of generated tokens / sum of decode seconds the server reported (client-measured where it reported none, marked), over measured attempts; never a mean of per-attempt rates"},
		{"task TPS", "sum of generated tokens / sum of task seconds (agent loop, model and tools of every turn; no server start, rests or grading), over measured attempts; at most decode TPS"},
		{"gain", "(arm / baseline - 1) x 100 of decode TPS or task TPS; null for the baseline itself"},
		{"tokens/week", "decode TPS x 604800, computed from the sums (tokens x 604800 / decode seconds): the tokens one week of continuous decoding at that rate gives"},
	}
}
