package fault_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/again-go/again/fault"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable clock for Injector.Now.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

var epoch = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func get(path string) *fault.Target {
	return &fault.Target{Method: "GET", Path: path, Host: "example.com"}
}

// picks returns, for n requests to path, which got a fault (its index,
// or -1).
func picks(in *fault.Injector, n int, path string) []int {
	out := make([]int, n)
	for i := range out {
		j := in.Pick(get(path))
		out[i] = -1
		if j.Fault != nil {
			out[i] = j.Index
			j.Done()
		}
	}
	return out
}

func TestScript(t *testing.T) {
	// Fail twice with a 503, then reset once, then succeed.
	in := &fault.Injector{Faults: []fault.Fault{
		{Times: 2},
		{Kind: fault.Reset, Skip: 2, Times: 1}, // counts requests 1 and 2 too
	}}
	got := picks(in, 5, "/")
	want := []int{0, 0, 1, -1, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("script: faults %v, want %v", got, want)
		}
	}
	if n := in.Injected(fault.Status); n != 2 {
		t.Errorf("Injected(Status) = %d, want 2", n)
	}
	if n := in.Injected(fault.Reset); n != 1 {
		t.Errorf("Injected(Reset) = %d, want 1", n)
	}
	if n := in.Requests(); n != 5 {
		t.Errorf("Requests() = %d, want 5", n)
	}
}

func TestRateIsSeeded(t *testing.T) {
	mk := func(seed uint64) *fault.Injector {
		return &fault.Injector{Seed: seed, Faults: []fault.Fault{{Rate: 0.2}}}
	}
	const n = 20000
	a, b, c := picks(mk(1), n, "/"), picks(mk(1), n, "/"), picks(mk(2), n, "/")
	hits, same, sameOther := 0, true, true
	for i := range a {
		if a[i] == 0 {
			hits++
		}
		same = same && a[i] == b[i]
		sameOther = sameOther && a[i] == c[i]
	}
	if !same {
		t.Error("seed 1 twice: different requests faulted")
	}
	if sameOther {
		t.Error("seeds 1 and 2: the same requests faulted")
	}
	if share := float64(hits) / n; share < 0.19 || share > 0.21 {
		t.Errorf("Rate 0.2: %.3f of requests faulted", share)
	}
}

func TestOutageTimeline(t *testing.T) {
	c := &clock{epoch}
	in := &fault.Injector{Epoch: epoch, Now: c.Now, Faults: []fault.Fault{
		{Kind: fault.Outage, Start: 10 * time.Second, Duration: 20 * time.Second},
	}}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {9999 * time.Millisecond, false}, {10 * time.Second, true}, {29 * time.Second, true}, {30 * time.Second, false}} {
		c.t = epoch.Add(tc.at)
		j := in.Pick(get("/"))
		if got := j.Fault != nil; got != tc.want {
			t.Errorf("outage 20s@10s at %v: fault %v, want %v", tc.at, got, tc.want)
		}
		if j.Fault != nil && j.Fault.Status != 503 {
			t.Errorf("outage status %d, want 503", j.Fault.Status)
		}
		j.Done()
	}
}

