package evalctl

import "fmt"

// UsageError is a mistake in how the user asked for the work (a missing
// argument, an option out of range, a name that does not exist), as opposed
// to a failure of the work itself. Packages that validate a command's
// options return it so the command line can answer with its help pointer
// and exit status 2 without knowing each package's rules.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef formats a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }
