package runstore

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/evalctl/evalctl"
)

// Listing returns what writes the runs under root, newest first, as a
// table or JSON ('evalctl runs'). A folder that does not exist is a usage
// error.
func Listing(root, format string) (func(io.Writer) error, error) {
	if format != "table" && format != "json" {
		return nil, evalctl.Usagef("unknown --format %q (want table or json)", format)
	}
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		return nil, evalctl.Usagef("no folder of runs at %s: give one ('evalctl runs DIR') or set %s", root, RunsEnv)
	}
	list, err := List(root)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if format == "json" {
			if list == nil {
				list = []Summary{}
			}
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		return WriteTable(w, list)
	}, nil
}
