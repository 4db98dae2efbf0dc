package report

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Reference values computed independently (Python, z = 1.959963984540054);
	// they agree with statsmodels proportion_confint(method="wilson").
	tests := []struct {
		k, n     int
		low, hi  float64
		noDenom  bool
		exactEnd bool
	}{
		{k: 5, n: 10, low: 0.236593090512564, hi: 0.7634069094874361},
		{k: 0, n: 10, low: 0, hi: 0.2775327998628892, exactEnd: true},
		{k: 10, n: 10, low: 0.7224672001371106, hi: 1, exactEnd: true},
		{k: 22, n: 24, low: 0.741511978067893, hi: 0.9768411847029564},
		{k: 1, n: 1, low: 0.20654931437723745, hi: 1, exactEnd: true},
		{k: 0, n: 0, noDenom: true},
	}
	for _, tt := range tests {
		lo, hi, ok := Wilson(tt.k, tt.n)
		if ok == tt.noDenom {
			t.Errorf("Wilson(%d,%d) ok = %v", tt.k, tt.n, ok)
			continue
		}
		if tt.noDenom {
			continue
		}
		if !near(lo, tt.low, 1e-12) || !near(hi, tt.hi, 1e-12) {
			t.Errorf("Wilson(%d,%d) = [%v, %v], want [%v, %v]", tt.k, tt.n, lo, hi, tt.low, tt.hi)
		}
		p := float64(tt.k) / float64(tt.n)
		if lo > p || hi < p || lo < 0 || hi > 1 {
			t.Errorf("Wilson(%d,%d) = [%v, %v] does not hold %v inside [0,1]", tt.k, tt.n, lo, hi, p)
		}
	}
}

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{1, 0, 1},                // 7/8 vs 8/8: one discordant pair
		{0, 6, 0.03125},          // 2 * 1/64
		{1, 3, 0.625},            // 2 * 5/16
		{10, 2, 0.0385742187500}, // 2 * (1+12+66)/4096
		{5, 5, 1},
		{0, 1000, math.Ldexp(1, -999)},
	}
	for _, tt := range tests {
		got := McNemarExact(tt.b, tt.c)
		if got != tt.want {
			t.Errorf("McNemarExact(%d,%d) = %v, want %v", tt.b, tt.c, got, tt.want)
		}
		if McNemarExact(tt.c, tt.b) != got {
			t.Errorf("McNemarExact is not symmetric at (%d,%d)", tt.b, tt.c)
		}
	}
	// Large balanced counts stay exact and finite.
	if p := McNemarExact(5000, 5100); !(p > 0.3 && p < 0.4) {
		t.Errorf("McNemarExact(5000,5100) = %v, want about 0.33", p)
	}
}

func TestMedianAndQuantile(t *testing.T) {
	if m, _ := median([]float64{4, 1, 3}); m != 3 {
		t.Errorf("odd median = %v", m)
	}
	if m, _ := median([]float64{4, 1, 3, 10}); m != 3.5 {
		t.Errorf("even median = %v, want the mean of the two middle values", m)
	}
	if _, ok := median(nil); ok {
		t.Error("median of nothing is ok")
	}
	xs := []float64{1, 2, 3, 4, 5}
	if q := quantile(xs, 0.025); !near(q, 1.1, 1e-12) {
		t.Errorf("q(0.025) = %v", q)
	}
	if q := quantile(xs, 0.975); !near(q, 4.9, 1e-12) {
		t.Errorf("q(0.975) = %v", q)
	}
}

func TestBoundedDrawUniform(t *testing.T) {
	src := rand.NewPCG(1, 2)
	counts := make([]int, 7)
	for i := 0; i < 70000; i++ {
		v := boundedDraw(src, 7)
		if v >= 7 {
			t.Fatalf("draw %d out of range", v)
		}
		counts[v]++
	}
	for i, c := range counts {
		if c < 9500 || c > 10500 {
			t.Errorf("value %d drawn %d times of 70000", i, c)
		}
	}
}

func TestBootstrapRatio(t *testing.T) {
	cs := []caseSums{
		{baseTok: 1000, baseSec: 20, candTok: 1100, candSec: 20},
		{baseTok: 2000, baseSec: 50, candTok: 2100, candSec: 45},
		{baseTok: 800, baseSec: 16, candTok: 700, candSec: 15},
		{baseTok: 1500, baseSec: 30, candTok: 1800, candSec: 31},
	}
	r, _ := ratioOf(cs, nil)
	lo, hi, ok := bootstrapRatio(cs, 2000, 7)
	if !ok || lo > r || hi < r || lo >= hi {
		t.Fatalf("interval [%v, %v] around %v", lo, hi, r)
	}
	lo2, hi2, _ := bootstrapRatio(cs, 2000, 7)
	if lo2 != lo || hi2 != hi {
		t.Error("the same seed gave a different interval")
	}
	if _, _, ok := bootstrapRatio(cs[:1], 2000, 7); ok {
		t.Error("an interval from one case")
	}
}
