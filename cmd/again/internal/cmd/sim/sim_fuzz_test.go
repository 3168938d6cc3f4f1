package sim

import (
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// FuzzSimCommandLine runs `again sim` from the command line down, flags
// parsed as a user's would be and the model run on them, and checks that
// every input either runs (exit 0) or is a usage error (exit 2, one line,
// nothing on stdout): never a panic, never another failure. Inputs that
// ask for much work within the documented limits (high rates, many
// clients) are left out, so that each run takes milliseconds; their limits
// are the models' own tests'.
func FuzzSimCommandLine(f *testing.F) {
	f.Add(uint8(0), "40/s", "80/s", "2", "30s", "full", "500ms")
	f.Add(uint8(0), "1e-20/s", "4800/m", "2", "0", "full", "500ms")
	f.Add(uint8(0), "40/s", "1e-300/h", "2", "0", "equal", "1ms")
	f.Add(uint8(0), "40", "80/1m0s", "1e308", "0", "decorrelated", "500ms")
	f.Add(uint8(1), "100", "1s", "1e308", "0", "decorrelated", "1ns")
	f.Add(uint8(1), "10", "1us", "2", "1h", "none", "1h")
	f.Add(uint8(2), "10,20", "0-1/0.5", "backoff,budget", "", "", "")
	f.Add(uint8(3), "5", "full,decorrelated", "1e308", "0", "", "")
	f.Fuzz(func(t *testing.T, model uint8, a, b, c, d, e, g string) {
		var args []string
		switch model % 4 {
		case 0:
			if !cheapRate(a) || !cheapRate(b) {
				return
			}
			args = []string{"sim", "outage", "--strategy=none,backoff,breaker", "--rate=" + a, "--spike-rate=" + b,
				"--multiplier=" + c, "--max=" + d, "--jitter=" + e, "--initial=" + g}
		case 1:
			if n, err := parseCount("clients", a, 100); err == nil && n > 50 {
				return
			}
			args = []string{"sim", "storm", "--clients=" + a, "--bucket=" + b, "--multiplier=" + c, "--max=" + d,
				"--jitter=" + e, "--initial=" + g, "--retries=5"}
		case 2:
			if n, err := parseClients(a); err == nil && (len(n) > 3 || sum(n) > 100) {
				return
			}
			if p, err := parseList("failure", b, "", "", parseFloat, func(float64) bool { return true }); err == nil && len(p) > 5 {
				return
			}
			args = []string{"sim", "fleet", "--clients=" + a, "--failure=" + b, "--strategy=" + c}
		case 3:
			if n, err := parseCount("clients", a, 100); err == nil && n > 10 {
				return
			}
			args = []string{"sim", "occ", "--clients=" + a, "--strategy=" + b, "--runs=2"}
		}
		r := run(t, args...)
		switch r.Code {
		case cmdutil.ExitOK:
		case cmdutil.ExitUsage:
			if r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "again sim ") {
				t.Fatalf("again %q: usage error with stdout %q, stderr %q; want one line on stderr", args, r.Stdout, r.Stderr)
			}
		default:
			t.Fatalf("again %q: exit %d, stderr %q; want 0 or a usage error", args, r.Code, r.Stderr)
		}
	})
}

// cheapRate reports whether s is not a rate above 100 per second (n/unit,
// such as 100/s or 6000/m), which
// keeps an outage run of 120 s within some 10,000 requests.
func cheapRate(s string) bool {
	r, err := parseRate("rate", s)
	return err != nil || r <= 100
}

func sum(ns []int) int {
	s := 0
	for _, n := range ns {
		s += n
	}
	return s
}
