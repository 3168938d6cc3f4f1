package cmdutil

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/retry"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// BudgetHelp is the paragraph about --budget for the help of a command
// that takes it (run, fetch).
const BudgetHelp = `--budget redis://HOST:PORT/DB?key=NAME shares one retry budget (gRPC's
token bucket: 10 tokens, a failure takes one, or its class's cost=, a
success gives back 0.1, retries only while more than half remain) among
every again, and every
program using the fleet module, given the same Redis and key: a thousand
containers waiting for the same database retry as much as one would. When
the budget refuses, retrying stops. The URL: rediss:// for TLS (with
ca_file=PEM to trust a private authority, cert_file=PEM&key_file=PEM for
a client certificate), user:password@ for AUTH or an ACL user,
max_tokens=10, token_ratio=0.1, timeout=50ms (the wait for each retry
decision), connect_timeout=1s (the wait for the first connection, which
starts at once: decisions in the first second wait for it), flush=100ms,
master_name=NAME for a Sentinel deployment (the host and addr=HOST:PORT
being Sentinels), and go-redis's own (pool_size, dial_timeout, ...).

Redis never fails the command. When it cannot be used (no answer in time,
refused, wrong password, ACL denied, out of memory, a read-only replica,
a key of another type), again says so once, naming the cause, and decides
with a cautious budget of its own: it starts from the lower of the last
level it saw in Redis and one retry's worth, so each again makes at most
one retry until Redis is back (none if the shared budget was spent), and
says so once when Redis can be used again.`

// AddBudgetFlag adds --budget to fs and returns where its URL goes ("" when
// not given: the flag rejects an empty value).
func AddBudgetFlag(fs *pflag.FlagSet) *string {
	url := ""
	fs.Var(Text(&url, "url"), "budget",
		"share one retry budget through Redis: redis://HOST:PORT/DB?key=NAME")
	return &url
}

// OpenBudget opens the budget that command's --budget names, or returns
// nils when it was not given. The caller closes the Closer when the
// command ends. The fleet's lines start as the command's own do ("again
// run: fleet: ...").
func OpenBudget(env *Env, command, url string) (retry.Budget, io.Closer, error) {
	if url == "" {
		return nil, nil, nil
	}
	open := env.OpenBudget
	if open == nil {
		open = func(url string, log io.Writer) (retry.Budget, io.Closer, error) {
			return openFleetBudget(url, log, command)
		}
	}
	b, c, err := open(url, env.Stderr)
	if err != nil {
		// The opener's message names what is wrong without the password;
		// the URL itself is not repeated here for the same reason.
		return nil, nil, Usagef("--budget: %v", err)
	}
	return b, c, nil
}

// CloseBudget closes what OpenBudget opened. Its error is not the
// command's: a budget whose last counts could not be sent has already
// decided every retry, and Redis being away must not fail a command.
func CloseBudget(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

// BudgetSpent is why retrying stopped when the budget refused.
const BudgetSpent = "not retrying: the --budget has too few tokens left"

// openFleetBudget opens the fleet.Budget that url names. Its lines (Redis
// cannot be used, and why; then can be used again) go to log without a
// time stamp, like again's own lines.
func openFleetBudget(url string, log io.Writer, command string) (retry.Budget, io.Closer, error) {
	b, err := fleet.OpenBudget(url, fleetLogger(log, command))
	if err != nil {
		return nil, nil, err
	}
	return b, b, nil
}

// fleetLogger is the logger of again's fleet budget and breaker stores:
// their lines on log as again's own (see fleetLines). It also silences
// go-redis's own logger, which would print a line for every failed dial of
// every retry decision; the fleet's lines already say, once, why Redis
// cannot be used. That logger is go-redis's global: it is set once, before
// the first client is made, because again is the program and go-redis
// reads it unguarded.
func fleetLogger(log io.Writer, command string) *slog.Logger {
	quietRedisOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	return slog.New(&fleetLines{w: log, mu: new(sync.Mutex), start: "again " + command + ": "})
}

// fleetLines is a slog.Handler that writes each record at level Info or
// above as one of the command's lines: "again run: ", the message, then its
// attributes in parentheses, the error's text as it is and the others as
// "key value", such as
//
//	again run: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget db-wait; dial tcp 127.0.0.1:6379: connect: connection refused)
//
// It has no time and no level: again's other lines have neither. The
// fleet module's messages and error texts never hold a Redis password.
type fleetLines struct {
	w      io.Writer
	start  string      // what every line starts with: "again run: "
	mu     *sync.Mutex // shared by the handlers WithAttrs and WithGroup derive
	attrs  []string    // from WithAttrs, formatted
	prefix string      // from WithGroup: "group." for each group
}

func (h *fleetLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *fleetLines) Handle(_ context.Context, r slog.Record) error {
	parts := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		parts = appendAttr(parts, h.prefix, a)
		return true
	})
	line := r.Message
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, "; ") + ")"
	}
	line = printable.String(strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(strings.TrimSpace(line)))
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, h.start+line+"\n")
	return err
}

func (h *fleetLines) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		c.attrs = appendAttr(c.attrs, h.prefix, a)
	}
	return &c
}

func (h *fleetLines) WithGroup(name string) slog.Handler {
	c := *h
	if name != "" {
		c.prefix += name + "."
	}
	return &c
}

// appendAttr appends a, formatted for fleetLines, to parts: an error's
// text alone, any other value after its key, a group's attributes each.
func appendAttr(parts []string, prefix string, a slog.Attr) []string {
	v := a.Value.Resolve()
	switch {
	case v.Kind() == slog.KindGroup:
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			parts = appendAttr(parts, prefix, g)
		}
		return parts
	case a.Key == "":
		return parts
	case a.Key == "error" && prefix == "":
		return append(parts, v.String())
	}
	return append(parts, prefix+a.Key+" "+v.String())
}

var _ slog.Handler = (*fleetLines)(nil)

var quietRedisOnce sync.Once

// quietRedis is a go-redis logger that prints nothing.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// AddBreakerStoreFlag adds --breaker-store (fetch's) and returns where its
// URL goes ("" when not given).
func AddBreakerStoreFlag(fs *pflag.FlagSet) *string {
	url := ""
	fs.Var(Text(&url, "url"), "breaker-store",
		"share per-host circuit breakers through Redis: redis://HOST:PORT/DB?key=NAME")
	return &url
}

// OpenBreakers returns the per-host breakers, with the rule cfg, that
// --breaker-store's url shares, and what closes their store, or nils when
// it was not given (url ""). An error is a usage error.
func OpenBreakers(env *Env, command, url string, cfg breaker.Config) (*breaker.Group, io.Closer, error) {
	if url == "" {
		return nil, nil, nil
	}
	store, err := fleet.OpenBreakerStore(url, fleetLogger(env.Stderr, command))
	if err != nil {
		// As for --budget: the message has no password, and the URL is
		// not repeated.
		return nil, nil, Usagef("--breaker-store: %v", err)
	}
	g := &breaker.Group{Config: cfg, Shared: func(host string) breaker.Shared { return store.Named(host) }}
	return g, store, nil
}
