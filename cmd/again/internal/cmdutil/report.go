package cmdutil

import (
	"fmt"
	"github.com/again-go/again/cmd/again/internal/calc"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/printable"
)

// AttemptFailed prints the line that run and fetch print for a failed
// attempt, with the prefix of every line of the command, cmd:
// "again run: attempt 2/4 failed (exit status 7); retrying in 400ms".
// why is what went wrong, next what happens now ("retrying in 400ms",
// "giving up"). Both may hold a server's text, so it is made printable.
func AttemptFailed(w io.Writer, cmd string, attempt, maxAttempts int, why, next string) {
	fmt.Fprintf(w, "%s: attempt %s failed (%s); %s\n", cmd, AttemptOf(attempt, maxAttempts), Message(why), Message(next))
}

// AttemptOf renders attempt n of max for the progress lines: "2/4", or "2"
// when retrying until the deadline leaves the number open.
func AttemptOf(n, max int) string {
	if max == backoff.UntilDeadline {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(max)
}

// Message is text for one of again's lines: printable, on one line, and
// without the prefixes with which Go packages start their errors
// ("retry: retries exhausted ...: retryhttp: attempt timed out" reads
// "retries exhausted ...: attempt timed out"), since the line has its own
// prefix already.
func Message(s string) string {
	s = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(strings.TrimSpace(s))
	return printable.String(packagePrefixes.Replace(": " + s)[2:])
}

// packagePrefixes removes the error prefixes of the packages whose errors
// again prints, where one starts a clause of a message.
var packagePrefixes = func() *strings.Replacer {
	var pairs []string
	for _, pkg := range []string{"retry", "retryhttp", "breaker", "fleet", "calc", "web", "sim", "net/http", "http"} {
		for _, before := range []string{": ", "("} {
			pairs = append(pairs, before+pkg+": ", before)
		}
	}
	return strings.NewReplacer(pairs...)
}()

// TimedOutAfter is why an attempt failed that its limit d (--attempt-timeout)
// stopped, in run's lines and fetch's alike: "timed out after 500ms".
func TimedOutAfter(d time.Duration) string {
	return "timed out after " + calc.Short(d)
}

// RetryingIn is AttemptFailed's next for a retry after delay.
func RetryingIn(delay time.Duration) string {
	return "retrying in " + calc.Short(RoundDelay(delay))
}

// RoundDelay shortens a jittered delay for people: 1.234567891s is 1.23s.
func RoundDelay(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// LineWriter writes each line it is given as one of again's lines on W:
// Prefix, then the line made printable by Message. A log.Logger on it
// writes net/http's own error lines in the command's voice. The zero
// LineWriter has no W and must not be written to; it is as safe for
// concurrent use as W is.
type LineWriter struct {
	W      io.Writer
	Prefix string
}

// Write writes p, one line of again's for each of its lines; it returns
// len(p), or the first error of W.
func (l LineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if _, err := io.WriteString(l.W, l.Prefix+Message(line)+"\n"); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
