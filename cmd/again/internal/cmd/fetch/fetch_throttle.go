package fetch

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
	"github.com/spf13/pflag"
)

// addThrottleFlag registers --throttle, whose value is K, 2 when the flag
// is given bare.
func addThrottleFlag(fs *pflag.FlagSet, k *string) {
	fs.Var(cmdutil.Text(k, "k"), "throttle", "with --repeat: reject attempts locally when the host refuses load (429, 503), letting through k per accepted one (default 2 when given bare)")
	cmdutil.OptionalNumber(fs, "throttle", strconv.Itoa(throttle.DefaultK))
}

// throttles returns the Group of per-host throttles that --throttle
// asks for, or nil without it.
func throttles(fs *pflag.FlagSet, k string) (*throttle.Group, error) {
	if !fs.Changed("throttle") {
		return nil, nil
	}
	if !fs.Changed("repeat") {
		return nil, cmdutil.Usagef("--throttle needs --repeat: a single request is never throttled")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(k), 64)
	if err != nil || !(v >= 1) || math.IsInf(v, 1) {
		return nil, cmdutil.BadValue("--throttle", k, "a finite number >= 1")
	}
	cfg := throttle.Config{K: v}
	return &throttle.Group{New: func(string) (retry.Admitter, error) { return throttle.New(cfg) }}, nil
}

// throttledHost is one host's throttle in the --repeat summary, and its
// object in --format json's "throttle" list.
type throttledHost struct {
	Host     string  `json:"host"`
	Rejected int64   `json:"rejected"` // attempts rejected locally, never sent
	Attempts int64   `json:"attempts"` // attempts asked for while the window held them
	P        float64 `json:"p"`        // the probability of rejecting the next one
}

// throttledHosts returns the throttle of each host of g, sorted by host;
// none for a nil g.
func throttledHosts(g *throttle.Group) []throttledHost {
	hosts := []throttledHost{}
	if g == nil {
		return hosts
	}
	g.Range(func(key string, a retry.Admitter) bool {
		if th, ok := a.(*throttle.Throttler); ok {
			s := th.Snapshot()
			hosts = append(hosts, throttledHost{Host: key, Rejected: s.Rejected, Attempts: s.Requests + s.Uncounted, P: s.P})
		}
		return true
	})
	slices.SortFunc(hosts, func(a, b throttledHost) int { return strings.Compare(a.Host, b.Host) })
	return hosts
}

// writeThrottled prints, for each host, the attempts its throttle
// rejected and its p now.
func writeThrottled(w io.Writer, hosts []throttledHost) {
	for _, h := range hosts {
		fmt.Fprintf(w, "throttle  %s: %d of %d attempts rejected locally, p %.2f now\n", h.Host, h.Rejected, h.Attempts, h.P)
	}
}
