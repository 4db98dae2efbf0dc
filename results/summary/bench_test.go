package summary

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

// BenchmarkSummarize100 summarizes 100 cohort runs of the seed's size (3
// arms x 24 attempts each, 7,200 attempts, 7,500 grade files) into one
// document. Goal: under 5 s.
func BenchmarkSummarize100(b *testing.B) {
	root := b.TempDir()
	var dirs []string
	for i := 0; i < 100; i++ {
		spec := reporttest.Synthetic(reporttest.SyntheticSpec{Attempts: 72, Cases: 8, Seed: uint64(i)})
		spec.ID = fmt.Sprintf("run-%03d", i)
		dir := filepath.Join(root, spec.ID)
		if err := reporttest.Write(dir, spec); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, err := Summarize(context.Background(), dirs)
		if err != nil {
			b.Fatal(err)
		}
		if len(doc.Cohorts) != 100 {
			b.Fatalf("%d cohorts", len(doc.Cohorts))
		}
	}
}
