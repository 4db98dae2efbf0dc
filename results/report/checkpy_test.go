package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// legendDigest is what check.py knows of the legend: the SHA-256 of each
// entry's term and meaning ("term\0meaning\n"), so that it holds the
// legend evalctl writes without a second copy of its words.
func legendDigest() string {
	var b strings.Builder
	for _, l := range Legend() {
		b.WriteString(l.Term + "\x00" + l.Meaning + "\n")
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

// pyList is the quoted strings of a Python list assigned to name.
func pyList(src, name string) []string {
	i := strings.Index(src, "\n"+name+" = [")
	if i < 0 {
		return nil
	}
	body := src[i:]
	body = body[:strings.Index(body, "]")]
	var out []string
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestCheckerKnowsWhatEvalctlWrites: the constants check.py holds are the
// ones evalctl writes with: the columns of both CSV files, the legend's
// digest, the endpoint idle method, the schemas and the bootstrap's
// settings. With -update, the legend digest and the idle method are
// written into check.py.
func TestCheckerKnowsWhatEvalctlWrites(t *testing.T) {
	src := string(checkerPy)
	if *update {
		src = regexp.MustCompile(`(?m)^LEGEND_SHA256 = .*$`).ReplaceAllLiteralString(src, "LEGEND_SHA256 = "+strconv.Quote(legendDigest()))
		src = regexp.MustCompile(`(?m)^IDLE_METHOD = .*$`).ReplaceAllLiteralString(src, "IDLE_METHOD = "+strconv.Quote(IdleMethod))
		if err := os.WriteFile(CheckerPy, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("check.py constants written: run the tests again")
	}
	var cols []string
	for _, c := range attemptColumns {
		cols = append(cols, c.name)
	}
	for _, tt := range []struct {
		name      string
		got, want []string
	}{
		{"ATTEMPT_COLUMNS", pyList(src, "ATTEMPT_COLUMNS"), cols},
		{"AGG_COLUMNS", pyList(src, "AGG_COLUMNS"), csvColumns},
		{"FILES", pyList(src, "FILES"), exportFiles},
	} {
		if strings.Join(tt.got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("check.py %s = %q\nevalctl writes %q", tt.name, tt.got, tt.want)
		}
	}
	for _, line := range []string{
		"LEGEND_SHA256 = " + strconv.Quote(legendDigest()),
		"IDLE_METHOD = " + strconv.Quote(IdleMethod),
		"SCHEMA = " + strconv.Quote(Schema),
		"PROTOCOL_SCHEMA = " + strconv.Quote(ProtocolSchema),
		fmt.Sprintf("BOOTSTRAP_RESAMPLES = %d", BootstrapResamples),
		fmt.Sprintf("BOOTSTRAP_SEED = %d", BootstrapSeed),
		fmt.Sprintf("SECONDS_PER_WEEK = %d", SecondsPerWeek),
	} {
		if !strings.Contains(src, "\n"+line+"\n") {
			t.Errorf("check.py lacks the line %s (go test -run TestCheckerKnowsWhatEvalctlWrites -update writes the legend digest and idle method)", line)
		}
	}
}
