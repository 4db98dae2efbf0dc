package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// CorpusDir holds the committed corpus of exports (TestGenerateExportCorpus
// writes it) and CorpusManifest names each with its expected verdict. The
// exports are kept without check.py (and its SHA256SUMS line): the checker
// under test is the one this evalctl ships, put back by corpusExport.
const (
	CorpusDir      = "testdata/exports"
	CorpusManifest = "corpus.json"
)

// CorpusEntry is one export of the corpus.
type CorpusEntry struct {
	Name    string `json:"name"`
	What    string `json:"what"`
	Verdict string `json:"verdict"` // "ok" or "rejected"
}

// UpdateCorpus reports whether the tests were asked to rewrite their
// golden files (-update), the corpus among them.
func UpdateCorpus() bool { return *update }

func readCorpus(t *testing.T) []CorpusEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(CorpusDir, CorpusManifest))
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./results/report -run TestGenerateExportCorpus -update)", err)
	}
	var m []CorpusEntry
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkerVerdicts runs a trusted copy of check.py over every directory
// (one Python process checks many; two processes share the work) and
// returns each directory's verdict: nil for OK, else its FAIL lines.
func checkerVerdicts(t *testing.T, dirs []string) map[string]error {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	trusted := filepath.Join(t.TempDir(), CheckerPy)
	if err := os.WriteFile(trusted, checkerPy, 0o644); err != nil {
		t.Fatal(err)
	}
	half := (len(dirs) + 1) / 2
	parts := [][]string{dirs[:half], dirs[half:]}
	outs := make([]map[string]error, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = runCheckerBatch(py, trusted, part)
		}()
	}
	wg.Wait()
	out := map[string]error{}
	for i := range parts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for k, v := range outs[i] {
			out[k] = v
		}
	}
	for _, d := range dirs {
		if _, ok := out[d]; !ok {
			t.Fatalf("check.py gave no verdict on %s", d)
		}
	}
	return out
}

// runCheckerBatch runs check.py on dirs, 200 at a time.
func runCheckerBatch(py, checker string, dirs []string) (map[string]error, error) {
	out := map[string]error{}
	const batch = 200
	for i := 0; i < len(dirs); i += batch {
		part := dirs[i:min(i+batch, len(dirs))]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		res, err := exec.CommandContext(ctx, py, append([]string{checker}, part...)...).Output()
		cancel()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			return nil, fmt.Errorf("check.py: %v: %s", err, res)
		}
		var fails []string
		for _, line := range strings.Split(strings.TrimSuffix(string(res), "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "OK: "):
				out[strings.SplitN(strings.TrimPrefix(line, "OK: "), ": ", 2)[0]] = nil
				fails = nil
			case strings.HasPrefix(line, "FAILED: "):
				out[strings.SplitN(strings.TrimPrefix(line, "FAILED: "), ": ", 2)[0]] = fmt.Errorf("%s", strings.Join(fails, "\n"))
				fails = nil
			case strings.HasPrefix(line, "FAIL: "):
				fails = append(fails, line)
			default:
				return nil, fmt.Errorf("check.py wrote %q", line)
			}
		}
	}
	return out, nil
}

// verifyAll runs Verify on every directory, two at a time.
func verifyAll(dirs []string) map[string]error {
	out := make([]error, len(dirs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = Verify(dirs[i])
			}
		}()
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	m := map[string]error{}
	for i, d := range dirs {
		m[d] = out[i]
	}
	return m
}

