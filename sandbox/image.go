package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

//go:embed recipe
var recipeFS embed.FS

// Packages are the Debian packages of the sandbox image. Changing the list
// changes the recipe hash and so the image tag.
var Packages = []string{
	"bash", "coreutils", "findutils", "grep", "sed", "git", "procps",
	"python3", "python3-pytest", "nodejs", "node-typescript",
}

// Suite is the Debian release the image is bootstrapped from.
const Suite = "bookworm"

// Image repository names: the bootstrapped root file system and the final
// image with the user layer on top.
const (
	BaseRepository  = "evalctl-base"
	ImageRepository = "evalctl-sandbox"
)

// ErrNoMmdebstrap means the bootstrap tool is missing.
var ErrNoMmdebstrap = errors.New("mmdebstrap is not installed: install it with 'apt-get install -y mmdebstrap' (as root), then run 'evalctl image build' again")

// Recipe is everything that decides the sandbox image's content. Its hash
// names the image, so an unchanged recipe reuses the image and a changed one
// builds a new tag.
type Recipe struct {
	// Sources are the apt source lines the root file system is bootstrapped
	// from (the host's own Debian sources).
	Sources []string
	// Files are the user layer's build context (Dockerfile and the grader's
	// helper scripts), by name.
	Files map[string][]byte
}

// DefaultRecipe reads the host's apt sources and the embedded user layer.
func DefaultRecipe() (*Recipe, error) {
	r := &Recipe{Sources: HostSources(), Files: map[string][]byte{}}
	err := fs.WalkDir(recipeFS, "recipe", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := recipeFS.ReadFile(p)
		r.Files[strings.TrimPrefix(p, "recipe/")] = data
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read image recipe: %w", err)
	}
	return r, nil
}

func (r *Recipe) baseHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "mmdebstrap\x00variant=apt\x00suite=%s\x00", Suite)
	fmt.Fprintf(h, "packages=%s\x00", strings.Join(Packages, ","))
	for _, s := range r.Sources {
		fmt.Fprintf(h, "source=%s\x00", s)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func (r *Recipe) imageHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "base=%s\x00", r.baseHash())
	names := make([]string, 0, len(r.Files))
	for n := range r.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(r.Files[n]))
		h.Write(r.Files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// BaseRef is the bootstrapped root file system's reference.
func (r *Recipe) BaseRef() string { return BaseRepository + ":" + r.baseHash() }

// Ref is the sandbox image's reference.
func (r *Recipe) Ref() string { return ImageRepository + ":" + r.imageHash() }

// HostSources returns the host's Debian apt sources for the image's suite as
// one-line entries ("deb URI SUITE COMPONENTS"), from sources.list and
// deb822 .sources files. It falls back to deb.debian.org when there is none.
func HostSources() []string {
	var out []string
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	files = append([]string{"/etc/apt/sources.list"}, files...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[0] != "deb" {
				continue
			}
			if strings.HasPrefix(fields[1], "[") { // options
				for len(fields) > 1 && !strings.HasSuffix(fields[1], "]") {
					fields = append(fields[:1], fields[2:]...)
				}
				fields = append(fields[:1], fields[2:]...)
			}
			if len(fields) >= 4 && isDebianSource(fields[1], fields[2]) {
				out = append(out, strings.Join(fields, " "))
			}
		}
	}
	deb822, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range deb822 {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, stanza := range strings.Split(string(data), "\n\n") {
			kv := map[string]string{}
			for _, line := range strings.Split(stanza, "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
					kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
				}
			}
			if !strings.Contains(" "+kv["types"]+" ", " deb ") || strings.EqualFold(kv["enabled"], "no") {
				continue
			}
			for _, uri := range strings.Fields(kv["uris"]) {
				for _, suite := range strings.Fields(kv["suites"]) {
					if isDebianSource(uri, suite) {
						out = append(out, fmt.Sprintf("deb %s %s %s", uri, suite, kv["components"]))
					}
				}
			}
		}
	}
	if len(out) == 0 {
		out = []string{"deb http://deb.debian.org/debian " + Suite + " main"}
	}
	sort.Strings(out)
	return out
}

func isDebianSource(uri, suite string) bool {
	return strings.HasPrefix(suite, Suite) && (strings.Contains(uri, "debian.org") || strings.Contains(uri, "/debian"))
}

// BuildOptions tune Build.
type BuildOptions struct {
	// Force rebuilds both layers even when the tags exist.
	Force bool
	// Log receives progress lines (nil discards them).
	Log io.Writer
}

// BuiltImage names a built (or reused) image.
type BuiltImage struct {
	Ref    string
	ID     string
	Reused bool
}

