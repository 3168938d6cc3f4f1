// Command again is the command-line face of the again toolkit: a backoff
// calculator (calc), a runner that retries any command (run), a curl that
// retries safely (fetch), the calculator page (web) and a simulator of
// request storms (sim). See `again --help`.
package main

import (
	"os"

	"github.com/again-go/again/cmd/again/internal/cmd/root"
)

func main() {
	os.Exit(root.Main())
}
