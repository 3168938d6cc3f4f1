package cmdutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Exit statuses shared by every subcommand.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the command ran and failed (a deadline no value meets, a request that failed)
	ExitUsage   = 2 // the command line is wrong: bad flag, bad value, missing or extra argument
)

// ExitError carries the exit status a subcommand wants; Run finds it with
// errors.As anywhere in the error chain. Run prints Err (if not nil) as one
// line, "again <sub>: <Err>", on stderr and exits with Code. A nil Err exits
// silently, as `again run` does with its child's status.
//
// A subcommand that returns any other error exits with ExitFailure and the
// error printed the same way.
type ExitError struct {
	Code int
	Err  error
}

// Error returns Err's message, or "exit status N" for a silent exit.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err, so that errors.Is and errors.As see through an ExitError.
func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an *ExitError with the given status. err may be nil for a
// silent exit.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Usagef returns a usage error (exit status 2) with a formatted message. The
// message names the flag or argument at fault and what is wrong, such as
// "--parallel needs --repeat"; a value the command refuses has BadValue's
// message. String
// arguments, the values the user gave, are shortened when very long (see
// longValue) so that a huge value cannot bury the message.
func Usagef(format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > maxEcho {
			args[i] = longValue(s)
		}
	}
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// BadValue returns the usage error (exit status 2) for a value the command
// refuses, in the one style of every command:
//
//	--retries "1e9": want a whole number from 0 to 100000
//
// what names where the value was given: a flag with its dashes
// ("--retries") or an argument ("URL"). value is quoted as the user wrote
// it, shortened when very long (see longValue); want, formatted with args
// as by fmt.Sprintf, says what is accepted: a noun phrase ("a whole number
// from 0 to 100000", "one of text or json"), with, after a semicolon, what
// else helps ("; write https://example.com"). A value that must not be
// repeated, such as a password, is left out of the message: use Usagef.
func BadValue(what, value, want string, args ...any) error {
	if len(args) > 0 {
		want = fmt.Sprintf(want, args...)
	}
	var shown any = value
	if len(value) > maxEcho {
		shown = longValue(value)
	}
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s %q: want %s", what, shown, want)}
}

// Usage returns a usage error with a message already formed, such as
// calc's (which shortens its values itself).
func Usage(msg string) error {
	return &ExitError{Code: ExitUsage, Err: errors.New(msg)}
}

// maxEcho is the longest value, in bytes, that a message repeats whole:
// longer than calc's limit for its numbers and durations, since paths and
// URLs are worth reading whole up to a point.
const maxEcho = 200

// longValue is a value too long to repeat whole. It formats as calc does
// its own long values: its first bytes (whole UTF-8 characters), quoted
// with %q, then how long it was: "aaaa"… (100000 bytes).
type longValue string

func (v longValue) Format(f fmt.State, verb rune) {
	cut := strings.ToValidUTF8(string(v)[:maxEcho-16], "")
	if verb == 'q' {
		cut = strconv.Quote(cut)
	}
	fmt.Fprintf(f, "%s… (%d bytes)", cut, len(v))
}

// ExitCode returns the exit status for err, as Execute does, and the
// message it prints ("" for none).
// Errors that are not an *ExitError come from cobra or pflag themselves
// (Execute marks every error a command returns), so they are usage errors.
func ExitCode(err error) (code int, msg string) {
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err == nil {
			return ee.Code, ""
		}
		return ee.Code, err.Error() // with whatever context wraps the ExitError
	}
	return ExitUsage, err.Error()
}
