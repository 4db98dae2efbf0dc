package evalctl

import (
	"fmt"
	"io"
)

// UsageError is a mistake in how the user asked for the work (a missing
// argument, an option out of range, a name that does not exist), as opposed
// to a failure of the work itself. Packages that validate a command's
// options return it so the command line can answer with its help pointer
// and exit status 2 without knowing each package's rules.
type UsageError struct {
	Err error
	// See points at the help that describes what was wrong; "" is the
	// command's own --help.
	See string
}

var _ error = (*UsageError)(nil)

func (e *UsageError) Error() string { return e.Err.Error() }

func (e *UsageError) Unwrap() error { return e.Err }

// Usagef formats a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Err: fmt.Errorf(format, a...)} }

// Usage marks err, which keeps its type for errors.As, as a usage error;
// nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// Console is where a command prints: its results to Stdout, its progress
// to Stderr, drawn live when Live (Stderr is a terminal).
type Console struct {
	Stdout, Stderr io.Writer
	Live           bool
}
