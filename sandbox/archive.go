package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
)

// Entry is one file, directory or symbolic link of a workspace archive.
type Entry struct {
	// Name is the slash-separated path relative to the archive root, without
	// a trailing slash.
	Name string
	// Mode holds the type bits (fs.ModeDir, fs.ModeSymlink, or none for a
	// regular file) and the permission bits.
	Mode     fs.FileMode
	Data     []byte
	Linkname string
}

// MaxArchiveBytes bounds a workspace archive, so a runaway answer cannot
// exhaust the orchestrator's memory or disk.
const MaxArchiveBytes = 256 << 20

// ErrArchiveTooLarge is returned for a workspace over MaxArchiveBytes.
var ErrArchiveTooLarge = errors.New("workspace archive exceeds 256 MiB")

// ownerUID is the sandbox user every archived file belongs to.
const ownerUID = 1000

// epoch is the modification time of every canonical entry: a snapshot's
// digest depends on content, names, types and modes only.
var epoch = time.Unix(0, 0).UTC()

// WriteArchive writes entries as a canonical tar: sorted by name, owned by
// uid/gid 1000, modification time zero. The same tree always gives the same
// bytes, so its SHA-256 identifies an answer.
func WriteArchive(w io.Writer, entries []Entry) error {
	return writeArchive(w, entries, ownerUID)
}

func writeArchive(w io.Writer, entries []Entry, uid int) error {
	sorted := append([]Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	tw := tar.NewWriter(w)
	for _, e := range sorted {
		if err := validName(e.Name); err != nil {
			return err
		}
		h := &tar.Header{Name: e.Name, Mode: int64(e.Mode.Perm()), Uid: uid, Gid: uid, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.Mode.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, e.Name+"/"
		case e.Mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Linkname
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("archive %s: %w", e.Name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.Data); err != nil {
				return fmt.Errorf("archive %s: %w", e.Name, err)
			}
		}
	}
	return tw.Close()
}

// validName refuses names that could escape the directory they are
// extracted into.
func validName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return fmt.Errorf("archive entry %q: not a clean relative path", name)
	}
	return nil
}

// ReadArchive reads a tar into entries. strip removes a leading directory
// (as Docker prefixes copies with the copied directory's name). Hard links
// become regular files; devices and FIFOs are dropped.
func ReadArchive(r io.Reader, strip string) ([]Entry, error) {
	return readArchive(r, strip, nil)
}

// readArchive is ReadArchive leaving out, before they count towards
// MaxArchiveBytes, the entries with a path segment skip reports.
func readArchive(r io.Reader, strip string, skip func(name string) bool) ([]Entry, error) {
	tr := tar.NewReader(r)
	var out []Entry
	var total int64
	byName := map[string]int{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		name := strings.TrimSuffix(path.Clean("/" + h.Name)[1:], "/")
		if strip != "" {
			if name == strip {
				continue
			}
			rest, ok := strings.CutPrefix(name, strip+"/")
			if !ok {
				continue
			}
			name = rest
		}
		if name == "" || name == "." {
			continue
		}
		if skip != nil && skipped(name, skip) {
			continue
		}
		e := Entry{Name: name, Mode: fs.FileMode(h.Mode).Perm()}
		switch h.Typeflag {
		case tar.TypeDir:
			e.Mode |= fs.ModeDir
		case tar.TypeSymlink:
			e.Mode |= fs.ModeSymlink
			e.Linkname = h.Linkname
		case tar.TypeReg, tar.TypeRegA:
			total += h.Size
			if total > MaxArchiveBytes {
				return nil, ErrArchiveTooLarge
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("read archive %s: %w", name, err)
			}
			e.Data = data
		case tar.TypeLink:
			target := strings.TrimSuffix(path.Clean("/" + h.Linkname)[1:], "/")
			if strip != "" {
				target = strings.TrimPrefix(target, strip+"/")
			}
			i, ok := byName[target]
			if !ok {
				continue
			}
			// A hard link is a second copy once stored: it counts.
			total += int64(len(out[i].Data))
			if total > MaxArchiveBytes {
				return nil, ErrArchiveTooLarge
			}
			e.Data = out[i].Data
		default:
			continue
		}
		byName[name] = len(out)
		out = append(out, e)
	}
	return out, nil
}

// DirEntries reads a host directory into entries, leaving out names skip
// reports (nil keeps everything).
func DirEntries(dir string, skip func(name string) bool) ([]Entry, error) {
	var out []Entry
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if skip != nil && skip(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Name: filepath.ToSlash(rel), Mode: info.Mode() & (fs.ModeDir | fs.ModeSymlink | fs.ModePerm)}
		switch {
		case d.IsDir():
		case info.Mode()&fs.ModeSymlink != 0:
			if e.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			total += info.Size()
			if total > MaxArchiveBytes {
				return ErrArchiveTooLarge
			}
			if e.Data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return nil
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", dir, err)
	}
	return out, nil
}

// Snapshot is a canonical tarball of a directory taken out of a container.
type Snapshot struct {
	Tar    []byte
	SHA256 string
}

