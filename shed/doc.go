// Package shed keeps a server serving its capacity under overload.
//
// It admits a request when a concurrency limit allows, holds the rest in
// a queue managed by CoDel, and sheds what cannot be served in time,
// cheaply, telling the client when to come back. It is the server's half of what the rest of the
// module does for clients: under a load many times its capacity, a server
// that queues everything spends its capacity on requests whose clients
// have given up, and its goodput falls toward zero; one that sheds keeps
// serving its capacity.
//
// # What a request meets
//
//   - The limit: a Fixed one (Config.Limit, 100 by default), or an
//     adaptive one (Config.Adaptive, any Limit, such as package
//     limiter's Limiter learning from the handler's latency). A request
//     that finds a permit free and nobody waiting is served at once: the
//     path that costs well under a microsecond and allocates nothing.
//   - The queue (Config.MaxQueue, 128), by priority: the SRE book's
//     criticality (CRITICAL_PLUS, CRITICAL, SHEDDABLE_PLUS, SHEDDABLE,
//     from HeaderCriticality or Config.Classify), and within a class
//     first attempts before retries (HeaderAttempt, as Envoy's
//     x-envoy-attempt-count). The highest is served first; a full queue
//     evicts its lowest request for a higher one. A class the server does
//     not know is served only from spare capacity: never queued.
//   - CoDel, as folly's Codel and Facebook's "Fail at Scale" run it: the
//     queue is overloaded when the smallest queueing delay over an
//     Interval (100 ms) exceeds Target (5 ms), a request admitted without
//     waiting counting as a delay of 0, and stays so while it drops more
//     requests than it admits without waiting: once the queue drains
//     more than it stands, the overload ends. Then a request that waited more than twice Target,
//     plus the time between two permits freed (what the request next in
//     line waits when every permit is busy: about 10 ms for 4 permits and
//     40 ms of work), is dropped, and the queue serves the newest first
//     (adaptive LIFO): the oldest are those whose clients have most
//     likely given up. Lower levels go first: a request is dropped so,
//     and its level served newest first, only while no request of a
//     lower level waits, nor of a lower class queued in this Interval or
//     the one before, or when its level and those above alone outnumber
//     the permits freed, so that critical requests are not dropped while
//     sheddable ones are still served.
//   - Deadlines: a client sends the time it will still wait in
//     HeaderTimeout (Again-Timeout-Ms, whole milliseconds;
//     retryhttp.Transport sends it). A request still queued at its
//     deadline is dropped, at most DropFraction (20 %) of the requests
//     over DropWindow (10 s), Finagle's cap, so that wrong deadlines
//     cannot black-hole a client. Config.IgnoreTimeout turns it off.
//   - MaxWait (1 s) bounds any wait, for when no request ends.
//
// A shed request is answered at once: HTTP 503 with a Retry-After drawn
// from CoDel's load (1 s at rest, up to 5 s) and jittered up to twice that
// so that shed clients do not come back in step; 429 when Config.Quota, a
// per-client quota, refused it. retryhttp.Transport obeys both.
//
// A permit is never leaked: it goes back when the handler returns,
// whatever the handler did (panicked, hijacked the connection, streamed,
// or outlived a canceled request); a request whose client leaves while it
// waits leaves the queue.
//
// # Quick start
//
// One line, with the defaults:
//
//	http.ListenAndServe("localhost:8080", shed.Handler(mux))
//
// Configured:
//
//	s, err := shed.New(shed.Config{Limit: 64, MaxQueue: 256})
//	if err != nil {
//		return err // errors.Is(err, shed.ErrInvalid)
//	}
//	srv := &http.Server{Addr: "localhost:8080", Handler: s.Wrap(mux)}
//
// With a limit that learns the handler's latency (package limiter's
// Gradient2; the Limiter's MaxWait stays zero, the Shedder queues), and
// from the requests whose client went away while they were served at or
// after their deadline (HeaderTimeout), each a drop (work nobody waited
// for):
//
//	l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Min: 1}})
//	...
//	s, err := shed.New(shed.Config{Adaptive: l})
//
// A request whose client went away before its deadline, less a quarter of
// its time, was canceled by choice, as a hedge's losing copy is: its
// permit goes back without a sample. Without a deadline, every client
// that leaves counts as timed out.
//
// A client marks what may be shed first:
//
//	ctx = shed.WithCriticality(ctx, shed.Sheddable)
//	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
//	resp, err := retryingClient.Do(req) // retryhttp.Transport sends the headers
//
// Other transports (gRPC) use Shedder.Admit and the Permit it returns.
//
// # The decisions without a clock
//
// Core is a Shedder's decisions as functions of the times passed in, with
// no clock, goroutine or blocking: a request arrives (admitted, queued or
// shed), a permit comes back, a queued request leaves, and the queued
// requests' fates come back through a function. A Shedder runs the same
// code under real time; `again sim outage --shed` and `again sim throttle
// --shed` run it on their virtual clock, and so does the calculator page,
// in WebAssembly. Core and the types of its decisions live in package
// shed/admission, which does not import net/http; shed re-exports them
// under the same names (type aliases).
package shed
