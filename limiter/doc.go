// Package limiter bounds the calls in flight to a dependency, with a fixed
// or an adaptive limit.
//
// The calls in flight are the first thing that grows when a dependency
// slows down: every waiting call holds a goroutine, a connection and
// memory, and each one that times out is retried.
//
// A Limiter hands out permits: a call takes one before it starts
// (Acquire) and gives it back when it ended (Permit.Done). Its limit is
// either fixed, a bulkhead (Config.Limit, 25 by default, resilience4j's),
// or adaptive, moved after each call by one of Netflix
// concurrency-limits' algorithms, with their published defaults:
//
//   - AIMD: additive increase, ×0.9 on a drop (a timeout, an overload
//     answer); learns from losses alone.
//   - Vegas: TCP Vegas's queue estimate from the minimum RTT, with α =
//     3·log10 L and β = 6·log10 L; re-probes its minimum with jitter.
//   - Gradient2: the ratio of a long-term RTT to each call's (20/200/20,
//     tolerance 1.5, smoothing 0.2), with a guard against the baseline's
//     drift in long incidents and a minimum RTT measured again every
//     minute (±15 % jitter), as Envoy's adaptive concurrency filter does;
//     a drop halves it, at most once per baseline RTT.
//
// The update rules are pure (samples in, a new limit out) and read time
// only from the samples, so that a virtual clock (Config.Clock) drives
// them completely: again sim limit and the tests do.
//
// A call beyond the limit waits for a permit if Config.MaxWait allows (at
// most MaxWaiting calls at once, never past its context's deadline), and
// is otherwise refused at once with a *LimitError, which matches
// ErrLimited. A refusal is the client's own, not the dependency's: it
// reads as a rejection that ends retrying at once to package retry
// (a Budget neither spends nor refunds for it), and retry.IsOverload does
// not count it, so that a Throttler or a breaker beside it does not
// mistake it for the dependency's overload.
//
// The loss signals an adaptive limit learns from are the integrations':
// a timeout, HTTP 429 and 503 in retryhttp.Transport, RESOURCE_EXHAUSTED
// and UNAVAILABLE in gRPC; the RTT is measured until the response's
// headers, not while its body is read.
//
// # Sampling
//
// Measuring a call's RTT costs two clock reads, more than the rest of an
// admitted call. So when calls are frequent an adaptive limit measures
// only a sample of them: every call up to MinSampleRate (10,000) calls a
// second per Limiter, and above it one in N, N the largest power of two
// ≤ rate ÷ 10,000 and ≤ Config.SampleEvery (16 by default). The rate is
// measured over windows of 10 ms on the Limiter's clock, at the measured
// calls' ends; after it falls, N follows within 2N calls. The rule so
// learns from at least 10,000 RTTs a second (or rate ÷ SampleEvery, past
// 160,000 calls a second), which its windows need: Gradient2's baseline
// averages 600 samples and a probe 50, Vegas re-probes after 30 × limit
// samples, so they take at most N times more calls, and still well under
// a second. A call's number is given by the compare-and-swap that counts
// it in flight, so the unmeasured calls cost a fixed limit's, and the
// admitted call about twice a fixed limit's on average (BENCHMARKS.md).
//
// Only RTTs are sampled. Every call counts in flight, and every drop
// reaches the rule, measured or not (an unmeasured drop carries the time
// it came and no RTT): a loss is never missed, and under losses drops
// weigh up to N times more than the successes sampled beside them, so a
// sampled limit errs low, never high. AIMD without a Timeout needs no
// RTT: it learns from every call and never reads the clock. The update
// rules stay exact for the samples they get; Config.SampleEvery = 1
// measures every call, as a test on a virtual clock may need.
//
// Group keeps one Limiter per key (per host in retryhttp.Transport), with
// a bound on the keys.
//
// # Quick start
//
//	l, err := limiter.New(limiter.Config{Limit: 8})
//	if err != nil {
//		return err
//	}
//	p, err := l.Acquire(ctx)
//	if err != nil {
//		return err // errors.Is(err, limiter.ErrLimited): refused locally
//	}
//	defer p.Release() // a no-op after Done; gives the permit back on a panic
//	err = call(ctx)
//	p.Done(limiter.Success)
//
// Through retry.Do, each attempt holding its own permit (never during a
// backoff wait):
//
//	err = retry.Run(ctx, backoff.Default(), call, retry.WithAdmitter(l, nil))
//
// Over HTTP, per host, fixed or adaptive:
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Limits: &limiter.Group{Config: limiter.Config{Algorithm: limiter.Gradient2{}}},
//	}}
package limiter
