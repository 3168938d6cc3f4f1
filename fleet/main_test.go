package fleet

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the test binary as one process of a test fleet when
// childEnv says so (see fleet_test.go), and otherwise runs the tests and
// checks that none leaves a goroutine behind.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m)
}
