package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Fingerprint returns the SHA-256 (hex) over every regular file under dir in
// byte order of their slash-separated relative paths. Each file contributes
// its path, whether it is executable, its size and its content, each field
// ended by a NUL, so that no two different trees hash alike. Tool caches
// (see Ignored) are left out: running a case's tests by hand must not change
// the suite's identity.
func Fingerprint(dir string) (string, error) {
	files, err := ListFiles(dir)
	if err != nil {
		return "", fmt.Errorf("fingerprint %s: %w", dir, err)
	}
	h := sha256.New()
	for _, rel := range files {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		f, err := os.Open(full)
		if err != nil {
			return "", fmt.Errorf("fingerprint: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return "", fmt.Errorf("fingerprint: %w", err)
		}
		exec := "-"
		if fi.Mode()&0o111 != 0 {
			exec = "x"
		}
		io.WriteString(h, rel+"\x00"+exec+"\x00"+strconv.FormatInt(fi.Size(), 10)+"\x00")
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("fingerprint %s: %w", full, err)
		}
		io.WriteString(h, "\x00")
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
