// Command again is the command-line face of the again toolkit.
//
// It holds a backoff calculator (calc), a runner that retries any command
// (run), a curl that retries safely (fetch), a waiter for databases,
// brokers and services at start-up (wait), a reverse proxy that injects
// faults (proxy), the calculator page (web) and a simulator of request
// storms (sim). See `again --help`.
//
// Where things are (dependencies point down only):
//
//   - internal/cmd/root: the root command, which registers the others.
//   - internal/cmd/calc, run, fetch, wait, web, sim, completion: one package
//     per command, with its flags, its Options and its tests.
//   - internal/cmdutil: what the commands share (Env, exit and usage
//     errors, policy, budget and breaker-store flags, signals, output,
//     atomic files, telemetry); its package doc states the conventions.
//   - internal/calc, internal/sim, internal/web, internal/ready: the
//     calculator, the simulator, the page and wait's checks that the
//     commands present.
package main

import (
	"os"

	"github.com/again-go/again/cmd/again/internal/cmd/root"
)

func main() {
	os.Exit(root.Main())
}
