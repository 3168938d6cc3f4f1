// Command again is the again command (see cmd/again) built with the fleet
// module, so that `again run` and `again fetch` take --budget
// redis://HOST:PORT/DB?key=NAME: a retry budget shared through Redis by
// every process given the same URL, such as a thousand containers whose
// entrypoint waits for the same database. Everything else is the same
// command; it is a build of its own so that the plain one links no Redis
// client.
//
//	go install github.com/again-go/again/fleet/cmd/again@latest
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/again-go/again/fleet"
	"github.com/again-go/again/internal/cli"
	"github.com/again-go/again/retry"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background())
	code := cli.RunEnv(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, OpenBudget: openBudget})
	stop()
	os.Exit(code)
}

// openBudget opens the fleet.Budget that url names. Its lines (Redis not
// answering, and answering again) go to log without a time stamp, like
// again's own lines.
func openBudget(url string, log io.Writer) (retry.Budget, io.Closer, error) {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	b, err := fleet.OpenBudget(url, slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{ReplaceAttr: noTime})))
	if err != nil {
		return nil, nil, err
	}
	return b, b, nil
}
