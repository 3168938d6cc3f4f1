// Package throttle models client-side throttling over a demand sweep.
//
// [Run] compares the SRE book's counting (the library's package
// throttle) against a budget alone, failsafe-go's sent-only counting and
// AWS's CUBIC send rate. With Config.Shed the backend is a
// server that sheds with package shed's decisions (admission.Core)
// instead of a token bucket: the clients' half and the server's at once.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package throttle
