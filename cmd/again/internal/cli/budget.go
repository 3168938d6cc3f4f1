package cli

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/again-go/again/fleet"
	"github.com/again-go/again/retry"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// budgetHelp is the paragraph of run's and fetch's help about --budget.
const budgetHelp = `--budget redis://HOST:PORT/DB?key=NAME shares one retry budget (gRPC's
token bucket: 10 tokens, a failure takes one, a success gives back 0.1,
retries only while more than half remain; the URL's max_tokens,
token_ratio and timeout change them) among every again, and every program
using the fleet module, given the same Redis and key: a thousand
containers waiting for the same database retry as much as one would. When
the budget refuses, retrying stops. A Redis that does not answer within
the timeout (50ms) makes the budget local for a while, never fails the
command.`

// addBudgetFlag adds --budget to fs and returns where its URL goes ("" when
// not given: the flag rejects an empty value).
func addBudgetFlag(fs *pflag.FlagSet) *string {
	url := ""
	fs.Var(textFlag{s: &url, typ: "url"}, "budget",
		"share one retry budget through Redis: redis://HOST:PORT/DB?key=NAME")
	return &url
}

// openBudget opens the budget that --budget names, or returns nils when it
// was not given. The caller closes the Closer when the command ends.
func openBudget(env *Env, url string) (retry.Budget, io.Closer, error) {
	if url == "" {
		return nil, nil, nil
	}
	open := env.OpenBudget
	if open == nil {
		open = openFleetBudget
	}
	b, c, err := open(url, env.Stderr)
	if err != nil {
		// The opener's message names what is wrong without the password;
		// the URL itself is not repeated here for the same reason.
		return nil, nil, Usagef("--budget: %v", err)
	}
	return b, c, nil
}

// closeBudget closes what openBudget opened. Its error is not the
// command's: a budget whose last counts could not be sent has already
// decided every retry, and Redis being away must not fail a command.
func closeBudget(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

// budgetSpent is why retrying stopped when the budget refused.
const budgetSpent = "not retrying: the --budget has too few tokens left"

// openFleetBudget opens the fleet.Budget that url names. Its lines (Redis
// cannot be used, and why; then can be used again) go to log without a
// time stamp, like again's own lines.
func openFleetBudget(url string, log io.Writer) (retry.Budget, io.Closer, error) {
	b, err := fleet.OpenBudget(url, fleetLogger(log))
	if err != nil {
		return nil, nil, err
	}
	return b, b, nil
}

// fleetLogger is the logger of again's fleet budget and breaker stores:
// their lines on log, without a time stamp. It also silences go-redis's
// own logger, which would print a line for every failed dial of every
// retry decision; the fleet's lines already say, once, why Redis cannot
// be used. That logger is go-redis's global: it is set once, before the
// first client is made, because again is the program and go-redis reads it
// unguarded.
func fleetLogger(log io.Writer) *slog.Logger {
	quietRedisOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	return slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{ReplaceAttr: noTime}))
}

var quietRedisOnce sync.Once

// quietRedis is a go-redis logger that prints nothing.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