func TestRateLimitWindows(t *testing.T) {
	c := &clock{epoch}
	in := &fault.Injector{Epoch: epoch, Now: c.Now, Faults: []fault.Fault{
		{Kind: fault.RateLimit, Limit: 3, Window: 2 * time.Second, RetryAfter: 1500 * time.Millisecond},
	}}
	c.t = epoch.Add(500 * time.Millisecond)
	for i := range 4 {
		j := in.Pick(get("/"))
		if got := j.Fault != nil; got != (i == 3) {
			t.Fatalf("request %d of a limit of 3: limited %v", i+1, got)
		}
		if j.Fault == nil {
			continue
		}
		if j.Fault.Status != 429 {
			t.Errorf("status %d, want 429", j.Fault.Status)
		}
		for k, want := range map[string]string{
			"Ratelimit":        `"fault";r=0;t=2`, // 1.5 s to the window's end, rounded up
			"Ratelimit-Policy": `"fault";q=3;w=2`,
			"Retry-After":      "2",
		} {
			if got := j.Header.Get(k); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		j.Done()
	}
	c.t = epoch.Add(2 * time.Second) // the next window
	if j := in.Pick(get("/")); j.Fault != nil {
		t.Error("first request of a new window limited")
	}
}

func TestRetryAfterDate(t *testing.T) {
	c := &clock{epoch.Add(300 * time.Millisecond)}
	in := &fault.Injector{Now: c.Now, Faults: []fault.Fault{{RetryAfter: 2 * time.Second, RetryAfterDate: true}}}
	j := in.Pick(get("/"))
	want := epoch.Add(3 * time.Second).Format(http.TimeFormat) // rounded up: never sooner than asked
	if got := j.Header.Get("Retry-After"); got != want {
		t.Errorf("Retry-After %q, want %q", got, want)
	}
}

func TestMaxActive(t *testing.T) {
	in := &fault.Injector{MaxActive: 2, Faults: []fault.Fault{{}}}
	a, b, c := in.Pick(get("/")), in.Pick(get("/")), in.Pick(get("/"))
	if a.Fault == nil || b.Fault == nil || c.Fault != nil {
		t.Fatalf("MaxActive 2: faults %v %v %v, want the first two", a.Fault != nil, b.Fault != nil, c.Fault != nil)
	}
	if in.Active() != 2 {
		t.Errorf("Active() = %d, want 2", in.Active())
	}
	a.Done()
	if d := in.Pick(get("/")); d.Fault == nil {
		t.Error("after one Done: no fault, want one")
	}
}

func TestMatch(t *testing.T) {
	hdr := map[string][]string{"X-Fault": {"on"}}
	for _, tc := range []struct {
		name  string
		match fault.Match
		want  bool
	}{
		{"zero matches all", fault.Match{}, true},
		{"method", fault.Match{Method: "GET"}, true},
		{"other method", fault.Match{Method: "POST"}, false},
		{"path prefix", fault.Match{Path: "/api/"}, true},
		{"other path", fault.Match{Path: "/web/"}, false},
		{"host", fault.Match{Host: "example.com"}, true},
		{"other host", fault.Match{Host: "example.org"}, false},
		{"header present", fault.Match{Header: "X-Fault"}, true},
		{"header value", fault.Match{Header: "X-Fault", Value: "on"}, true},
		{"header other value", fault.Match{Header: "X-Fault", Value: "off"}, false},
		{"header absent", fault.Match{Header: "X-Other"}, false},
		{"all must hold", fault.Match{Method: "GET", Path: "/web/"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &fault.Injector{Faults: []fault.Fault{{Match: tc.match}}}
			j := in.Pick(&fault.Target{Method: "GET", Path: "/api/items", Host: "example.com", Header: hdr})
			if got := j.Fault != nil; got != tc.want {
				t.Errorf("%+v: matched %v, want %v", tc.match, got, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     fault.Fault
		field string
	}{
		{"rate above 1", fault.Fault{Rate: 1.5}, "Faults[0].Rate"},
		{"negative rate", fault.Fault{Rate: -0.1}, "Faults[0].Rate"},
		{"outage without a duration", fault.Fault{Kind: fault.Outage}, "Faults[0].Duration"},
		{"status", fault.Fault{Status: 42}, "Faults[0].Status"},
		{"100 Continue: the client reads on for the final status", fault.Fault{Status: 100}, "Faults[0].Status"},
		{"101: a hang after it", fault.Fault{Status: 101}, "Faults[0].Status"},
		{"199", fault.Fault{Kind: fault.Outage, Duration: time.Second, Status: 199}, "Faults[0].Status"},
		{"600: no HTTP status", fault.Fault{Kind: fault.RateLimit, Status: 600}, "Faults[0].Status"},
		{"distribution", fault.Fault{Kind: fault.Latency, Dist: fault.Distribution{Name: "uniform"}}, "Faults[0].Dist.Name"},
		{"negative bytes", fault.Fault{Kind: fault.CutBody, Bytes: -1}, "Faults[0].Bytes"},
		{"kind", fault.Fault{Kind: 99}, "Faults[0].Kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&fault.Injector{Faults: []fault.Fault{tc.f}}).Validate()
			var fe *fault.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("Validate() = %v, want a *FieldError for %s matching ErrInvalid", err, tc.field)
			}
		})
	}
	in := &fault.Injector{Faults: []fault.Fault{{Rate: 2}}}
	if j := in.Pick(get("/")); !errors.Is(j.Err, fault.ErrInvalid) || j.Fault != nil {
		t.Errorf("an invalid Injector: Pick() = %+v, want its error and no fault", j)
	}
	for _, st := range []int{fault.MinStatus, 204, 302, 429, fault.MaxStatus} {
		if err := (&fault.Injector{Faults: []fault.Fault{{Status: st}}}).Validate(); err != nil {
			t.Errorf("status %d: Validate() = %v, want nil", st, err)
		}
	}
	if want := fmt.Sprintf("a status from %d to %d", fault.MinStatus, fault.MaxStatus); fault.StatusAccepted != want {
		t.Errorf("StatusAccepted = %q, want %q: the range in words drifted from the constants", fault.StatusAccepted, want)
	}
	if err := (&fault.Injector{Faults: []fault.Fault{{}, {Kind: fault.Latency, Delay: time.Second}}}).Validate(); err != nil {
		t.Errorf("valid faults: Validate() = %v", err)
	}
}

func TestDistributionParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fault.Distribution
	}{
		{"lognormal:5ms,1.2", fault.Distribution{Name: fault.Lognormal, Median: 5 * time.Millisecond, Sigma: 1.2, Scale: 5 * time.Millisecond, Alpha: 1.5}},
		{"pareto:2ms,2", fault.Distribution{Name: fault.Pareto, Scale: 2 * time.Millisecond, Alpha: 2, Median: 10 * time.Millisecond, Sigma: 1}},
		{"pareto", fault.Distribution{Name: fault.Pareto, Scale: 5 * time.Millisecond, Alpha: 1.5, Median: 10 * time.Millisecond, Sigma: 1}},
		{"lognormal:20ms", fault.Distribution{Name: fault.Lognormal, Median: 20 * time.Millisecond, Sigma: 1, Scale: 5 * time.Millisecond, Alpha: 1.5}},
	} {
		got, err := fault.ParseDistribution(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDistribution(%q) = %+v, %v, want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "uniform", "pareto:5", "pareto:5ms,1", "lognormal:5ms,x", "lognormal:2s", "pareto:-1ms"} {
		if _, err := fault.ParseDistribution(bad); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("ParseDistribution(%q) = %v, want an error matching ErrInvalid", bad, err)
		}
	}
}

func FuzzParseDistribution(f *testing.F) {
	for _, s := range []string{"lognormal:5ms,1.2", "pareto:5ms,1.5", "pareto", "lognormal:1µs,5", "pareto:1s,100", "x:y,z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := fault.ParseDistribution(s)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("ParseDistribution(%q): error %v does not match ErrInvalid", s, err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ParseDistribution(%q) = %+v, which Validate rejects: %v", s, d, err)
		}
		back, err := fault.ParseDistribution(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDistribution(%q).String() = %q reads back as %+v, %v; want %+v", s, d.String(), back, err, d)
		}
		for _, q := range []float64{0.001, 0.5, 0.999} {
			if v := d.Quantile(q); v < 0 || v > fault.MaxLatency {
				t.Fatalf("%v.Quantile(%v) = %v, outside [0, MaxLatency]", d, q, v)
			}
		}
	})
}

func FuzzParseKind(f *testing.F) {
	for _, k := range fault.Kinds() {
		f.Add(k.String())
	}
	f.Add("mid-body")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := fault.ParseKind(s)
		if err == nil && k.String() != s {
			t.Fatalf("ParseKind(%q) = %v, which prints otherwise", s, k)
		}
		st, err := fault.ParseStage(s)
		if err == nil && st.String() != s {
			t.Fatalf("ParseStage(%q) = %v, which prints otherwise", s, st)
		}
	})
}
