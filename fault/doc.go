// Package fault injects the failures that retry, hedge and breaker code
// reacts to.
//
// The failures are values: a 503 with Retry-After (seconds or a date), a
// 429 with the IETF RateLimit fields, a connection reset before the
// headers, after them or mid-body, a Content-Length lie, a slow first byte
// against a slow body, a stall, latency from a long-tailed distribution,
// and an outage on a timeline.
//
// # Quick start
//
// Describe the faults in an Injector and put it in front of a handler
// (server side) or under a client (client side):
//
//	in := &fault.Injector{Seed: 1, Faults: []fault.Fault{
//		{Kind: fault.Status, Status: 503, RetryAfter: 2 * time.Second, Rate: 0.2},
//		{Kind: fault.Reset, Stage: fault.MidBody, Rate: 0.05, Match: fault.Match{Path: "/api/"}},
//		{Kind: fault.Latency, Dist: fault.Distribution{Name: fault.Lognormal, Median: 5 * time.Millisecond, Sigma: 1.2}},
//	}}
//	srv := httptest.NewServer(&fault.Handler{Injector: in, Next: mux})
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Base: &fault.Transport{Injector: in}, // innermost: each attempt draws its fault
//	}}
//
// A script fails a set number of times: Fault{Kind: fault.Status, Times: 2}
// fails the first two requests and lets the others through.
//
// # Determinism
//
// Which requests a Rate picks, and the latencies drawn from a
// Distribution, depend only on the Injector's Seed and on the order in
// which matching requests arrive: a test that sends its requests one by
// one sees the same faults on every run. The timeline (Fault.Start,
// Fault.Duration, an Outage, RateLimit's windows, Retry-After dates) runs
// on Injector.Now, and the waits on timers, which testing/synctest fakes
// for the client side (Transport); the server side runs over a real
// network, where a test bounds waits from below only.
//
// # Distributions
//
// Distribution and ParseDistribution are the latency distributions of
// `again sim hedge` ("pareto:5ms,1.5", "lognormal:5ms,1.2"), so that a
// simulation and a live test mean the same thing by the same words.
//
// # Cost
//
// A request no fault matches costs a Handler or Transport a few
// comparisons per fault and no allocation (BenchmarkHandlerNoMatch).
package fault
