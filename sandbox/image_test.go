package sandbox_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

func TestRecipeTagFollowsTheRecipe(t *testing.T) {
	r, err := sandbox.DefaultRecipe()
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Ref()
	if !strings.HasPrefix(ref, sandbox.ImageRepository+":") || r.Ref() != ref {
		t.Fatalf("ref %q not stable", ref)
	}
	r.Files["execd"] = append([]byte("# changed\n"), r.Files["execd"]...)
	if r.Ref() == ref {
		t.Error("a changed user layer kept the tag")
	}
	base := r.BaseRef()
	r.Sources = append(r.Sources, "deb http://deb.debian.org/debian bookworm contrib")
	if r.BaseRef() == base {
		t.Error("changed apt sources kept the base tag")
	}
}

func TestBuildReusesAnUnchangedRecipe(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	r, _ := sandbox.DefaultRecipe()
	again, err := eng.Build(context.Background(), r, sandbox.BuildOptions{})
	if err != nil || !again.Reused || again.ID != img.ID {
		t.Fatalf("rebuild: %+v %v; want the same image reused", again, err)
	}
}

func TestMissingMmdebstrapSaysHowToInstallIt(t *testing.T) {
	eng, _ := sandboxtest.Engine(t)
	t.Setenv("PATH", t.TempDir())
	r, _ := sandbox.DefaultRecipe()
	_, err := eng.Build(context.Background(), r, sandbox.BuildOptions{Force: true})
	if !errors.Is(err, sandbox.ErrNoMmdebstrap) || !strings.Contains(err.Error(), "apt-get install -y mmdebstrap") {
		t.Fatalf("got %v", err)
	}
}

func TestNoDaemonSaysWhatToDo(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	_, err := sandbox.Connect(context.Background())
	if !errors.Is(err, sandbox.ErrNoDaemon) || !strings.Contains(err.Error(), "DOCKER_HOST") {
		t.Fatalf("got %v", err)
	}
}

// TestFailedBootstrapSaysWhatToCheck: a bootstrap that cannot fetch a
// package (here from an apt source that does not exist) fails with
// mmdebstrap's own words and what to check, and tags no image.
func TestFailedBootstrapSaysWhatToCheck(t *testing.T) {
	eng, _ := sandboxtest.Engine(t)
	r, _ := sandbox.DefaultRecipe()
	r.Sources = []string{"deb [trusted=yes] file:///nonexistent/evalctl-test bookworm main"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := eng.Build(ctx, r, sandbox.BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "bootstrap failed: mmdebstrap") || !strings.Contains(err.Error(), "check the apt sources") {
		t.Fatalf("got %v, want a bootstrap failure saying what to check", err)
	}
	if _, err := exec.Command("docker", "image", "inspect", r.BaseRef()).CombinedOutput(); err == nil {
		t.Errorf("a failed bootstrap left the image %s", r.BaseRef())
	}
}
