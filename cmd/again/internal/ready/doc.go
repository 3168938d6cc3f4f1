// Package ready waits until databases, brokers and services accept real
// requests.
//
// It is the engine of `again wait`, without its command line.
//
// # Quick start
//
//	t, err := ready.Parse("postgres://app:secret@db:5432/app", nil)
//	if err != nil {
//		return err // errors.Is(err, ready.ErrParse): exit 2
//	}
//	results, err := ready.Wait(ctx, []ready.Checker{t}, ready.DefaultConfig())
//	ready.WriteLines(os.Stderr, results)
//
// # Ready
//
// Parse reads a TARGET, a URL of one of the schemes of Schemes (or a bare
// HOST:PORT, which is tcp). Target.Check makes one attempt with the
// ecosystem's own driver (pgx, go-sql-driver/mysql, go-redis, amqp091-go,
// franz-go, nats.go, grpc-go's health client) and counts a target as ready
// when a client of its protocol could use it: connected, authenticated,
// and answering one real request (its documentation has the table).
// Options add the checks that wait4x offers: an HTTP status set, a body
// regexp, a response header; a table that exists; a Redis key that exists.
//
// # Not up yet, or never
//
// A failed check returns an *Error. Refused and reset connections,
// timeouts, a PostgreSQL that is starting up, a Redis that is LOADING, a
// gRPC service NOT_SERVING, a port that speaks another protocol: these
// are not up yet, and Wait keeps trying. Wrong credentials, an unknown
// database or vhost, a TLS certificate that does not verify: these are
// Permanent, and end the whole wait at once. The classification reads the
// drivers' error codes (SQLSTATE, MySQL error numbers, AMQP reply codes,
// Kafka error codes, gRPC status codes, the first word of a Redis error),
// never their messages, except Redis's ERR replies, whose code says too
// little.
//
// # Secrets
//
// A Target's String, and every *Error's text, replace the URL's password
// and the values of query parameters that look secret (password, token,
// secret...) by Mask, so that no output shows them.
//
// # Waiting
//
// Wait checks all targets at once, each on its own backoff schedule
// (DefaultPolicy: jittered, capped at 2 s) run by package retry, within a
// deadline (a minute by default: never an unbounded wait), each attempt
// within its own timeout, which no driver's own timeout outlasts.
// Config.OnResult tells each target's result as soon as its wait ends.
// Line, WriteLines, WriteJSON and Live write its results and progress to
// an io.Writer.
package ready
