package admission

import "time"

// codel is folly's Codel (the queue of "Fail at Scale"), a pure state
// machine: time is a parameter. It is judged each time a request leaves
// the queue.
//
// Each Interval, the queue is judged overloaded if the smallest delay seen
// in the interval before exceeded Target: a standing queue, which a burst
// alone does not build (a burst drains, and some request then waits
// little). While overloaded, a request that waited longer than twice
// Target is dropped: Facebook found a fixed sloughing threshold to work
// better for RPC servers than CoDel proper's drops at shrinking intervals.
// The first request of an interval is never dropped, so that more than
// one request must arrive in an interval before dropping starts.
//
// Unlike folly, an Interval without any request leaving the queue ends
// the overload: nothing queued then, so no queue stood. A request
// admitted without waiting (atOnce) is, as in folly, where every request
// passes the queue, a delay of zero: an interval with one is no standing
// queue by its minimum. Only requests that wait leave our queue, and
// judged by them alone, at half the capacity an interval whose few
// waiting requests waited over Target, while most were admitted at once,
// was judged overloaded, and a request that then waited 20 ms sloughed.
//
// And an interval in which more requests were sloughed than admitted at
// once stays overloaded: sloughing keeps the oldest request's age below
// twice Target, so the oldest left after a slough may be younger than
// Target when arrivals leave a gap, and the minimum of the interval fell
// below Target at 4× capacity most intervals; the queue then turned FIFO
// for a whole interval, serving requests that had waited up to 100 ms
// (at 4× capacity on a virtual clock, the p99 of the wait before service
// was 90 ms; 15 ms now). folly observes the delay of each request
// leaving, sloughed ones too; a slough is such an observation. Sloughing
// also drains the queue now and then (at 4× capacity, 1 or 2 requests
// admitted at once in 1 interval of 14, against some 30 sloughed), so
// a single request admitted at once does not end that overload; but
// once the requests admitted at once outnumber those sloughed, the
// queue drains more than it stands, as CoDel proper (RFC 8289) leaves
// its dropping state when the queue holds less than a packet. When it
// stayed overloaded after any slough, a load stepping from 4× back to
// half the capacity kept sloughing: each request that waited 20 ms there
// kept the next interval overloaded (bench: the critical class 0.73 to
// 0.97 available in the 2 s after the step).
//
// The sloughing age is twice Target plus the permits' turnover (turn):
// the time between two permits freed, which a request next in line waits
// when every permit is busy, even without a standing queue.
//
// The zero codel starts its first interval on its first observation.
type codel struct {
	target, interval time.Duration

	end        time.Time     // the current interval's end; zero before the first observation
	minDelay   time.Duration // the smallest delay seen in the current interval
	overloaded bool
	sloughed   int           // the requests sloughed in the current interval (core.drop)
	atOnce     int           // the requests admitted without waiting in it (core.admitNow)
	turn       time.Duration // the permits' turnover, added to target (core.freed)
}

// observe records, as a request leaves the queue at now, the age of the
// oldest request then waiting (standing: the one leaving, when the queue
// serves oldest first). It reports whether this observation started a new
// interval: the first request of an interval is never dropped, so that
// more than one request must leave the queue in an interval before
// dropping starts (folly's rule).
//
// folly samples the delay of the request leaving. Sampling the oldest
// waiting is the same while the queue is FIFO, and keeps the judgment
// honest while it is LIFO: the newest, served first, waited little even
// when a queue stands behind them, and sampling them would end the
// overload after one interval and turn the queue FIFO again, to serve
// requests that waited a whole interval.
func (c *codel) observe(now time.Time, standing time.Duration) (first bool) {
	if c.end.IsZero() || !now.Before(c.end) {
		// A new interval: judge the one that ended, unless no request left
		// the queue for a whole interval.
		c.overloaded = !c.end.IsZero() && now.Before(c.end.Add(c.interval)) && (c.minDelay > c.target && c.atOnce == 0 || c.sloughed > c.atOnce)
		c.sloughed, c.atOnce = 0, 0
		c.end = now.Add(c.interval)
		c.minDelay = standing
		return true
	}
	c.minDelay = min(c.minDelay, standing)
	return false
}

// sloughs reports whether a request that has waited delay would be dropped
// if it left the queue now: the queue is overloaded and delay exceeds
// twice Target plus the permits' turnover. It changes nothing.
func (c *codel) sloughs(now time.Time, delay time.Duration) bool {
	return c.isOverloaded(now) && delay > 2*c.target+c.turn
}

// isOverloaded reports whether the queue is overloaded at now: the last
// judgment, unless a whole interval passed since the current one ended
// with no request leaving the queue.
func (c *codel) isOverloaded(now time.Time) bool {
	return c.overloaded && now.Before(c.end.Add(c.interval))
}

// load is folly's getLoad as a fraction: the smallest delay of the current
// interval over twice Target, at most 1. It is 0 when idle.
func (c *codel) load(now time.Time) float64 {
	if c.end.IsZero() || !now.Before(c.end.Add(c.interval)) {
		return 0
	}
	return min(1, float64(c.minDelay)/float64(2*c.target))
}
