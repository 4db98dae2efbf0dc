package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func exportSeed(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), []string{seedDir}, out, Options{Baseline: "original_q4"}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExportContents(t *testing.T) {
	out := exportSeed(t)
	if err := Verify(out); err != nil {
		t.Fatalf("a fresh export does not verify: %v", err)
	}
	// attempts.json and attempts.csv hold the same rows, unscored included.
	var rows []Row
	data, _ := os.ReadFile(filepath.Join(out, AttemptsJSON))
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 73 {
		t.Errorf("%d rows, want 73 (72 slots and one replaced infra failure)", len(rows))
	}
	if rows[0].State != "infra_failed" || rows[0].Functional != nil || rows[0].DecodeSeconds != nil || rows[0].ReplacedBy == nil {
		t.Errorf("first row should be the replaced infra failure with null outcome and measurements: %+v", rows[0])
	}
	if !bytes.Contains(data, []byte(`"functional": null`)) {
		t.Error("attempts.json does not write unknown outcomes as null")
	}
	f, _ := os.Open(filepath.Join(out, AttemptsCSV))
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 {
		t.Errorf("attempts.csv has %d records for %d rows", len(recs)-1, len(rows))
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	if v := recs[1][col["functional"]]; v != "" {
		t.Errorf("null functional written as %q in CSV", v)
	}
	var agg Report
	data, _ = os.ReadFile(filepath.Join(out, AggregatesJSON))
	if err := json.Unmarshal(data, &agg); err != nil {
		t.Fatal(err)
	}
	if *agg.Arms[0].DecodeTPS != 62.357151060397875 {
		t.Errorf("aggregates decode TPS %v", *agg.Arms[0].DecodeTPS)
	}
	if !bytes.Contains(data, []byte("62.357151060397875")) {
		t.Error("aggregates.json lost precision")
	}
	var proto Protocol
	data, _ = os.ReadFile(filepath.Join(out, ProtocolJSON))
	if err := json.Unmarshal(data, &proto); err != nil {
		t.Fatal(err)
	}
	if len(proto.Runs) != 1 || !proto.Runs[0].PlanMatchesRun || proto.Runs[0].RunID != "dev24-quant" || proto.Runs[0].PlanFile == "" {
		t.Errorf("protocol %+v", proto.Runs)
	}
	sums, _ := os.ReadFile(filepath.Join(out, SumsFile))
	for _, name := range exportFiles {
		data, _ := os.ReadFile(filepath.Join(out, name))
		h := sha256.Sum256(data)
		if !strings.Contains(string(sums), hex.EncodeToString(h[:])+"  "+name+"\n") {
			t.Errorf("SHA256SUMS lacks a sha256sum-format line for %s", name)
		}
	}
	if _, err := Export(context.Background(), []string{seedDir}, out, Options{}); !errors.Is(err, ErrExportDir) {
		t.Errorf("export over an existing export: %v", err)
	}
}

// TestVerifyRejectsOneChangedByte flips one byte at several places of every
// file of an export; Verify must fail and name the file.
func TestVerifyRejectsOneChangedByte(t *testing.T) {
	clean := exportSeed(t)
	for _, name := range append(append([]string{}, exportFiles...), SumsFile) {
		orig, err := os.ReadFile(filepath.Join(clean, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{0, len(orig) / 3, len(orig) / 2, len(orig) - 2} {
			dir := copyDir(t, clean)
			data := bytes.Clone(orig)
			data[at] ^= 0x01
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			err := Verify(dir)
			var d *Difference
			if !errors.As(err, &d) {
				t.Errorf("%s byte %d changed: Verify = %v, want a *Difference", name, at, err)
				continue
			}
			if name != SumsFile && d.File != name {
				t.Errorf("%s byte %d changed: difference names %s", name, at, d.File)
			}
		}
	}
}

// TestVerifyRecomputes: an edit whose checksums were updated to match is
// still caught, because every aggregate is recomputed from attempts.json.
func TestVerifyRecomputes(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		wantFile, wantField  string
	}{
		{"aggregate edited", AggregatesJSON, `"decode_tps": 62.357151060397875`, `"decode_tps": 62.357151060397876`, AggregatesJSON, "arms[0].decode_tps"},
		{"aggregate csv edited", AggregatesCSV, "10116.1934", "10116.1935", AggregatesCSV, "line 2, column decode_seconds"},
		// The flipped outcome no longer follows from the row's evidence.
		{"row edited", AttemptsJSON, `"functional": false`, `"functional": true`, AttemptsJSON, "functional"},
		{"options edited", AggregatesJSON, `"allow_mixed": false`, `"allow_mixed": true`, AggregatesJSON, "options"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, exportSeed(t))
			p := filepath.Join(dir, tt.file)
			data, _ := os.ReadFile(p)
			if !bytes.Contains(data, []byte(tt.old)) {
				t.Fatalf("%s lacks %q", tt.file, tt.old)
			}
			data = bytes.Replace(data, []byte(tt.old), []byte(tt.new), 1)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			resum(t, dir)
			err := Verify(dir)
			var d *Difference
			if !errors.As(err, &d) || d.File != tt.wantFile || !strings.Contains(d.Field, tt.wantField) {
				t.Fatalf("Verify = %v, want a difference in %s at %s", err, tt.wantFile, tt.wantField)
			}
		})
	}
	// Rows and their CSV edited together: the aggregates no longer follow.
	dir := copyDir(t, exportSeed(t))
	var rows []Row
	data, _ := os.ReadFile(filepath.Join(dir, AttemptsJSON))
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	*rows[1].DecodeSeconds += 1
	data, _ = marshalIndent(rows)
	os.WriteFile(filepath.Join(dir, AttemptsJSON), data, 0o644)
	data, _ = attemptsCSV(rows)
	os.WriteFile(filepath.Join(dir, AttemptsCSV), data, 0o644)
	resum(t, dir)
	err := Verify(dir)
	var d *Difference
	if !errors.As(err, &d) || d.File != AggregatesJSON || !strings.Contains(err.Error(), "expected") {
		t.Fatalf("Verify = %v, want an aggregates.json difference", err)
	}
	t.Logf("as a user sees it: %v", err)
}

func resum(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	for _, name := range exportFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
