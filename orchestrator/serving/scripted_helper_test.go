package serving

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// evalctlBinary builds cmd/evalctl once per test run, so the scripted model
// server is started exactly as a profile with {{evalctl}} serve-model
// starts it.
func evalctlBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "evalctl-serving-test-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "evalctl")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		cmd := exec.Command(goTool, "build", "-o", buildPath, "github.com/evalctl/evalctl/cmd/evalctl")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build evalctl: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}
