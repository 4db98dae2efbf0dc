// Package sandboxtest gives tests of any package a connection to the real
// Docker Engine and the sandbox image, building the image once if it is
// missing (a file lock keeps parallel test binaries from building it twice).
package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/evalctl/evalctl/sandbox"
)

var (
	once    sync.Once
	engine  *sandbox.Engine
	image   *sandbox.BuiltImage
	initErr error
)

// Engine returns a shared engine connection and the sandbox image, failing
// the test with the fix when Docker is unreachable or the image cannot be
// built.
//
// Under -short (the quick tier: pure logic, no Docker) the test is skipped
// instead; 'make test' runs every test against the real engine.
func Engine(t testing.TB) (*sandbox.Engine, *sandbox.BuiltImage) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Docker Engine and the sandbox image: skipped under -short (run 'make test' for every test)")
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		engine, initErr = sandbox.Connect(ctx)
		if initErr != nil {
			return
		}
		recipe, err := sandbox.DefaultRecipe()
		if err != nil {
			initErr = err
			return
		}
		lock := flock.New(filepath.Join(os.TempDir(), "evalctl-image-build.lock"))
		if initErr = lock.Lock(); initErr != nil {
			return
		}
		defer lock.Unlock()
		image, initErr = engine.Build(ctx, recipe, sandbox.BuildOptions{})
	})
	if initErr != nil {
		t.Fatalf("sandbox engine: %v (tests need the Docker Engine and 'evalctl image build')", initErr)
	}
	return engine, image
}

// Start starts a container of the sandbox image for a test and removes it
// when the test ends.
func Start(t testing.TB, spec sandbox.Spec) *sandbox.Container {
	t.Helper()
	eng, img := Engine(t)
	if spec.Image == "" {
		spec.Image = img.Ref
	}
	if spec.Role == "" {
		spec.Role = sandbox.RoleTest
	}
	if spec.Run == "" {
		spec.Run = RunLabel(t)
	}
	c, err := eng.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() { c.Remove(context.Background()) })
	return c
}

// LongEnv is the environment variable that turns on the long integration
// tests; 'make test' (its unit target) sets it, as CI does.
const LongEnv = "EVALCTL_LONG_TESTS"

// Long skips a long integration test (minutes of real containers and
// model turns) unless LongEnv is set, so that a plain 'go test ./...'
// finishes within Go's default timeout; 'make test' runs them all.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv(LongEnv) == "" {
		t.Skipf("long integration test: skipped unless %s=1; run 'make test' for every test", LongEnv)
	}
}

// RunLabel returns a container run label (sandbox.LabelRun) unique to this
// test, process and moment, and removes every container that carries it
// when the test ends, passed or failed. Tests that start containers label
// them with it, so that no test (of this or another test binary, run by
// anyone on the same engine) prunes or counts another's containers.
func RunLabel(t testing.TB) string {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	label := fmt.Sprintf("test-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		if engine != nil {
			engine.Prune(context.Background(), map[string]string{sandbox.LabelRun: label})
		}
	})
	return label
}

// LabelTestImage marks images tests build, so that one a killed test left
// behind can be found ('docker images --filter label=io.evalctl.test-image').
const LabelTestImage = "io.evalctl.test-image"

// AgentImage builds an agent image on the sandbox image from a Dockerfile
// and the files beside it (a file whose content starts with "#!" is
// executable), under a tag unique to the test, and removes it when the
// test ends, passed or failed.
func AgentImage(t testing.TB, dockerfile string, files map[string]string) *sandbox.BuiltImage {
	t.Helper()
	_, img, err := BuildAgentImage(t, dockerfile, files)
	if err != nil {
		t.Fatalf("build agent image: %v", err)
	}
	return img
}

// BuildAgentImage is AgentImage returning the tag it asked for and the
// build's error (for tests of a refused build); whatever it tagged is
// removed when the test ends.
func BuildAgentImage(t testing.TB, dockerfile string, files map[string]string) (string, *sandbox.BuiltImage, error) {
	t.Helper()
	eng, base := Engine(t)
	dir := t.TempDir()
	files["Dockerfile"] = dockerfile
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	name := strings.ToLower(strings.NewReplacer("/", "-", " ", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	tag := fmt.Sprintf("evalctl-test-agent:%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { eng.RemoveImage(context.Background(), tag) })
	img, err := eng.BuildAgent(context.Background(), base, sandbox.AgentBuild{
		Dockerfile: filepath.Join(dir, "Dockerfile"), Tag: tag, NetworkMode: "none",
		Labels: map[string]string{LabelTestImage: "1"},
	})
	return tag, img, err
}
