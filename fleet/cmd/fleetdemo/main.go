// Command fleetdemo shows a retry budget shared by processes.
//
// It makes calls to an operation that always fails, retried by retry.Run
// with a budget, and prints how many retries the budget allowed.
//
// Run two at once with the same -budget URL and their retries add up to
// what one budget allows (4 with the default 10 tokens); run them with
// -local and each spends its own budget, twice as many in all:
//
//	fleetdemo -budget 'redis://127.0.0.1:6379/0?key=demo' & fleetdemo -budget 'redis://127.0.0.1:6379/0?key=demo'; wait
//	fleetdemo -local & fleetdemo -local; wait
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/retry"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fleetdemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("budget", "", "a shared budget's URL: redis://HOST:PORT/DB?key=NAME")
	local := fs.Bool("local", false, "use a budget of this process's own instead")
	calls := fs.Int("calls", 10, "calls to make, each of up to 10 attempts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*url == "") == !*local {
		fmt.Fprintln(stderr, "fleetdemo: give either -budget URL or -local")
		return 2
	}
	var budget retry.Budget = &retry.TokenBucket{}
	if !*local {
		b, err := fleet.OpenBudget(*url, slog.New(slog.NewTextHandler(stderr, nil)))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer b.Close()
		budget = b
	}
	policy := backoff.Policy{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond, Retries: 9}
	attempts := 0
	for range *calls {
		retry.Run(context.Background(), policy, func(context.Context) error {
			attempts++
			return errors.New("connection refused")
		}, retry.WithBudget(budget))
	}
	fmt.Fprintf(stdout, "process %d: %d calls, %d retries\n", os.Getpid(), *calls, attempts-*calls)
	return 0
}
