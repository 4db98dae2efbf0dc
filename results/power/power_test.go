package power

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestFixedPairsIsSmallest(t *testing.T) {
	for _, tc := range []struct{ sd, h float64 }{
		{0.04, 0.02}, {0.04, 0.05}, {0.01, 0.01}, {0.2, 0.03}, {0.001, 0.5},
	} {
		n, err := FixedPairs(tc.sd, tc.h)
		if err != nil {
			t.Fatal(err)
		}
		width := func(n int) float64 { return tQuantile(n-1) * tc.sd / math.Sqrt(float64(n)) }
		if math.Expm1(width(n)) > tc.h+1e-12 {
			t.Errorf("sd %v h %v: %d pairs give half-width %v, above the target", tc.sd, tc.h, n, math.Expm1(width(n)))
		}
		if n > 2 && math.Expm1(width(n-1)) <= tc.h {
			t.Errorf("sd %v h %v: %d pairs already reach the target, %d is not the smallest", tc.sd, tc.h, n-1, n)
		}
		seq, err := SequentialPairs(tc.sd, tc.h, DefaultMixing)
		if err != nil {
			t.Fatal(err)
		}
		if seq < n {
			t.Errorf("sd %v h %v: the sequence reaches the width at %d pairs, before the fixed interval's %d", tc.sd, tc.h, seq, n)
		}
	}
}

func TestBadFigures(t *testing.T) {
	for _, f := range []func() error{
		func() error { _, err := FixedPairs(0.04, 0); return err },
		func() error { _, err := FixedPairs(-1, 0.02); return err },
		func() error { _, err := SequentialPairs(math.NaN(), 0.02, 2); return err },
		func() error { _, err := OutcomePairs(0.1, 0, 0.8); return err },
		func() error { _, err := OutcomePairs(0.1, 0.05, 1); return err },
		func() error { _, err := OutcomePairs(0, 0.05, 0.8); return err },
	} {
		if f() == nil {
			t.Error("a bad figure was accepted")
		}
	}
}

func TestPilotTooSmall(t *testing.T) {
	if _, err := PilotSD([]float64{0.01, 0.02, 0.03}); !errors.Is(err, ErrPilotTooSmall) {
		t.Errorf("3 pairs: %v, want pilot too small", err)
	}
	if sd, err := PilotSD([]float64{0.01, 0.02, 0.03, 0.04}); err != nil || math.Abs(sd-0.012909944487358056) > 1e-12 {
		t.Errorf("4 pairs: sd %v, %v", sd, err)
	}
	if _, err := Discordance(1, 24); !errors.Is(err, ErrPilotTooSmall) {
		t.Errorf("1 discordant pair: %v, want pilot too small", err)
	}
	if d, err := Discordance(3, 24); err != nil || d != 0.125 {
		t.Errorf("3 of 24: %v, %v", d, err)
	}
}

// Connor's approximation against the exact power of the test the report
// runs: at the approximate sample size the exact test's power is close to
// the power asked for.
func TestOutcomePairsAgainstExactPower(t *testing.T) {
	for _, tc := range []struct{ disc, diff, pow float64 }{
		{0.10, 0.05, 0.8}, {0.20, 0.10, 0.8}, {0.30, 0.10, 0.9}, {0.15, 0.05, 0.8},
	} {
		n, err := OutcomePairs(tc.disc, tc.diff, tc.pow)
		if err != nil {
			t.Fatal(err)
		}
		p10, p01 := (tc.disc+tc.diff)/2, (tc.disc-tc.diff)/2
		got := ExactPower(n, p10, p01)
		if math.Abs(got-tc.pow) > 0.05 {
			t.Errorf("%+v: %d pairs, exact power %.3f", tc, n, got)
		}
		if ExactPower(n/2, p10, p01) >= got {
			t.Errorf("%+v: half the pairs have as much power", tc)
		}
	}
}

// ExactPower against a direct simulation of McNemar's exact test.
func TestExactPowerBySimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, p10, p01 := 60, 0.2, 0.05
	hits, trials := 0, 4000
	for range trials {
		b, c := 0, 0
		for range n {
			u := rng.Float64()
			if u < p10 {
				b++
			} else if u < p10+p01 {
				c++
			}
		}
		if mcnemar(b, c) < Alpha {
			hits++
		}
	}
	sim := float64(hits) / float64(trials)
	if got := ExactPower(n, p10, p01); math.Abs(got-sim) > 4*math.Sqrt(sim*(1-sim)/float64(trials)) {
		t.Errorf("exact power %.3f, simulated %.3f", got, sim)
	}
}

func mcnemar(b, c int) float64 {
	if b+c == 0 {
		return 1
	}
	bin := distuv.Binomial{N: float64(b + c), P: 0.5}
	return math.Min(1, 2*bin.CDF(float64(min(b, c))))
}

// At the critical t the mixture's Bayes factor is 1/Alpha.
func TestSequenceTSolvesBayesFactor(t *testing.T) {
	for _, g := range []float64{0.5, 2, 10} {
		for n := 2; n <= 200; n++ {
			tt := SequenceT(n, g)
			if math.IsInf(tt, 1) {
				continue
			}
			nu, G := float64(n-1), 1+float64(n)*g
			bf := math.Pow(G, -0.5) * math.Pow((1+tt*tt/nu)/(1+tt*tt/(G*nu)), (nu+1)/2)
			if math.Abs(bf*Alpha-1) > 1e-9 {
				t.Errorf("g %v n %d: Bayes factor %v at t %v", g, n, bf, tt)
			}
			if tt <= tQuantile(n-1) {
				t.Errorf("g %v n %d: sequence t %v not wider than the fixed t", g, n, tt)
			}
		}
	}
	if !math.IsInf(SequenceT(1, 2), 1) || !math.IsInf(SequenceT(5, 0), 1) {
		t.Error("one pair or no mixing gave a bounded interval")
	}
}

func TestGPUHours(t *testing.T) {
	// 24 pairs at 450 and 400 task seconds per attempt: 24*850 s.
	if got := GPUHours(24, 450, 400); math.Abs(got-24*850.0/3600) > 1e-12 {
		t.Errorf("got %v", got)
	}
}
