// Package sandboxtest gives tests of any package a connection to the real
// Docker Engine and the sandbox image, building the image once if it is
// missing (a file lock keeps parallel test binaries from building it twice).
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
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
		spec.Run = "test-" + filepath.Base(t.Name())
	}
	c, err := eng.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() { c.Remove(context.Background()) })
	return c
}
