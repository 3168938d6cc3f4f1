package fetch

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/limiter"
	"github.com/spf13/pflag"
)

// maxParallel bounds --parallel: each worker is a goroutine with a
// request in flight.
const maxParallel = 10_000

// addLimitFlags registers --parallel, --limit and --limit-wait.
func addLimitFlags(fs *pflag.FlagSet, parallel, limit, wait *string) {
	*parallel = "1"
	fs.Var(cmdutil.Text(parallel, "n"), "parallel", "with --repeat: send the requests from n workers at once")
	fs.Var(cmdutil.Text(limit, "n|adaptive"), "limit", "with --repeat: bound the attempts in flight per host at n, or adaptively (refusing the others at once, or after --limit-wait)")
	*wait = "0"
	fs.Var(cmdutil.Text(wait, "duration"), "limit-wait", "with --limit: how long an attempt waits for a free place under the limit before it is refused (0: refused at once)")
}

// parallels returns --parallel's count.
func parallels(fs *pflag.FlagSet, p string) (int, error) {
	if !fs.Changed("parallel") {
		return 1, nil
	}
	if !fs.Changed("repeat") {
		return 0, cmdutil.Usagef("--parallel needs --repeat: a single request is sent once")
	}
	n, err := strconv.Atoi(strings.TrimSpace(p))
	if err != nil || n < 1 || n > maxParallel {
		return 0, cmdutil.BadValue("--parallel", p, "a whole number from 1 to %d", maxParallel)
	}
	return n, nil
}

// limits returns the Group of per-host limits that --limit and
// --limit-wait ask for, or nil without them. The waiting attempts are not
// bounded in number beyond the workers (--parallel, a hedge never waits):
// each worker that asked to wait waits up to --limit-wait, never past the
// --deadline, rather than being refused because others wait.
func limits(fs *pflag.FlagSet, v, wait string) (*limiter.Group, error) {
	if !fs.Changed("limit") {
		if fs.Changed("limit-wait") {
			return nil, cmdutil.Usagef("--limit-wait needs --limit: without a limit an attempt never waits for one")
		}
		return nil, nil
	}
	if !fs.Changed("repeat") {
		return nil, cmdutil.Usagef("--limit needs --repeat: a single request is never limited")
	}
	d, err := cmdutil.DurationFlag("limit-wait", wait, false)
	if err != nil {
		return nil, err
	}
	cfg := limiter.Config{MaxWait: d, MaxWaiting: -1}
	if strings.TrimSpace(v) == cmdutil.Adaptive {
		cfg.Algorithm = cmdutil.AdaptiveLimit()
		return &limiter.Group{Config: cfg}, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxParallel {
		return nil, cmdutil.BadValue("--limit", v, "a whole number from 1 to %d, or adaptive", maxParallel)
	}
	cfg.Limit = n
	return &limiter.Group{Config: cfg}, nil
}

// limitedHost is one host's limit in the --repeat summary, and its
// object in --format json's "limit" list.
type limitedHost struct {
	Host    string `json:"host"`
	Refused int64  `json:"refused"` // attempts refused locally, never sent
	Queued  int64  `json:"queued"`  // attempts that waited (--limit-wait) and were sent
	Limit   int    `json:"limit"`   // the limit at the end
}

// limitedHosts returns the limit of each host of g, sorted by host; none
// for a nil g.
func limitedHosts(g *limiter.Group) []limitedHost {
	hosts := []limitedHost{}
	if g == nil {
		return hosts
	}
	g.Range(func(key string, l *limiter.Limiter) bool {
		s := l.Snapshot()
		hosts = append(hosts, limitedHost{Host: key, Refused: s.Refused, Queued: s.Queued, Limit: s.Limit})
		return true
	})
	slices.SortFunc(hosts, func(a, b limitedHost) int { return strings.Compare(a.Host, b.Host) })
	return hosts
}

// writeLimited prints, for each host, the attempts its limit refused and
// those that waited for it (queued), and the limit at the end.
func writeLimited(w io.Writer, hosts []limitedHost) {
	for _, h := range hosts {
		fmt.Fprintf(w, "limit     %s: %d attempts refused locally, %d queued, limit %d at the end\n", h.Host, h.Refused, h.Queued, h.Limit)
	}
}
