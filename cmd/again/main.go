// Command again is the command-line face of the again toolkit: a backoff
// calculator (calc), a runner that retries any command (run), a curl that
// retries safely (fetch), the calculator page (web) and a simulator of
// request storms (sim). See `again --help`.
package main

import (
	"context"
	"os"

	"github.com/again-go/again/cmd/again/internal/cli"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background())
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
