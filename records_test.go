package evalctl_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// recorded is a run directory a real cohort runner wrote (cmd/evalctl's
// test data).
const recorded = "cmd/evalctl/testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

// TestRecordsReadBackByteIdentical: records written before they moved to
// this package decode with no field unknown and encode back to the same
// bytes, so stored runs read back unchanged. testdata/records holds each
// record with every field set: attempt, grade and outcome written by
// commit 5457ea1's runstore.WriteJSON; plan, run, regrade and server
// identity by commit eb323f2's, when their types lived in orchestrator,
// runstore, regrade and serving. The recorded run adds a plan and a run as
// a runner registers them (unset fields left out).
func TestRecordsReadBackByteIdentical(t *testing.T) {
	records := filepath.Join("testdata", "records")
	tests := []struct {
		file string
		v    any
	}{
		{filepath.Join(records, "attempt.json"), &evalctl.Attempt{}},
		{filepath.Join(records, "grade.json"), &evalctl.Grade{}},
		{filepath.Join(records, "outcome.json"), &evalctl.Outcome{}},
		{filepath.Join(records, "plan.json"), &evalctl.Plan{}},
		{filepath.Join(records, "run.json"), &evalctl.Run{}},
		{filepath.Join(records, "regrade.json"), &evalctl.RegradeRecord{}},
		{filepath.Join(records, "server.json"), &evalctl.ServerIdentity{}},
		{filepath.Join(recorded, "plan.json"), &evalctl.Plan{}},
		{filepath.Join(recorded, "run.json"), &evalctl.Run{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			stored, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(stored))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.v); err != nil {
				t.Fatalf("decode %s: %v", tt.file, err)
			}
			again, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if again = append(again, '\n'); !bytes.Equal(again, stored) {
				t.Errorf("%s encodes back differently:\n%s\nwant:\n%s", tt.file, again, stored)
			}
		})
	}
	// The plan's own encoding is the one registered and hashed.
	stored, err := os.ReadFile(filepath.Join(recorded, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p evalctl.Plan
	if err := json.Unmarshal(stored, &p); err != nil {
		t.Fatal(err)
	}
	if again, err := p.Encode(); err != nil || !bytes.Equal(again, stored) {
		t.Errorf("Plan.Encode of the recorded plan differs from its plan.json (%v)", err)
	}
}

// TestEventsReadBackByteIdentical: every line of stored event logs
// decodes with no field unknown, encodes back to the same line, and has a
// kind this package declares.
func TestEventsReadBackByteIdentical(t *testing.T) {
	known := declaredEventKinds(t)
	for _, file := range []string{filepath.Join("testdata", "records", "events.jsonl"), filepath.Join(recorded, "events.jsonl")} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			n++
			var e evalctl.Event
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
			again, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, sc.Bytes()) {
				t.Errorf("%s:%d encodes back as %s", file, n, again)
			}
			if !known[e.Kind] && !strings.HasPrefix(string(e.Kind), "x-") {
				t.Errorf("%s:%d: event kind %q is not declared in event.go", file, n, e.Kind)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil || n == 0 {
			t.Fatalf("%s: %d events (%v)", file, n, err)
		}
	}
}

// declaredEventKinds are the values of the EventKind constants of
// event.go.
func declaredEventKinds(t *testing.T) map[evalctl.EventKind]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[evalctl.EventKind]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				switch x := v.(type) {
				case *ast.BasicLit:
					out[evalctl.EventKind(strings.Trim(x.Value, `"`))] = true
				case *ast.CallExpr: // EventKind(State)
					if id, ok := x.Args[0].(*ast.Ident); ok {
						out[stateValue(t, id.Name)] = true
					}
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("event.go declares %d event kinds?", len(out))
	}
	return out
}

func stateValue(t *testing.T, name string) evalctl.EventKind {
	states := map[string]evalctl.State{"Completed": evalctl.Completed, "InfraFailed": evalctl.InfraFailed,
		"Interrupted": evalctl.Interrupted, "Cancelled": evalctl.Cancelled,
		"CancelledBeforeStart": evalctl.CancelledBeforeStart, "CancelledAfterStart": evalctl.CancelledAfterStart}
	s, ok := states[name]
	if !ok {
		t.Fatalf("event.go: an event kind of state %s, which the test does not know", name)
	}
	return evalctl.StateEvent(s)
}

// TestEventKindsNamed: no package writes an event whose kind is a bare
// string: every kind is one of the constants of event.go.
func TestEventKindsNamed(t *testing.T) {
	_, _, goFiles := repoFiles(t)
	fset := token.NewFileSet()
	for _, p := range goFiles {
		if strings.HasSuffix(p, "_test.go") {
			continue // tests spell the bytes out on purpose
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !isEventType(cl.Type) {
				return true
			}
			for _, el := range cl.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Kind" {
					if _, bare := kv.Value.(*ast.BasicLit); bare {
						t.Errorf("%s: an event with a bare string kind; name it with a constant of event.go", fset.Position(kv.Pos()))
					}
				}
			}
			return true
		})
	}
}

// isEventType is whether a composite literal's type is runstore.Event or
// evalctl.Event.
func isEventType(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "Event"
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && sel.Sel.Name == "Event" && (pkg.Name == "runstore" || pkg.Name == "evalctl")
}

// TestGroupWithoutCounts: a group whose grade records no test counts (one
// imported from another harness) reads as counts unknown, not 0, and is
// written back without counts; a group with counts is unaffected.
func TestGroupWithoutCounts(t *testing.T) {
	var g evalctl.GroupResult
	if err := json.Unmarshal([]byte(`{"name":"acceptance","required":true,"success":true}`), &g); err != nil {
		t.Fatal(err)
	}
	if !g.CountsUnknown || !g.Success {
		t.Errorf("read %+v, want counts unknown and the recorded success", g)
	}
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`"total"`)) || bytes.Contains(out, []byte(`"passed"`)) {
		t.Errorf("written back with counts: %s", out)
	}
	var h evalctl.GroupResult
	if err := json.Unmarshal([]byte(`{"name":"acceptance","passed":0,"failed":0,"total":0}`), &h); err != nil || h.CountsUnknown {
		t.Errorf("a group that ran no test reads as counts unknown: %+v %v", h, err)
	}
}
