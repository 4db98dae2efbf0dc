package serving

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
)

// The test binary doubles as the programs the lifecycle tests start, so
// they run real processes without a build step: with EVALCTL_SERVING_HELPER
// set, TestMain runs that program instead of the tests.
//
//	fake-server  a minimal health-only server (startup delay, failures,
//	             a forked grandchild, SIGTERM ignored on request)
//	sleeper      a process that only sleeps (the grandchild)
//	parent       evalctl in miniature: starts a profile, prints the
//	             server's PID, stops it when interrupted
const helperEnv = "EVALCTL_SERVING_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		code := m.Run()
		servingtest.Cleanup()
		os.Exit(code)
	case "fake-server":
		os.Exit(fakeServer(os.Args[1:]))
	case "sleeper":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "parent":
		os.Exit(parent(os.Args[1:]))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

func fakeServer(args []string) int {
	fs := flag.NewFlagSet("fake-server", flag.ContinueOnError)
	addr := fs.String("addr", "", "listen address")
	delay := fs.Duration("startup-delay", 0, "answer 503 this long")
	fail := fs.Bool("fail", false, "exit 1 at start")
	child := fs.String("spawn-child", "", "fork a sleeper and write its PID to this file")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Println("fake-server: starting on", *addr)
	if *fail {
		fmt.Println("fake-server: failed to allocate KV cache")
		return 1
	}
	if *child != "" {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		os.WriteFile(*child, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	}
	ready := time.Now().Add(*delay)
	http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(ready) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)
			return
		}
		fmt.Fprint(w, `{"status":"ok"}`)
	})
	if err := http.ListenAndServe(*addr, nil); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// parent starts the profile given as its argument, writes the server PID
// to the file given second, and stops the server when SIGINT or SIGTERM
// arrives, as evalctl's main does.
func parent(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := LoadProfile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := Start(ctx, p, StartOptions{LogPath: args[2], Evalctl: os.Getenv("EVALCTL_BIN")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Stop(context.Background())
	os.WriteFile(args[1], []byte(strconv.Itoa(srv.PID)), 0o644)
	<-ctx.Done()
	return 0
}

// writeProfile writes a profile that runs this test binary as the helper
// named by mode with extra args, and loads it.
func writeProfile(t *testing.T, dir, mode string, extra string, args ...string) *Profile {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { return strconv.Quote(s) }
	cmd := []string{q(exe)}
	for _, a := range args {
		cmd = append(cmd, q(a))
	}
	y := fmt.Sprintf("name: %s\ncommand: [%s]\nenv: {%s: %s}\nstartup_timeout: 20s\nstop_timeout: 2s\n%s",
		mode, strings.Join(cmd, ", "), helperEnv, mode, extra)
	path := filepath.Join(dir, mode+".yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readPID(t *testing.T, path string, within time.Duration) int {
	t.Helper()
	var b []byte
	poll.Until(t, "a PID in "+path, within, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0
	})
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
