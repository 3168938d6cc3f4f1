package cmdtest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retry"
)

// BudgetURL is a --budget URL for tests with a FakeBudget: the fake opener
// records it, and nothing connects to it.
const BudgetURL = "redis://127.0.0.1:6379/0?key=test"

// FakeBudget is what the opener of BudgetRunner opens: a local token
// bucket (10 tokens: 4 retries from full) that records how it was opened
// and whether it was closed. Its zero value is a full bucket; it is not
// safe for concurrent use beyond what retry.TokenBucket is.
type FakeBudget struct {
	retry.TokenBucket
	URL      string    // the URL it was opened with
	Log      io.Writer // where its lines were to go
	Failures int       // the failures it was told of
	Spent    float64   // the tokens they cost: 1 each, or their class's cost
	Closed   int       // how many times it was closed
}

// Failure counts the failure, then spends a token as the bucket does.
func (b *FakeBudget) Failure() bool {
	b.Failures++
	b.Spent++
	return b.TokenBucket.Failure()
}

// FailureCost counts a failure of a class's cost (retry.Class.Cost), then
// spends that many tokens as the bucket does.
func (b *FakeBudget) FailureCost(cost float64) bool {
	b.Failures++
	b.Spent += cost
	return b.TokenBucket.FailureCost(cost)
}

// Close counts the close and fails, as a budget that cannot send its last
// counts does: which must not fail the command.
func (b *FakeBudget) Close() error {
	b.Closed++
	return errors.New("fake: flushing failed")
}

// BudgetRunner returns what runs a command line with runEnv (a package's
// RunEnv) and an Env whose OpenBudget opens b, or fails with openErr, and
// returns what it produced. It checks that the budget's lines go to
// again's stderr.
func BudgetRunner(runEnv RunEnv) func(t *testing.T, b *FakeBudget, openErr error, args ...string) Result {
	return func(t *testing.T, b *FakeBudget, openErr error, args ...string) Result {
		t.Helper()
		var out, errOut bytes.Buffer
		env := cmdutil.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
			OpenBudget: func(url string, log io.Writer) (retry.Budget, io.Closer, error) {
				if openErr != nil {
					return nil, nil, openErr
				}
				b.URL, b.Log = url, log
				return b, b, nil
			}}
		code := runEnv(t.Context(), args, env)
		if b != nil && b.Log != nil && b.Log != env.Stderr {
			t.Errorf("the budget's log is %v, want again's stderr", b.Log)
		}
		return Result{code, out.String(), errOut.String()}
	}
}
