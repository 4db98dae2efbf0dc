package reporttest

import (
	"fmt"
	"math/rand/v2"

	"github.com/evalctl/evalctl"
)

// SeedTotals are the per-arm figures of the seed results file's
// quantization_development24 cohort, which Seed reproduces exactly.
var SeedTotals = map[string]struct {
	Tokens                 int64
	Decode, Task           float64
	Functional, Delivered  int
	DecodeTPS, TaskTPS     float64
	decodeUnits, taskUnits int64
	decodeDigits, taskDig  int
}{
	"candidate":   {630817, 10116.1934, 10793.86, 22, 22, 62.357151060397875, 58.44220695840042, 101161934, 1079386, 4, 2},
	"current_iq3": {617284, 10311.041000000001, 10933.868, 22, 21, 59.866312237532554, 56.45614159600244, 10311041, 10933868, 3, 3},
	"original_q4": {620260, 18630.9, 19303.771, 23, 23, 33.29200414365382, 32.13154569643413, 18630900, 19303771, 3, 3},
}

// SeedArms are the seed cohort's arms in plan order.
var SeedArms = []string{"candidate", "current_iq3", "original_q4"}

type seedCase struct {
	name, lang string
	phases     int
}

var seedCases = []seedCase{
	{"cache", "python", 1}, {"wallet", "typescript", 2}, {"ledger", "python", 1}, {"parser", "python", 1},
	{"scheduler", "python", 2}, {"router", "typescript", 1}, {"inventory", "python", 1}, {"tokenizer", "python", 1},
}

// seedOutcome is how an attempt of the seed cohort departs from a clean
// pass.
type seedOutcome struct {
	solved       []bool
	terminations []evalctl.Termination
	protected    bool
}

var seedDepartures = map[string]seedOutcome{
	// candidate: 22 functional, 22 delivered.
	"candidate/ledger/repeat-1":    {solved: []bool{false}},
	"candidate/scheduler/repeat-3": {solved: []bool{true, false}},
	// current_iq3: 22 functional, 21 delivered.
	"current_iq3/ledger/repeat-1": {solved: []bool{false}, terminations: []evalctl.Termination{evalctl.TermOutputTruncated}},
	"current_iq3/router/repeat-2": {solved: []bool{false}, protected: true},
	"current_iq3/wallet/repeat-3": {solved: []bool{true, true}, terminations: []evalctl.Termination{evalctl.TermCompleted, evalctl.TermWallTimeLimit}},
	// original_q4: 23 functional, 23 delivered.
	"original_q4/ledger/repeat-2": {solved: []bool{false}},
}

// Seed is a 3-arm development cohort (8 cases x 3 repeats per arm,
// interleaved) whose per-arm totals equal SeedTotals: pooling it in slot
// order gives decode TPS 62.357151060397875 and task TPS 58.44220695840042
// for candidate. The candidate's first attempt failed on infrastructure and
// was replaced, so candidate has 25 records for 24 slots.
func Seed() *RunSpec {
	spec := &RunSpec{
		ID:      "dev24-quant",
		Suite:   evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: hashOf("suite dev@1.0.0")},
		ImageID: "sha256:" + hashOf("image evalctl-sandbox:1"),
	}
	rng := rand.NewPCG(24, 630817)
	slot := 0
	index := map[string][]int{} // arm -> attempt indices in slot order
	for r := 0; r < 3; r++ {
		repeat := fmt.Sprintf("repeat-%d", r+1)
		for ci, c := range seedCases {
			for k := 0; k < len(SeedArms); k++ {
				arm := SeedArms[(k+ci+r)%len(SeedArms)]
				as := AttemptSpec{Arm: arm, Case: c.name, Language: c.lang, Repeat: repeat, Seed: int64(1001 * (r + 1)),
					Slot: slot, Phases: c.phases}
				if slot == 0 {
					failed := as
					failed.State = evalctl.InfraFailed
					spec.Attempts = append(spec.Attempts, failed)
					as.Replaces, as.ReplacementOf = true, len(spec.Attempts)-1
				}
				as.Solved = make([]bool, c.phases)
				for p := range as.Solved {
					as.Solved[p] = true
				}
				as.Terminations = make([]evalctl.Termination, c.phases)
				for p := range as.Terminations {
					as.Terminations[p] = evalctl.TermCompleted
				}
				if d, ok := seedDepartures[arm+"/"+c.name+"/"+repeat]; ok {
					as.Solved, as.ProtectedChange = d.solved, d.protected
					if d.terminations != nil {
						as.Terminations = d.terminations
					}
				}
				index[arm] = append(index[arm], len(spec.Attempts))
				spec.Attempts = append(spec.Attempts, as)
				slot++
			}
		}
	}
	for _, arm := range SeedArms {
		fillMeasurements(rng, spec, index[arm], arm)
	}
	return spec
}

