// Package retry runs an operation again when it fails, waiting between
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
// Run is the same for an operation that returns only an error.
//
// # What is retried
//
// Every error is retried except:
//   - errors wrapped with Permanent;
//   - the caller's own context error (context.Canceled or
//     context.DeadlineExceeded coming from ctx);
//   - errors that the classifier given with RetryIf rejects.
//
// An operation that knows when to try again (an HTTP 429 or 503 with
// Retry-After) returns After(d, err): the next wait is exactly d instead of
// the policy's delay.
//
// # Why it stops
//
// The returned *Error says why (ErrExhausted, ErrPermanent, ErrDeadline,
// ErrCanceled, ErrRetryAfterTooLong, ErrBudget, all matched with
// errors.Is), how many attempts ran, how long it took, and unwraps to the
// last error of the operation. Retrying never sleeps after the last attempt
// nor into a wait that would end after the context's deadline.
//
// # Under load
//
// A Budget shared by many calls stops retries when most attempts fail, so
// that a struggling dependency does not receive Retries+1 times its normal
// traffic. OnRetry and WithLogger report each retry.
//
// Everything runs on the calling goroutine; the package starts no
// goroutines and keeps no global state.
package retry
