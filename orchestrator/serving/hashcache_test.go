package serving

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl/results/runstore"
)

func TestHashCacheHashesOnce(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "model.gguf")
	content := []byte("GGUF pretend weights")
	os.WriteFile(weights, content, 0o644)
	sum := sha256.Sum256(content)
	want := hex.EncodeToString(sum[:])
	c := &HashCache{Path: filepath.Join(dir, "cache", "sha256.json")}
	ctx := context.Background()

	d, err := c.Digest(ctx, weights)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != want || d.Cached || d.Bytes != int64(len(content)) {
		t.Fatalf("first digest = %+v", d)
	}
	// Plant a marker in the cache: if the second call reads the file again
	// it cannot return the marker.
	var cf cacheFile
	if err := runstore.ReadJSON(c.Path, &cf); err != nil {
		t.Fatal(err)
	}
	e := cf.Entries[weights]
	e.SHA256 = "from-cache"
	cf.Entries[weights] = e
	runstore.WriteJSON(c.Path, &cf)
	d, err = c.Digest(ctx, weights)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != "from-cache" || !d.Cached {
		t.Fatalf("second digest read the file again: %+v", d)
	}
	// Same size, new content and mtime: the cache must not be trusted.
	later := time.Now().Add(time.Minute)
	os.WriteFile(weights, []byte("GGUF pretend weightz"), 0o644)
	os.Chtimes(weights, later, later)
	d, err = c.Digest(ctx, weights)
	if err != nil {
		t.Fatal(err)
	}
	if d.Cached || d.SHA256 == "from-cache" || d.SHA256 == want {
		t.Fatalf("changed file served from cache: %+v", d)
	}
}

func TestHashCacheErrors(t *testing.T) {
	c := &HashCache{Path: filepath.Join(t.TempDir(), "c.json")}
	if _, err := c.Digest(context.Background(), "/nonexistent/model.gguf"); err == nil {
		t.Fatal("missing file must be an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := filepath.Join(t.TempDir(), "w")
	os.WriteFile(f, []byte("x"), 0o644)
	if _, err := c.Digest(ctx, f); err == nil {
		t.Fatal("cancelled hashing must fail")
	}
	var nilCache *HashCache
	if d, err := nilCache.Digest(context.Background(), f); err != nil || d.Cached {
		t.Fatalf("nil cache: %+v %v", d, err)
	}
}