// fillMeasurements gives the attempts at idx (one arm, slot order) tokens
// and seconds whose in-order float sums are the arm's SeedTotals.
func fillMeasurements(rng *rand.PCG, spec *RunSpec, idx []int, arm string) {
	t := SeedTotals[arm]
	fillTotals(rng, spec, idx, ArmTotals{Arm: arm, Tokens: t.Tokens, Decode: t.Decode, Task: t.Task,
		DecodeUnits: t.decodeUnits, DecodeDigits: t.decodeDigits, TaskUnits: t.taskUnits, TaskDigits: t.taskDig,
		Drafts: arm != "original_q4"}) // the q4 arm ran without speculative decoding
}

// fillTotals gives the attempts at idx (one arm, slot order) tokens and
// seconds whose in-order float sums are tot's.
func fillTotals(rng *rand.PCG, spec *RunSpec, idx []int, tot ArmTotals) {
	arm := tot.Arm
	n := len(idx)
	tokW := make([]float64, n)
	for i := range tokW {
		tokW[i] = uniform(rng, 0.5, 1.5)
	}
	var wsum float64
	for _, w := range tokW {
		wsum += w
	}
	var used int64
	tps := float64(tot.Tokens) / tot.Decode
	decW := make([]float64, n)
	for i, j := range idx {
		a := &spec.Attempts[j]
		if i < n-1 {
			a.Tokens = int64(float64(tot.Tokens) * tokW[i] / wsum)
			used += a.Tokens
		} else {
			a.Tokens = tot.Tokens - used
		}
		decW[i] = float64(a.Tokens) / (tps * uniform(rng, 0.9, 1.1))
	}
	dec := splitDecimal(rng, tot.DecodeUnits, tot.DecodeDigits, decW, tot.Decode)
	overhead := (tot.Task - tot.Decode) / float64(n)
	taskW := make([]float64, n)
	for i := range taskW {
		taskW[i] = dec[i] + overhead*uniform(rng, 0.6, 1.4)
	}
	task := splitDecimal(rng, tot.TaskUnits, tot.TaskDigits, taskW, tot.Task)
	for i, j := range idx {
		a := &spec.Attempts[j]
		a.Decode, a.Task = dec[i], task[i]
		if task[i] <= dec[i] {
			panic(fmt.Sprintf("reporttest: %s attempt %d: task %v <= decode %v", arm, i, task[i], dec[i]))
		}
		if tot.Drafts {
			draft := a.Tokens * 4 / 5
			acc := draft * 31 / 50
			a.DraftTokens, a.DraftAccepted = &draft, &acc
		}
	}
}

// SyntheticSpec configures Synthetic.
type SyntheticSpec struct {
	Attempts int
	Arms     []string
	Cases    int
	Seed     uint64
}

// Synthetic is a cohort of n attempts over several arms and cases with
// random outcomes (about 85% functional, 1% infrastructure failures that
// were replaced), random two-phase cases and random measurements: a load
// for benchmarks, not a source of exact figures.
func Synthetic(cfg SyntheticSpec) *RunSpec {
	if len(cfg.Arms) == 0 {
		cfg.Arms = []string{"candidate", "current_iq3", "original_q4"}
	}
	if cfg.Cases == 0 {
		cfg.Cases = 40
	}
	spec := &RunSpec{
		ID:      fmt.Sprintf("synthetic-%d", cfg.Attempts),
		Suite:   evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: hashOf("suite dev@1.0.0")},
		ImageID: "sha256:" + hashOf("image evalctl-sandbox:1"),
	}
	rng := rand.NewPCG(cfg.Seed, 7)
	for i := 0; len(spec.Attempts) < cfg.Attempts; i++ {
		arm := cfg.Arms[i%len(cfg.Arms)]
		c := (i / len(cfg.Arms)) % cfg.Cases
		r := i / (len(cfg.Arms) * cfg.Cases)
		lang, phases := "python", 1
		if c%4 == 1 {
			lang = "typescript"
		}
		if c%3 == 2 {
			phases = 2
		}
		as := AttemptSpec{Arm: arm, Case: fmt.Sprintf("case%03d", c), Language: lang, Repeat: fmt.Sprintf("repeat-%d", r+1),
			Seed: int64(1001 * (r + 1)), Slot: i, Phases: phases}
		if pick(rng, 100) == 0 && len(spec.Attempts)+1 < cfg.Attempts {
			failed := as
			failed.State = evalctl.InfraFailed
			spec.Attempts = append(spec.Attempts, failed)
			as.Replaces, as.ReplacementOf = true, len(spec.Attempts)-1
		}
		as.Solved = make([]bool, phases)
		as.Terminations = make([]evalctl.Termination, phases)
		for p := 0; p < phases; p++ {
			as.Solved[p] = pick(rng, 100) < 92
			as.Terminations[p] = evalctl.TermCompleted
		}
		if pick(rng, 20) == 0 {
			as.Terminations[phases-1] = evalctl.TermWallTimeLimit
		}
		as.Tokens = int64(8000 + pick(rng, 40000))
		as.Decode = float64(int64(float64(as.Tokens)/uniform(rng, 30, 65)*1000)) / 1000
		as.Task = as.Decode + float64(pick(rng, 60000))/1000
		draft := as.Tokens * 4 / 5
		acc := draft * int64(50+pick(rng, 20)) / 100
		as.DraftTokens, as.DraftAccepted = &draft, &acc
		spec.Attempts = append(spec.Attempts, as)
	}
	return spec
}
