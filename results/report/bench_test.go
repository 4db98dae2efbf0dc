package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

// benchRun writes (once per machine, cached under the temp directory) a
// synthetic run of n attempts and returns its directory.
func benchRun(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "evalctl-report-bench", fmt.Sprintf("synthetic-%d-v1", n))
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := reporttest.Write(tmp, reporttest.Synthetic(reporttest.SyntheticSpec{Attempts: n, Seed: 1})); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkReport10k is the whole report command over 10,000 attempts:
// read every attempt record and grade, pool, and render. Run with
// GOMAXPROCS=1 for the one-core figure (goal: <= 2 s).
func BenchmarkReport10k(b *testing.B) {
	for _, format := range []string{FormatTable, FormatJSON, FormatHTML} {
		b.Run(format, func(b *testing.B) {
			dir := benchRun(b, 10000)
			b.ReportAllocs()
			for b.Loop() {
				in, err := Load(context.Background(), []string{dir}, "")
				if err != nil {
					b.Fatal(err)
				}
				rep, err := Build(in, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := Write(io.Discard, rep, format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuild10k is the pooling and statistics alone (no file reading).
func BenchmarkBuild10k(b *testing.B) {
	in, err := Load(context.Background(), []string{benchRun(b, 10000)}, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is 'evalctl verify' on the corpus's demo export (six
// attempts, three cases):
//
//	go test ./results/report -run '^$' -bench Verify -benchtime 20x
func BenchmarkVerify(b *testing.B) {
	dir := corpusExport(b, "demo")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Verify(dir); err != nil {
			b.Fatal(err)
		}
	}
}
