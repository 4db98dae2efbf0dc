package orchestrator

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
)

// servers keeps the model server of arms that name a server profile. One
// GPU holds one server: switching to an arm with another profile stops the
// running server first. The profile's restart policy decides when a fresh
// server is started: never (only when the profile changes or the server
// died), per_arm (whenever the arm changes), per_attempt (every attempt).
type servers struct {
	dir      string
	evalctl  string
	progress io.Writer
	hashes   *serving.HashCache
	events   func(runstore.Event)
	cur      *serving.Server
	curArm   string
	curFile  string
	curVars  string
	// curIdentity is the identity file of the running server, relative
	// to the run directory ("" when it could not be taken).
	curIdentity string
	starts      int
}

// ensure returns the base URL of the arm's server, starting it when
// needed, and the identity file of that server start (relative to the run
// directory; "" when the server did not say who it is).
func (s *servers) ensure(ctx context.Context, arm *Arm) (url, identity string, err error) {
	p, err := serving.LoadProfile(arm.Profile)
	if err != nil {
		return "", "", err
	}
	if p.SHA256 != arm.ProfileSHA256 {
		return "", "", fmt.Errorf("profile %s changed since the plan was registered (sha256 %s, registered %s)", arm.Profile, p.SHA256, arm.ProfileSHA256)
	}
	if s.cur != nil {
		dead := false
		select {
		case <-s.cur.Exited():
			dead = true
		default:
		}
		keep := !dead && s.curFile == arm.Profile && s.curVars == varsKey(arm.ProfileVars)
		switch p.Restart {
		case serving.RestartPerArm:
			keep = keep && s.curArm == arm.Name
		case serving.RestartPerAttempt:
			keep = false
		}
		if keep {
			s.curArm = arm.Name
			return s.cur.BaseURL, s.curIdentity, nil
		}
		s.stop(ctx)
	}
	s.starts++
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return "", "", err
	}
	logPath := filepath.Join(s.dir, fmt.Sprintf("%03d-%s.log", s.starts, p.Name))
	fmt.Fprintf(s.progress, "%s starting model server %s for arm %s (log %s)\n", stamp(), p.Name, arm.Name, logPath)
	srv, err := serving.Start(ctx, p, serving.StartOptions{LogPath: logPath, Evalctl: s.evalctl, Vars: arm.ProfileVars})
	if err != nil {
		return "", "", err
	}
	s.cur, s.curArm, s.curFile, s.curVars, s.curIdentity = srv, arm.Name, arm.Profile, varsKey(arm.ProfileVars), ""
	// Who the server is (build, model path, flags, weight digests), kept
	// beside its log; every attempt it serves names the file.
	name := fmt.Sprintf("%03d-%s.identity.json", s.starts, p.Name)
	ok, err := srv.RecordIdentity(ctx, s.hashes, filepath.Join(s.dir, name), s.events)
	if err != nil {
		return "", "", err
	}
	if ok {
		s.curIdentity = filepath.Join(filepath.Base(s.dir), name)
	}
	return srv.BaseURL, s.curIdentity, nil
}

func (s *servers) stop(ctx context.Context) {
	if s.cur == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	s.cur.Stop(sctx)
	s.cur, s.curIdentity = nil, ""
}

// varsKey identifies a set of profile variables: a server started with
// other values is another server.
func varsKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "\x00")
	}
	return b.String()
}