// corpusExport is the named corpus export made whole again: its files,
// this evalctl's check.py and the SHA256SUMS line for it.
func corpusExport(t testing.TB, name string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join(CorpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(src, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == SumsFile || e.Name() == CheckerPy {
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	h := sha256.Sum256(checkerPy)
	lines := strings.SplitAfter(string(sums), "\n")
	var out []string
	for _, l := range lines {
		if l != "" && !strings.HasSuffix(l, "  "+CheckerPy+"\n") {
			out = append(out, l)
		}
	}
	out = append(out, hex.EncodeToString(h[:])+"  "+CheckerPy+"\n")
	sort.Slice(out, func(i, j int) bool { return out[i][66:] < out[j][66:] })
	os.WriteFile(filepath.Join(dir, SumsFile), []byte(strings.Join(out, "")), 0o644)
	os.WriteFile(filepath.Join(dir, CheckerPy), checkerPy, 0o644)
	return dir
}

// TestExportCorpus: both checkers give every export of the corpus its
// expected verdict (a fresh export of a demo, a live run, a resumed and a
// cancelled run, imported grades without counts, a regrade, a sweep and
// the seed cohort: all accepted).
func TestExportCorpus(t *testing.T) {
	corpus := readCorpus(t)
	var dirs []string
	for _, e := range corpus {
		dirs = append(dirs, corpusExport(t, e.Name))
	}
	py := checkerVerdicts(t, dirs)
	for i, e := range corpus {
		goErr := Verify(dirs[i])
		if got := verdict(goErr); got != e.Verdict {
			t.Errorf("%s (%s): evalctl verify %s (%v), want %s", e.Name, e.What, got, goErr, e.Verdict)
		}
		if got := verdict(py[dirs[i]]); got != e.Verdict {
			t.Errorf("%s (%s): check.py %s (%v), want %s", e.Name, e.What, got, py[dirs[i]], e.Verdict)
		}
	}
}

func verdict(err error) string {
	if err == nil {
		return "ok"
	}
	return "rejected"
}

// tampered is one copy of a corpus export with one thing changed.
type tampered struct {
	name string // "EXPORT FILE what"
	dir  string
	// write makes dir: the unchanged files linked to the export, the
	// edited ones written.
	write func()
	// reformat marks a copy whose values are unchanged (re-indented,
	// re-quoted): both checkers accept it (docs/exports.md).
	reformat bool
	// fact marks an edit of a recorded fact that nothing derived shows
	// (an edit another consistent export could hold): no expected
	// verdict, only agreement.
	fact bool
}

// TestTamperedExports changes every field of every file of the corpus
// (and of variedExport) once (each JSON value and CSV cell by its generalised path, in the first
// export that has it, a null instance and a non-null one; every SHA256SUMS
// line; the checker), adds a file SHA256SUMS does not list, and
// re-indents or re-quotes every file; the checksums are updated to match
// except where they are the edit. evalctl verify and check.py must give
// the same verdict on every copy: a reformatted copy is accepted, every
// other edit rejected unless it is of a recorded fact no figure shows
// (docs/exports.md lists them).
func TestTamperedExports(t *testing.T) {
	t.Parallel() // the package's two longest tests run beside the rest
	corpus := readCorpus(t)
	var all []tampered
	seen := map[string]bool{}
	for i, e := range corpus {
		all = append(all, tamperExport(t, corpusExport(t, e.Name), e.Name, i == 0, seen)...)
	}
	// And the fields only a synthetic export reaches (replicas, counters,
	// drafts, mixed pools, ...).
	all = append(all, tamperExport(t, variedExport(t), "varied", len(corpus) == 0, seen)...)
	if testing.Short() {
		all = sampleTampered(all, quickShare)
	}
	dirs := make([]string, len(all))
	for i, c := range all {
		c.write()
		dirs[i] = c.dir
	}
	start := time.Now()
	py := checkerVerdicts(t, dirs)
	pySeconds := time.Since(start).Seconds()
	start = time.Now()
	verified := verifyAll(dirs)
	var accepted []string
	for _, c := range all {
		goErr, pyErr := verified[c.dir], py[c.dir]
		if (goErr == nil) != (pyErr == nil) {
			t.Errorf("%s: the checkers disagree: evalctl verify: %v; check.py: %v", c.name, goErr, pyErr)
			continue
		}
		switch {
		case c.reformat && goErr != nil:
			t.Errorf("%s: values unchanged, yet rejected: %v", c.name, goErr)
		case !c.reformat && !c.fact && goErr == nil:
			t.Errorf("%s: accepted by both checkers", c.name)
		case c.fact && goErr == nil:
			accepted = append(accepted, c.name)
		}
	}
	t.Logf("%d tampered copies: check.py %.1f s, evalctl verify %.1f s; facts edited into another consistent export (accepted by both): %d",
		len(all), pySeconds, time.Since(start).Seconds(), len(accepted))
	for _, a := range accepted {
		t.Logf("  accepted: %s", a)
	}
}

// quickShare is the share of tampered copies the quick tier (-short)
// checks: one in quickShare, every reformatted copy and every copy of a
// file other than the JSON and CSV data; the full run checks them all.
const quickShare = 8

// sampleTampered keeps every n-th copy, the reformatted ones, and those
// that edit the checksums, the checker or add a file.
func sampleTampered(all []tampered, n int) []tampered {
	var out []tampered
	for i, c := range all {
		data := strings.Contains(c.name, ".json") || strings.Contains(c.name, ".csv")
		if i%n == 0 || c.reformat || !data {
			out = append(out, c)
		}
	}
	return out
}

// leaf is one JSON scalar: its path (indices as [*] in gen), where it is.
type leaf struct {
	path, gen  string
	start, end int
	null       bool
}

// jsonLeaves lists every scalar of a JSON document with its byte range.
// Arrays whose elements differ in kind (notes, legend, mixed) keep their
// indices in the generalised path: each element is a field of its own.
func jsonLeaves(data []byte) []leaf {
	var out []leaf
	i := 0
	ws := func() {
		for i < len(data) && strings.IndexByte(" \t\r\n", data[i]) >= 0 {
			i++
		}
	}
	var value func(path, gen string)
	str := func() {
		i++
		for data[i] != '"' {
			if data[i] == '\\' {
				i++
			}
			i++
		}
		i++
	}
	value = func(path, gen string) {
		ws()
		switch data[i] {
		case '{':
			i++
			for {
				ws()
				if data[i] == '}' {
					i++
					return
				}
				ks := i
				str()
				k, _ := strconv.Unquote(string(data[ks:i]))
				ws()
				i++ // :
				p, g := k, k
				if path != "" {
					p, g = path+"."+k, gen+"."+k
				}
				value(p, g)
				ws()
				if data[i] == ',' {
					i++
				}
			}
		case '[':
			i++
			keep := regexp.MustCompile(`(^|\.)(notes|legend|mixed)$`).MatchString(gen)
			for n := 0; ; n++ {
				ws()
				if data[i] == ']' {
					i++
					return
				}
				g := gen + "[*]"
				if keep {
					g = fmt.Sprintf("%s[%d]", gen, n)
				}
				value(fmt.Sprintf("%s[%d]", path, n), g)
				ws()
				if data[i] == ',' {
					i++
				}
			}
		default:
			s := i
			if data[i] == '"' {
				str()
			} else {
				for i < len(data) && strings.IndexByte(",]} \t\r\n", data[i]) < 0 {
					i++
				}
			}
			out = append(out, leaf{path: path, gen: gen, start: s, end: i, null: string(data[s:i]) == "null"})
		}
	}
	value("", "")
	return out
}

// mutate is another value of the same JSON token (or CSV cell): a number
// moved by one (an integer) or to the next float64, a digit of a string
// changed (a number inside words), other strings lengthened, a boolean
// flipped, null made 0, an empty cell 0.
func mutate(tok string, quoted bool) string {
	switch {
	case tok == "true":
		return "false"
	case tok == "false":
		return "true"
	case tok == "null" || tok == "":
		return "0"
	}
	if !quoted {
		if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return strconv.FormatInt(n+1, 10)
		}
		if f, err := strconv.ParseFloat(tok, 64); err == nil {
			return csvNum(math.Nextafter(f, math.Inf(1)))
		}
	}
	if i := strings.IndexAny(tok, "0123456789"); i >= 0 {
		return tok[:i] + string('0'+(tok[i]-'0'+1)%10) + tok[i+1:]
	}
	if quoted {
		return tok[:len(tok)-1] + `x"`
	}
	return tok + "x"
}

// tamperExport makes the tampered copies of one export (see
// TestTamperedExports); seen holds the generalised paths already edited in
// an earlier export. Copies link the files they leave as they are.
func tamperExport(t *testing.T, src, name string, first bool, seen map[string]bool) []tampered {
	t.Helper()
	files := map[string][]byte{}
	for _, f := range append(append([]string{}, exportFiles...), SumsFile) {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = data
	}
	root := t.TempDir()
	abs, _ := filepath.Abs(src)
	var out []tampered
	// copyWith lists a copy; it is written only when the test checks it
	// (the quick tier samples them).
	copyWith := func(what string, changed map[string][]byte, resum bool) *tampered {
		dir := filepath.Join(root, strconv.Itoa(len(out)))
		write := func() {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range exportFiles {
				if data, ok := changed[f]; ok {
					os.WriteFile(filepath.Join(dir, f), data, 0o644)
				} else if err := os.Symlink(filepath.Join(abs, f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
			sums := files[SumsFile]
			if resum {
				var b strings.Builder
				for _, f := range exportFiles {
					data := files[f]
					if c, ok := changed[f]; ok {
						data = c
					}
					h := sha256.Sum256(data)
					fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), f)
				}
				sums = []byte(b.String())
			}
			if c, ok := changed[SumsFile]; ok {
				sums = c
			}
			os.WriteFile(filepath.Join(dir, SumsFile), sums, 0o644)
			for f, data := range changed {
				if !contains(exportFiles, f) && f != SumsFile {
					os.WriteFile(filepath.Join(dir, f), data, 0o644)
				}
			}
		}
		out = append(out, tampered{name: name + " " + what, dir: dir, write: write})
		return &out[len(out)-1]
	}
	for _, f := range []string{AttemptsJSON, AggregatesJSON, ProtocolJSON} {
		data := files[f]
		for _, l := range preferDelivered(f, data, jsonLeaves(data)) {
			key := fmt.Sprintf("%s %s null=%v", f, l.gen, l.null)
			if seen[key] {
				continue
			}
			seen[key] = true
			tok := string(data[l.start:l.end])
			edited := append(append(append([]byte{}, data[:l.start]...), mutate(tok, strings.HasPrefix(tok, `"`))...), data[l.end:]...)
			c := copyWith(fmt.Sprintf("%s %s: %s -> %s", f, l.path, short(tok), short(mutate(tok, strings.HasPrefix(tok, `"`)))), map[string][]byte{f: edited}, true)
			c.fact = isFact(f, l.gen)
		}
		// Re-indented with four spaces, keys in another order: the same
		// values.
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		re, _ := json.MarshalIndent(v, "", "    ")
		copyWith(f+" re-indented", map[string][]byte{f: re}, true).reformat = true
	}
	for _, f := range []string{AttemptsCSV, AggregatesCSV} {
		recs, err := csv.NewReader(bytes.NewReader(files[f])).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for r, rec := range recs {
			scope := "header"
			if r > 0 {
				scope = "row"
				if f == AggregatesCSV {
					scope = rec[0]
				}
			}
			for c, cell := range rec {
				key := fmt.Sprintf("%s %s %s empty=%v", f, scope, recs[0][c], cell == "")
				if seen[key] {
					continue
				}
				seen[key] = true
				edited := cloneRecords(recs)
				edited[r][c] = mutate(cell, false)
				cp := copyWith(fmt.Sprintf("%s line %d column %s: %s -> %s", f, r+1, recs[0][c], short(cell), short(edited[r][c])), map[string][]byte{f: writeRecords(edited, false)}, true)
				cp.fact = isFact(f, recs[0][c])
			}
		}
		copyWith(f+" every cell quoted", map[string][]byte{f: writeRecords(recs, true)}, true).reformat = true
	}
	if first {
		lines := strings.SplitAfter(string(files[SumsFile]), "\n")
		for i, line := range lines {
			if line == "" {
				continue
			}
			edited := append([]string{}, lines...)
			c := "0"
			if line[0] == '0' {
				c = "1"
			}
			edited[i] = c + line[1:]
			copyWith(fmt.Sprintf("%s line %d checksum", SumsFile, i+1), map[string][]byte{SumsFile: []byte(strings.Join(edited, ""))}, false)
		}
		edited := bytes.Replace(files[CheckerPy], []byte("Standard library only"), []byte("Standard library only!"), 1)
		copyWith(CheckerPy+" edited", map[string][]byte{CheckerPy: edited}, true)
		copyWith("an unlisted file added", map[string][]byte{"NOTES.txt": []byte("added after the export\n")}, true)
	}
	return out
}

// preferDelivered puts first the leaves of attempts.json's first delivered
// attempt: an edit of its evidence must show in its outcome, where a
// failed attempt's evidence may take the edit and stay a failure.
func preferDelivered(file string, data []byte, leaves []leaf) []leaf {
	if file != AttemptsJSON {
		return leaves
	}
	var rows []Row
	if json.Unmarshal(data, &rows) != nil {
		return leaves
	}
	for i, r := range rows {
		if r.Delivered != nil && *r.Delivered {
			prefix := fmt.Sprintf("[%d].", i)
			var first, rest []leaf
			for _, l := range leaves {
				if strings.HasPrefix(l.path, prefix) {
					first = append(first, l)
				} else {
					rest = append(rest, l)
				}
			}
			return append(first, rest...)
		}
	}
	return leaves
}

// factPaths are the recorded facts nothing derived shows (docs/exports.md):
// an edit of one may leave an export another run could have written, so it
// has no expected verdict, only agreement.
var factPaths = []*regexp.Regexp{
	regexp.MustCompile(`^attempts\.json \[\*\]\.evidence\.(phases\[\*\]\.(phase|protected_changes_count|missing_starter_files_count|groups\[\*\]\.(name|required|declared|exit_code|timed_out|passed|failed|total|success))|turns\[\*\]\.(phase|termination|agent_finished|final_text|last_test\.(exit_code|passed)|last_typecheck\.(exit_code|passed))|arm_unchanged)$`),
	regexp.MustCompile(`^protocol\.json (evalctl_version|runs\[\*\]\.timeline\.(sessions\[\*\]|rests\[\*\]\.(from|to)))$`),
}

func isFact(file, gen string) bool {
	for _, re := range factPaths {
		if re.MatchString(file + " " + gen) {
			return true
		}
	}
	return false
}

func cloneRecords(recs [][]string) [][]string {
	out := make([][]string, len(recs))
	for i, r := range recs {
		out[i] = append([]string{}, r...)
	}
	return out
}

// writeRecords writes CSV records as encoding/csv does, or with every cell
// quoted.
func writeRecords(recs [][]string, quoteAll bool) []byte {
	if !quoteAll {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.WriteAll(recs)
		return b.Bytes()
	}
	var b strings.Builder
	for _, r := range recs {
		for i, c := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strings.ReplaceAll(c, `"`, `""`) + `"`)
		}
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}
