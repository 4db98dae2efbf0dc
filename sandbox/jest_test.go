package sandbox_test

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestJestLayer runs testdata/jest-layer.test.js on the image's Jest
// layer (/opt/evalctl/jest.js) under node's test runner: every matcher,
// .not, .resolves/.rejects, xtest, done callbacks and the hooks pass where
// they should and fail where they should, also when the code under test
// replaces the built-ins the matchers judge with.
func TestJestLayer(t *testing.T) {
	src, err := os.ReadFile("testdata/jest-layer.test.js")
	if err != nil {
		t.Fatal(err)
	}
	c := sandboxtest.Start(t, sandbox.Spec{})
	ctx := context.Background()
	if err := c.CopyIn(ctx, "/workspace", []sandbox.Entry{{Name: "layer.test.js", Mode: 0o644, Data: src}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(ctx, []string{"node", "--require", "/opt/evalctl/harden.js", "--test", "--test-reporter=tap", "/workspace/layer.test.js"},
		sandbox.ExecOptions{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var passed, failed []string
	point := regexp.MustCompile(`^ {4}(not ok|ok) \d+ - (.*)$`)
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if m := point.FindStringSubmatch(l); m != nil {
			if m[1] == "ok" {
				passed = append(passed, m[2])
			} else {
				failed = append(failed, m[2])
			}
		}
	}
	sort.Strings(failed)
	want := struct{ passed, failed string }{
		"toBe toEqual toStrictEqual toThrow misc resolves done",
		"f1 f2 f3 f4 f5 f6 f7 f8 Object.is replaced f9 filter replaced",
	}
	if got := strings.Join(passed, " "); got != want.passed {
		t.Errorf("passed %q, want %q\n%s", got, want.passed, res.Stdout)
	}
	if got := strings.Join(failed, " "); got != want.failed {
		t.Errorf("failed %q, want %q\n%s", got, want.failed, res.Stdout)
	}
	// The afterAll hook checks that beforeEach ran before each of the 16 tests.
	if strings.Contains(string(res.Stdout), "hooks ran") {
		t.Errorf("hooks: %s", res.Stdout)
	}
}
