// Package fleet shares retry budgets, breaker state and throttling counts
// through Redis. One budget for every process of a fleet (Redis or Valkey)
// makes a service running as a thousand processes retry as much as one
// process would when its dependency fails, not a thousand times as much.
//
// A retry.TokenBucket lives in one process and starts full: under a total
// outage every process spends its own tokens, and the fleet's retries grow
// with its size. A Budget keeps gRPC A6's bucket (the same rule as
// retry.TokenBucket) in one Redis key instead, and implements
// retry.Budget, so it goes wherever a local budget goes: retry.WithBudget,
// retryhttp.Transport.Budget.
//
// A Throttle shares the counts of client-side throttling the same way
// (package throttle's SRE Throttler): every process adds its requests and
// accepts to the fleet's in Redis every FlushInterval and rejects with
// probability max(its own p, the fleet's), so that a thousand processes
// throttle on the fleet's accept ratio. It is a retry.Admitter:
// retry.WithAdmitter, or a throttle.Group's New for
// retryhttp.Transport.Throttles. When Redis cannot be used it decides on
// its own counts (and the fleet's last for one window): never more is
// sent than local throttling would allow.
//
// This is a module of its own (github.com/again-go/again/fleet), so that
// importing the core packages never pulls a Redis client.
//
// # Quick start
//
//	budget, err := fleet.OpenBudget("redis://localhost:6379/0?key=payments", nil)
//	if err != nil {
//		return err
//	}
//	defer budget.Close()
//	err = retry.Run(ctx, backoff.Default(), call, retry.WithBudget(budget))
//
// Every process that opens the same URL shares the bucket. With an
// existing client, NewBudget takes it in a BudgetConfig (its
// ContextTimeoutEnabled must be set).
//
// From a shell, again run --budget and again fetch --budget share the same
// bucket, and again fetch --breaker-store shares per-host breakers:
//
//	again run --deadline 1m --budget 'redis://redis:6379/0?key=db-wait' -- pg_isready -h db
//
// # URLs and deployments
//
//	redis://[[user]:password@]host[:port][/db]?key=NAME[&max_tokens=10][&token_ratio=0.1][&timeout=50ms][&connect_timeout=1s][&flush=100ms]
//
// rediss:// is TLS, with ca_file, cert_file and key_file naming PEM files;
// any other parameter is go-redis's. Supported deployments: a single
// server (Redis; Valkey speaks the same protocol but is not tested);
// Sentinel, with master_name=NAME in the URL
// (the host and each addr= are Sentinels, the client go-redis's failover
// client); Redis Cluster, through NewBudget or NewBreakerStore with a
// *redis.ClusterClient (each one's keys share one hash tag, so one slot).
// The tests run all three on Debian's redis-server and redis-sentinel.
// OpenBreakerStore opens a BreakerStore from the same URLs.
//
// # Costs and failures
//
// Recording a success costs nothing at call time (successes are flushed
// in batches every 100 ms); a retry decision costs at most one round trip,
// shared by concurrent decisions. Opening a Budget connects at once in the
// background; a decision within ConnectTimeout (1 s) of opening waits for
// that connection until then, and for its own answer at least Timeout
// after the connection is ready, so that a process started cold on a busy
// machine still shares; later decisions wait at most Timeout (50 ms).
//
// Nothing fails because of Redis. When it cannot be used (no answer in
// time, refused, wrong password, ACL denied, out of memory, a read-only
// replica, a key of another type), one log line names the cause (never a
// password) and decisions use a local bucket that is never full: it starts
// from the lower of the last level this process saw in Redis and one
// retry's worth, so a process makes at most one retry until its own
// successes refill it, and none if the shared bucket it last saw was
// spent. Thirty processes failing together then retry 7 or 8 times in all
// when Redis is killed, hung or restarted mid-storm, and 30 when it was
// never usable, against 90 with full local buckets. One more line says when
// the shared bucket is used again.
package fleet
