package calc

import (
	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
	"github.com/again-go/again/retry"
)

// ClassReport is the schedule one class of failure follows (see
// retry.Class): the waits after failures of that class alone, if every
// attempt of the call failed with it. Its JSON form is
//
//	{"name": "overload", "policy": {"initial_ms": 1000, ...}, "cost": 5,
//	 "call_capped": true, "retries": [...], "total": {...}}
//
// with "policy" the class's own policy, whose "retries" is the class's
// own cap on its retries, "cost" what each of its retries takes from a
// retry budget, and "retries" and "total" as the report's own, over the
// retries the class can make: its own cap or the call's --retries,
// whichever is fewer ("call_capped" is true when the call's is).
type ClassReport struct {
	Name       string        `json:"name"`
	Policy     PolicyReport  `json:"policy"`
	Cost       float64       `json:"cost"`
	CallCapped bool          `json:"call_capped"`
	Retries    []RetryReport `json:"retries"`
	Total      TotalReport   `json:"total"`
}

// classReports analyses each class under the call's policy call: a class
// makes at most its own number of retries, and never more than the call's.
func classReports(cs []retry.Class, call backoff.Policy, seed uint64) []ClassReport {
	callRetries := min(call.MaxAttempts()-1, MaxRetries)
	out := make([]ClassReport, len(cs))
	for i, c := range cs {
		p := resolve(c.Policy)
		own := min(p.MaxAttempts()-1, MaxRetries)
		s := plan.Analyze(ClassPolicy(c, call), seed)
		cost := c.Cost
		if cost == 0 {
			cost = 1 // retry.Class's zero rule
		}
		out[i] = ClassReport{
			Name: c.Name,
			Policy: PolicyReport{
				Initial: Millis(toUser(p.Initial)), Multiplier: p.EffectiveMultiplier(),
				Max: Millis(toUser(p.Max)), Retries: own, Jitter: p.JitterText(),
			},
			Cost:       cost,
			CallCapped: callRetries < own,
			Retries:    retryRows(s),
			Total:      totalReport(s, seed),
		}
	}
	return out
}

// ClassPolicy returns the schedule that failures of class c alone follow
// in a call on the policy call: the class's own policy, its zero fields
// spelled out, with no more retries than its own cap or the call's,
// whichever is fewer (see retry.Class). `again calc` shows it, and `again
// sim storm --fail-as` runs its clients on it.
func ClassPolicy(c retry.Class, call backoff.Policy) backoff.Policy {
	p := resolve(c.Policy)
	n := min(p.MaxAttempts()-1, call.MaxAttempts()-1, MaxRetries)
	p.Retries = fromUser(n, backoff.NoRetries)
	return p
}

// resolve spells out the zero fields of p that backoff.Policy reads as
// its defaults, so that a report shows the values in effect.
func resolve(p backoff.Policy) backoff.Policy {
	d := backoff.Default()
	if p.Initial == 0 {
		p.Initial = d.Initial
	}
	if p.Max == 0 {
		p.Max = d.Max
	}
	if p.Retries == 0 {
		p.Retries = d.Retries
	}
	p.Multiplier = p.EffectiveMultiplier()
	return p
}

// ClassWhat says in English which failures a class of the command line
// (cmdutil's --on-overload and --on-transient, named "overload" and
// "transient") or of retry.AWSClasses holds, or "" for a name it does not
// know: calc's reports and the help of calc's and sim's class flags say it.
func ClassWhat(name string) string {
	switch name {
	case "overload", "throttling":
		return "429, 503, RESOURCE_EXHAUSTED, throttle and breaker rejections"
	case "transient":
		return "network errors, timeouts, other statuses"
	}
	return ""
}