// NewSnapshot encodes entries canonically and digests them.
func NewSnapshot(entries []Entry) (*Snapshot, error) {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, entries); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &Snapshot{Tar: buf.Bytes(), SHA256: hex.EncodeToString(sum[:])}, nil
}

// Entries decodes the snapshot.
func (s *Snapshot) Entries() ([]Entry, error) { return ReadArchive(bytes.NewReader(s.Tar), "") }

// CopyIn extracts entries into dir (which must be /workspace or under it, or
// /tmp: the only writable places) as the sandbox user.
func (c *Container) CopyIn(ctx context.Context, dir string, entries []Entry) error {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, entries); err != nil {
		return err
	}
	return c.CopyTar(ctx, dir, &buf)
}

// CopyInReadOnly extracts entries into dir owned by root with every write
// permission bit cleared, so the sandbox's commands can read but never
// change them (frozen checks). dir must be a volume (see Spec.Volumes).
func (c *Container) CopyInReadOnly(ctx context.Context, dir string, entries []Entry) error {
	ro := make([]Entry, len(entries))
	for i, e := range entries {
		e.Mode &^= 0o222
		ro[i] = e
	}
	var buf bytes.Buffer
	if err := writeArchive(&buf, ro, 0); err != nil {
		return err
	}
	return c.CopyTar(ctx, dir, &buf)
}

// CopyInPrivate copies entries into dir owned by user ("uid:gid", as
// HarnessUser) and readable by that user alone: files 0400, directories
// 0500 (symbolic links keep their target; what they reach keeps its own
// mode).
func (c *Container) CopyInPrivate(ctx context.Context, dir string, entries []Entry, user string) error {
	uidText, _, _ := strings.Cut(user, ":")
	uid, err := strconv.Atoi(uidText)
	if err != nil {
		return fmt.Errorf("copy into %s: user %q is not uid:gid", dir, user)
	}
	priv := make([]Entry, len(entries))
	for i, e := range entries {
		switch {
		case e.Mode.IsDir():
			e.Mode = e.Mode&^fs.ModePerm | 0o500
		case e.Mode&fs.ModeSymlink == 0:
			e.Mode = e.Mode&^fs.ModePerm | (e.Mode.Perm() & 0o100) | 0o400
		}
		priv[i] = e
	}
	var buf bytes.Buffer
	if err := writeArchive(&buf, priv, uid); err != nil {
		return err
	}
	return c.CopyTar(ctx, dir, &buf)
}

// CopyDir copies a host directory into dir in the container.
func (c *Container) CopyDir(ctx context.Context, hostDir, dir string) error {
	entries, err := DirEntries(hostDir, nil)
	if err != nil {
		return err
	}
	return c.CopyIn(ctx, dir, entries)
}

// CopyTar extracts a tar stream into dir in the container. Ownership comes
// from the archive headers.
func (c *Container) CopyTar(ctx context.Context, dir string, r io.Reader) error {
	if err := c.engine.barrier(); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := c.engine.cli.CopyToContainer(cctx, c.ID, dir, r, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy into %s:%s: %w", c.Short(), dir, err)
	}
	return nil
}

// TooLargeMarker is the one file of the snapshot of a workspace whose kept
// files exceed MaxArchiveBytes: the answer cannot be stored, and the
// grader grades the marker as failing (answer_too_large), never as an
// infrastructure failure, so an answer cannot make itself unscored.
const TooLargeMarker = ".evalctl-answer-too-large"

// IsTooLarge reports whether entries are the snapshot of a workspace that
// was too large to keep (see TooLargeMarker).
func IsTooLarge(entries []Entry) bool {
	return len(entries) == 1 && entries[0].Name == TooLargeMarker && entries[0].Mode.IsRegular()
}

// Snapshot takes dir out of the container as a canonical tarball, leaving
// out names skip reports (tool caches, say) before anything counts towards
// MaxArchiveBytes. A workspace whose kept files are larger gives the
// TooLargeMarker snapshot, not an error.
func (c *Container) Snapshot(ctx context.Context, dir string, skip func(name string) bool) (*Snapshot, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rc, _, err := c.engine.cli.CopyFromContainer(cctx, c.ID, dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s:%s: %w", c.Short(), dir, err)
	}
	defer rc.Close()
	entries, err := readArchive(rc, path.Base(dir), skip)
	if errors.Is(err, ErrArchiveTooLarge) {
		msg := fmt.Sprintf("evalctl: the files of this answer (caches left out) exceed %d MiB, the most a snapshot keeps; the answer was not stored and is graded as failing (answer_too_large)\n", MaxArchiveBytes>>20)
		return NewSnapshot([]Entry{{Name: TooLargeMarker, Mode: 0o644, Data: []byte(msg)}})
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot %s:%s: %w", c.Short(), dir, err)
	}
	return NewSnapshot(entries)
}

// Filter drops every entry with a path segment that skip reports, and
// everything below it.
func Filter(entries []Entry, skip func(name string) bool) []Entry {
	out := entries[:0:0]
	for _, e := range entries {
		if !skipped(e.Name, skip) {
			out = append(out, e)
		}
	}
	return out
}

func skipped(name string, skip func(name string) bool) bool {
	for _, seg := range strings.Split(name, "/") {
		if skip(seg) {
			return true
		}
	}
	return false
}