// ImageID returns the ID of a local image, or "" if it does not exist.
func (e *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	ictx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	ins, err := e.cli.ImageInspect(ictx, ref)
	if client.IsErrNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return ins.ID, nil
}

// Build makes the sandbox image for the recipe: it bootstraps the Debian
// root file system with mmdebstrap from the host's apt sources and imports
// it (no registry needed), then builds the user layer on top. Existing tags
// are reused unless opts.Force is set.
func (e *Engine) Build(ctx context.Context, r *Recipe, opts BuildOptions) (*BuiltImage, error) {
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	ref := r.Ref()
	if !opts.Force {
		id, err := e.ImageID(ctx, ref)
		if err != nil {
			return nil, err
		}
		if id != "" {
			return &BuiltImage{Ref: ref, ID: id, Reused: true}, nil
		}
	}
	baseID, err := e.ImageID(ctx, r.BaseRef())
	if err != nil {
		return nil, err
	}
	if baseID == "" || opts.Force {
		if err := e.bootstrap(ctx, r, logw); err != nil {
			return nil, err
		}
	}
	if err := e.buildLayer(ctx, r, logw); err != nil {
		return nil, err
	}
	id, err := e.ImageID(ctx, ref)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, fmt.Errorf("build image %s: the build finished but the tag is missing", ref)
	}
	return &BuiltImage{Ref: ref, ID: id}, nil
}

func (e *Engine) bootstrap(ctx context.Context, r *Recipe, logw io.Writer) error {
	tool, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return ErrNoMmdebstrap
	}
	args := []string{
		"--variant=apt", "--format=tar", "--include=" + strings.Join(Packages, ","),
		"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-include=/usr/share/doc/*/copyright",
		Suite, "-",
	}
	args = append(args, r.Sources...)
	fmt.Fprintf(logw, "bootstrapping %s with mmdebstrap from %d apt source(s) (about a minute)...\n", Suite, len(r.Sources))
	bctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(bctx, tool, args...)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("bootstrap: start mmdebstrap: %w", err)
	}
	body, importErr := e.cli.ImageImport(bctx, image.ImportSource{Source: out, SourceName: "-"}, r.BaseRef(), image.ImportOptions{Message: "evalctl sandbox base " + r.baseHash()})
	if importErr == nil {
		io.Copy(io.Discard, body)
		body.Close()
	} else {
		io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	if waitErr != nil {
		// docker import tags whatever arrived, even nothing: a base left
		// behind would be reused by the next build as if it were whole.
		if importErr == nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), apiTimeout)
			e.cli.ImageRemove(rctx, r.BaseRef(), image.RemoveOptions{Force: true, PruneChildren: true})
			cancel()
		}
		return fmt.Errorf("bootstrap failed: mmdebstrap: %v: %s (check the apt sources and that this runs as root or with unprivileged user namespaces)", waitErr, stderr.String())
	}
	if importErr != nil {
		return fmt.Errorf("bootstrap: docker import: %w", importErr)
	}
	return nil
}

func (e *Engine) buildLayer(ctx context.Context, r *Recipe, logw io.Writer) error {
	var entries []Entry
	for name, data := range r.Files {
		entries = append(entries, Entry{Name: name, Mode: 0o644, Data: data})
	}
	var buf bytes.Buffer
	if err := WriteArchive(&buf, entries); err != nil {
		return err
	}
	base := r.BaseRef()
	fmt.Fprintf(logw, "building the user layer %s on %s...\n", r.Ref(), base)
	bctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	resp, err := e.cli.ImageBuild(bctx, &buf, build.ImageBuildOptions{
		Tags: []string{r.Ref()}, BuildArgs: map[string]*string{"BASE": &base},
		Remove: true, ForceRemove: true, Version: build.BuilderV1, Labels: map[string]string{LabelManaged: "1"},
		// The user layer copies files and adds users: no step needs a
		// network (and the engine's bridge may not exist).
		NetworkMode: "none",
	})
	if err != nil {
		return fmt.Errorf("build user layer: %w", err)
	}
	defer resp.Body.Close()
	return streamBuild(resp.Body, logw, "build user layer")
}

// streamBuild reads an image build's progress to its end, logging each
// step; a step's failure is the error, prefixed with what.
func streamBuild(body io.Reader, logw io.Writer, what string) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		if msg.Error != "" {
			return fmt.Errorf("%s: %s", what, strings.TrimSpace(msg.Error))
		}
		if s := strings.TrimSpace(msg.Stream); s != "" {
			fmt.Fprintln(logw, "  "+s)
		}
	}
	return sc.Err()
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }
