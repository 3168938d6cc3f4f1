// Package retry runs an operation again when it fails. It waits between
// attempts on the schedule of a backoff.Policy.
//
// # Quick start
//
//	conn, err := retry.Do(ctx, backoff.Default(), func(ctx context.Context) (*sql.Conn, error) {
//		return db.Conn(ctx)
//	})
//	if err != nil {
//		var re *retry.Error
//		errors.As(err, &re) // re.Reason, re.Attempts, re.Elapsed, re.Last
//		return err
//	}
//
// Run is the same for an operation that returns only an error. Options
// (WithClassifier, WithClasses, WithBudget, WithAdmitter,
// WithMaxRetryAfter, WithMaxRejectedWait, WithRestartAfterHint,
// WithDeadlineReserve, WithOnRetry, WithLogger, WithRand, WithObserver)
// change how it retries or report what it does.
// Loop is the same loop for code that makes its attempts itself;
// retryhttp.Transport is built on it.
//
// # Zero and negative values
//
// Options and TokenBucket follow the module's rule for zero and negative
// values, stated on backoff.Policy (WithMaxRetryAfter(-1), for example,
// honours no wait hint).
//
// # What is retried
//
// Every error is retried except:
//   - errors wrapped with Permanent, and rejections (see below) whose method
//     Permanent() bool returns true (an isolated circuit breaker's);
//   - the caller's own context error (context.Canceled or
//     context.DeadlineExceeded coming from ctx);
//   - errors that the classifier given with WithClassifier rejects.
//
// An operation that knows when to try again (an HTTP 429 or 503 with
// Retry-After) returns After(d, err), or any error with a method
// RetryAfter() time.Duration: the next wait is d instead of the policy's
// delay, but never shorter than the policy's first delay, so that a server
// answering every request with Retry-After: 0 is not retried in a hot loop
// (the wait is never less than asked, and may be more). An error with a
// method Rejected() bool that returns true (a circuit breaker refused the
// attempt) is retried without touching the Budget, after its hint as it is
// if it has one, within WithMaxRejectedWait.
//
// # Why it stops
//
// The returned *Error says why (ErrExhausted, ErrPermanent, ErrDeadline,
// ErrCanceled, ErrRetryAfterTooLong, ErrRejected, ErrBudget, all matched with
// errors.Is), how many attempts ran, how long the call took, and unwraps to
// the last error of the operation. Retrying never sleeps after the last
// attempt nor past the context's deadline.
//
// # Deadlines
//
// A context's deadline is a promise kept both ways: the loop retries until
// it, and never past it. A wait drawn from the policy that would end later
// than the reserve before the deadline is shortened to end then, so that
// one more attempt starts with the reserve left; only when no more than
// the reserve is left does the loop stop, with ErrDeadline. The reserve is
// backoff.DeadlineReserve (100 ms), or the attempts' own timeout given
// with WithDeadlineReserve. So the last attempt starts within the reserve
// before the deadline, and a dependency that recovers earlier than that is
// reached, however long the schedule's waits have grown; with Retries n,
// the call ends at whichever comes first. A wait hint (a server's
// Retry-After, a breaker's wait) is never shortened: one that ends at or
// after the deadline stops the loop at once. backoff.FitDeadline is the
// rule, the one every retry loop of this module applies.
//
// To retry until the context's deadline rather than a number of times (to
// wait for a database for up to a minute), set the policy's Retries to
// backoff.UntilDeadline; a context without a deadline is then refused with
// ErrNoDeadline before the first attempt.
//
// # Loops inside loops
//
// An operation may itself retry: a function calling an HTTP API through a
// retryhttp client, run by Do, is the common case. The outer loop treats
// the inner *Error like any other error of the operation:
//   - the outer *Error matches exactly one reason, its own: the inner
//     error's reason is hidden from errors.Is (errors.As still finds the
//     inner *Error in Last);
//   - a Permanent error inside the inner *Error (the inner loop stopped on
//     it) stops the outer loop too, with ErrPermanent: repeating the call
//     would meet it again;
//   - a wait hint inside it (an After error whose wait the inner loop would
//     not make) sets the outer wait, within the outer limit and floored at
//     the outer policy's first delay, as After says;
//   - any other inner reason (ErrExhausted, ErrBudget, ErrDeadline of an
//     inner deadline) is an ordinary failure, retried on the outer
//     schedule, and the caller's context ending ends both loops.
//
// # Under load
//
// A Budget (usually a TokenBucket) shared by many calls stops retries when
// most attempts fail, so that a struggling dependency does not receive
// MaxAttempts times its normal traffic. WithOnRetry and WithLogger report
// each retry.
//
// Everything runs on the calling goroutine; the package starts no
// goroutines and keeps no global state. Hedging, which sends a copy of a
// slow attempt and so needs goroutines, is package hedge, built on Loop.
package retry
