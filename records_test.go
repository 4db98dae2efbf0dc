package evalctl_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestRecordsReadBackByteIdentical: records written before they moved to
// this package (testdata/records, written by commit 5457ea1's
// runstore.WriteJSON with every field set) decode with no field unknown and
// encode back to the same bytes, so stored runs read back unchanged.
func TestRecordsReadBackByteIdentical(t *testing.T) {
	tests := []struct {
		file string
		v    any
	}{
		{"attempt.json", &evalctl.Attempt{}},
		{"grade.json", &evalctl.Grade{}},
		{"outcome.json", &evalctl.Outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			stored, err := os.ReadFile(filepath.Join("testdata", "records", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(stored))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.v); err != nil {
				t.Fatalf("decode %s: %v", tt.file, err)
			}
			again, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if again = append(again, '\n'); !bytes.Equal(again, stored) {
				t.Errorf("%s encodes back differently:\n%s\nwant:\n%s", tt.file, again, stored)
			}
		})
	}
}
