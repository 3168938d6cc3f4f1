package sim

import (
	"flag"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// The command line of this package's command alone, as the again program
// would run it (see cmdtest): againRunEnv and againRun run it, run runs it
// within a test and returns what it printed.
var (
	againRunEnv    = cmdtest.Commands(NewCmd)
	againRun       = cmdtest.Streams(againRunEnv)
	run            = cmdtest.Runner(againRunEnv)
	wantUsageError = cmdtest.WantUsageError
)

var update = flag.Bool("update", false, "rewrite the charts of docs/cli.md that TestSimDocCharts checks")
