package serving

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/evalctl/evalctl"

	"github.com/gofrs/flock"

	"github.com/evalctl/evalctl/results/runstore"
)

// FileDigest is the SHA-256 of one file the identity records.
type FileDigest = evalctl.FileDigest

// HashCache remembers file digests by path, size and modification time, so
// a 16 GB weight file is read once, not at every server start. It is a JSON
// file shared by every evalctl process of the user (locked while updated).
type HashCache struct {
	// Path of the cache file; "" disables caching.
	Path string
}

type cacheEntry struct {
	Bytes     int64  `json:"bytes"`
	ModTimeNS int64  `json:"mod_time_ns"`
	SHA256    string `json:"sha256"`
}

type cacheFile struct {
	Entries map[string]cacheEntry `json:"entries"`
}

// DefaultHashCache is the per-user cache under the user cache directory
// (~/.cache/evalctl/sha256.json on Linux).
func DefaultHashCache() *HashCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		return &HashCache{}
	}
	return &HashCache{Path: filepath.Join(dir, "evalctl", "sha256.json")}
}

// Digest returns the SHA-256 of path, from the cache when the file's size
// and modification time are unchanged. Hashing honours ctx.
func (c *HashCache) Digest(ctx context.Context, path string) (FileDigest, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return FileDigest{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return FileDigest{}, fmt.Errorf("digest %s: %w", path, err)
	}
	if st.IsDir() {
		return FileDigest{}, fmt.Errorf("digest %s: is a directory", path)
	}
	d := FileDigest{Path: abs, Bytes: st.Size(), ModTime: st.ModTime().UTC()}
	if c != nil && c.Path != "" {
		if cf, err := c.read(); err == nil {
			if e, ok := cf.Entries[abs]; ok && e.Bytes == st.Size() && e.ModTimeNS == st.ModTime().UnixNano() && e.SHA256 != "" {
				d.SHA256, d.Cached = e.SHA256, true
				return d, nil
			}
		}
	}
	sum, err := hashFile(ctx, abs)
	if err != nil {
		return FileDigest{}, err
	}
	d.SHA256 = sum
	if c != nil && c.Path != "" {
		if err := c.store(abs, cacheEntry{Bytes: st.Size(), ModTimeNS: st.ModTime().UnixNano(), SHA256: sum}); err != nil {
			return d, fmt.Errorf("digest %s: computed, but the cache could not be updated: %w", path, err)
		}
	}
	return d, nil
}

func (c *HashCache) read() (*cacheFile, error) {
	var cf cacheFile
	err := runstore.ReadJSON(c.Path, &cf)
	if errors.Is(err, os.ErrNotExist) {
		return &cacheFile{Entries: map[string]cacheEntry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	if cf.Entries == nil {
		cf.Entries = map[string]cacheEntry{}
	}
	return &cf, nil
}

func (c *HashCache) store(path string, e cacheEntry) error {
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
		return err
	}
	l := flock.New(c.Path + ".lock")
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	cf, err := c.read()
	if err != nil {
		cf = &cacheFile{Entries: map[string]cacheEntry{}} // a torn or foreign cache is rebuilt
	}
	cf.Entries[path] = e
	return runstore.WriteJSON(c.Path, cf)
}

func hashFile(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("digest %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 4<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("digest %s: %w", path, err)
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("digest %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
