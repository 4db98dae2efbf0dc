package reporttest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/evalctl/evalctl"
)

// ArmTotals are an arm's exact pooled totals: Tokens, and Decode and Task
// as the floats a real cohort's in-order sums printed, written as
// DecodeUnits x 10^-DecodeDigits (TaskUnits likewise) so that the attempts'
// decimal seconds add up to exactly those floats. Drafts gives the attempts
// speculative-draft counts.
type ArmTotals struct {
	Arm                      string
	Tokens                   int64
	Decode, Task             float64
	DecodeUnits, TaskUnits   int64
	DecodeDigits, TaskDigits int
	Drafts                   bool
}

// SweepTotals are the seed results file's mtp_depth_one_seed_eight_tasks:
// speculative-draft depth 2..6, eight cases, one seed.
var SweepTotals = []ArmTotals{
	{Arm: "mtp2", Tokens: 200555, Decode: 3459.213, Task: 3708.4930000000004, DecodeUnits: 3459213, DecodeDigits: 3, TaskUnits: 3708493, TaskDigits: 3, Drafts: true},
	{Arm: "mtp3", Tokens: 193878, Decode: 3192.863, Task: 3422.519, DecodeUnits: 3192863, DecodeDigits: 3, TaskUnits: 3422519, TaskDigits: 3, Drafts: true},
	{Arm: "mtp4", Tokens: 194259, Decode: 3168.4440999999997, Task: 3341.629, DecodeUnits: 31684441, DecodeDigits: 4, TaskUnits: 3341629, TaskDigits: 3, Drafts: true},
	{Arm: "mtp5", Tokens: 189384, Decode: 3260.856, Task: 3473.974, DecodeUnits: 3260856, DecodeDigits: 3, TaskUnits: 3473974, TaskDigits: 3, Drafts: true},
	{Arm: "mtp6", Tokens: 231447, Decode: 4105.507, Task: 4338.612, DecodeUnits: 4105507, DecodeDigits: 3, TaskUnits: 4338612, TaskDigits: 3, Drafts: true},
}

// SweepRegrade is the suite version the sweep's mtp4 answers were regraded
// under (the seed's mtp4_regrade_v2_0_2).
const SweepRegrade = "2.0.2"

// Sweep is the seed's MTP depth study as a run: arms mtp2..mtp6 over the
// eight seed cases with one seed (repeat-1), interleaved, per-arm totals
// equal to SweepTotals. Every arm failed ledger under dev@1.0.0 (the broken
// read-error fixture); the mtp4 attempts carry grades under dev@2.0.2 too,
// where all eight are solved.
func Sweep() *RunSpec {
	spec := &RunSpec{
		ID:      "mtp-depth-sweep",
		Suite:   evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: hashOf("suite dev@1.0.0")},
		ImageID: "sha256:" + hashOf("image evalctl-sandbox:1"),
	}
	rng := rand.NewPCG(8, 194259)
	index := map[string][]int{}
	slot := 0
	for ci, c := range seedCases {
		for k := range SweepTotals {
			// Interleaved so that the first case meets the arms out of
			// value order (mtp2, mtp5, mtp3, mtp6, mtp4): a report orders
			// them by the swept value, not by the order met.
			arm := SweepTotals[(3*k+ci)%len(SweepTotals)].Arm
			as := AttemptSpec{Arm: arm, Case: c.name, Language: c.lang, Repeat: "repeat-1", Seed: 1001, Slot: slot, Phases: c.phases}
			as.Solved = make([]bool, c.phases)
			as.Terminations = make([]evalctl.Termination, c.phases)
			for p := range as.Solved {
				as.Solved[p] = c.name != "ledger"
				as.Terminations[p] = evalctl.TermCompleted
			}
			if arm == "mtp4" {
				all := make([]bool, c.phases)
				for p := range all {
					all[p] = true
				}
				as.Regrades = map[string][]bool{SweepRegrade: all}
			}
			index[arm] = append(index[arm], len(spec.Attempts))
			spec.Attempts = append(spec.Attempts, as)
			slot++
		}
	}
	for _, tot := range SweepTotals {
		fillTotals(rng, spec, index[tot.Arm], tot)
	}
	// The registered expansion of "mtp{value}" swept over the server
	// profile's draft depth, declared out of order.
	sweep := evalctl.SweepRecord{Name: "mtp", Fields: []string{"extra.spec_draft_n_max"}}
	for _, d := range []int{4, 2, 6, 3, 5} {
		sweep.Arms = append(sweep.Arms, evalctl.SweepPoint{Arm: fmt.Sprintf("mtp%d", d), Values: []json.RawMessage{json.RawMessage(strconv.Itoa(d))}})
	}
	spec.PlanSweeps = []evalctl.SweepRecord{sweep}
	return spec
}

// AttemptIDs returns the ids Write gives the attempts of spec whose arm is
// arm, in record order.
func AttemptIDs(spec *RunSpec, arm string) []string {
	var out []string
	for i, a := range spec.Attempts {
		if a.Arm == arm {
			out = append(out, fmt.Sprintf("%s-a%05d", spec.ID, i))
		}
	}
	return out
}
