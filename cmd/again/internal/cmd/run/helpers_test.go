package run

import "github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"

// The command line of this package's command alone, as the again program
// would run it (see cmdtest): againRunEnv and againRun run it, run runs it
// within a test and returns what it printed.
var (
	againRunEnv = cmdtest.Commands(NewCmd)
	againRun    = cmdtest.Streams(againRunEnv)
	run         = cmdtest.Runner(againRunEnv)
	withBudget  = cmdtest.BudgetRunner(againRunEnv)
)

// The test binary is also the again program, and run's child command, in
// the processes that the tests start (see cmdtest.Main).
func init() { cmdtest.Main(againRunEnv) }
