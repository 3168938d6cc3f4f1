// Package admission decides which requests a server admits, queues or sheds, on any clock.
//
// It is package shed's decisions without HTTP: the concurrency limit
// (Fixed, or any Limit, such as package limiter's adaptive Limiter), the
// queue by priority (the SRE book's Criticality, and first attempts
// before retries), CoDel's judgment of a standing queue and its adaptive
// LIFO, deadlines with Finagle's cap, and the Retry-After a shed client
// is told. Core holds them as functions of the times passed in, with no
// clock, goroutine or blocking: shed's Shedder runs a Core under real
// time behind its middleware and gRPC interceptors, and a simulator runs
// one on its virtual clock (`again sim outage --shed`, and the page
// compiled to WebAssembly, which must not link net/http).
//
// Package shed re-exports every name here that its users know (Core,
// Config's fields, Criticality, Reason, the headers); a server uses
// shed, and this package only to run the decisions on a clock of its own
// without net/http. See package shed for what a request meets.
package admission
