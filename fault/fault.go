package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what a fault does to a request.
type Kind uint8

// The kinds of fault. The zero Kind is Status.
const (
	// Status answers with Fault.Status [503] and Fault.Header, plus a
	// Retry-After if Fault.RetryAfter is set, without reaching the server.
	Status Kind = iota
	// Reset breaks the connection at Fault.Stage: before the response
	// headers, after them, or in the middle of the body. The server has
	// seen the request.
	Reset
	// Latency delays the request by Fault.Delay (or a draw from
	// Fault.Dist) before it reaches the server.
	Latency
	// SlowFirstByte lets the server answer, then holds the response
	// headers back for the delay: what an attempt timeout bounds.
	SlowFirstByte
	// SlowBody sends the response headers at once and holds the body
	// back for the delay: what only a deadline on the body bounds.
	SlowBody
	// CutBody declares a Content-Length longer than the body it sends:
	// the client reads Fault.Bytes bytes [half the body; see Bytes for a
	// body of unknown length] and then an
	// unexpected EOF, the connection closed cleanly.
	CutBody
	// Stall never answers: it holds the request until its context ends,
	// or for the delay if one is set, and then breaks the connection.
	Stall
	// RateLimit lets Fault.Limit [10] requests through per Fault.Window
	// [1 s] and answers the others with Fault.Status [429], the IETF
	// RateLimit and RateLimit-Policy fields (quota exhausted, reset at
	// the window's end) and a Retry-After if Fault.RetryAfter is set.
	RateLimit
	// Outage is Status [503] confined to a window of the timeline:
	// Fault.Duration must be set (see Fault.Start).
	Outage
	numKinds
)

var kindNames = [numKinds]string{"status", "reset", "latency", "slow-first-byte", "slow-body", "cut-body", "stall", "rate-limit", "outage"}

// String returns the kind's name, such as "slow-first-byte", as
// ParseKind reads it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Kinds returns every Kind, in order. Each call returns a new slice.
func Kinds() []Kind {
	ks := make([]Kind, numKinds)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// ParseKind returns the Kind named s (Kind.String's names).
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, &FieldError{"Kind", strconv.Quote(s), "one of " + strings.Join(kindNames[:], ", ")}
}

// Stage is when a Reset breaks the connection.
type Stage uint8

// The stages of a Reset. The zero Stage is BeforeHeaders.
const (
	BeforeHeaders Stage = iota // no response at all: the client sees EOF or a reset
	AfterHeaders               // the headers, then a reset before any body byte
	MidBody                    // the headers and Fault.Bytes bytes [half the body; see Fault.Bytes], then a reset
)

var stageNames = [...]string{"before-headers", "after-headers", "mid-body"}

// String returns the stage's name, such as "mid-body", as ParseStage reads it.
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "Stage(" + strconv.Itoa(int(s)) + ")"
}

// ParseStage returns the Stage named s (Stage.String's names).
func ParseStage(s string) (Stage, error) {
	for i, n := range stageNames {
		if n == s {
			return Stage(i), nil
		}
	}
	return 0, &FieldError{"Stage", strconv.Quote(s), "before-headers, after-headers or mid-body"}
}

// Match selects the requests a fault may apply to. Its zero value matches
// every request; each non-empty field narrows it, and all must hold.
type Match struct {
	Method string // the request's method, such as "GET"
	Path   string // a prefix of the URL's path, such as "/api/"; for gRPC, of the full method "/pkg.Service/Method"
	Host   string // the request's host (with its port, if it has one)
	// Header, if set, is a header the request must carry, with the value
	// Value, or any value if Value is empty. It is looked up as written:
	// in its canonical form for HTTP ("X-Fault"), in lower case for gRPC
	// metadata ("x-fault").
	Header, Value string
}

// Target is what a Match is compared with: a request's method, path, host
// and a way to read its headers. HTTP requests are their own targets
// (Handler and Transport build them); other protocols, such as gRPC's
// interceptors in package retrygrpc, fill one in.
type Target struct {
	Method, Path, Host string
	// Header holds the request's headers, or gRPC's metadata (a
	// metadata.MD converts to it); nil means none.
	Header map[string][]string
	// Context is the request's context, passed on to OnInject's Event
	// (for its span, say); nil means none.
	Context context.Context
}

func (m *Match) matches(t *Target) bool {
	if m.Method != "" && m.Method != t.Method ||
		m.Host != "" && m.Host != t.Host ||
		m.Path != "" && !strings.HasPrefix(t.Path, m.Path) {
		return false
	}
	if m.Header != "" {
		v, ok := t.Header[m.Header]
		if !ok || m.Value != "" && (len(v) == 0 || v[0] != m.Value) {
			return false
		}
	}
	return true
}

// Fault is one fault and when it applies. Its zero value answers every
// request with a 503. A Fault is a value, read but never changed by the
// Injector that holds it.
type Fault struct {
	// Kind is what the fault does [Status].
	Kind Kind
	// Rate is the share of the matching requests it applies to, in
	// (0, 1]; 0 means 1, every one. Which requests it picks depends only
	// on the Injector's Seed and the order in which the matching
	// requests arrive.
	Rate float64
	// Match selects the requests it may apply to [all].
	Match Match
	// Skip lets the first Skip matching requests through, and Times, if
	// positive, stops the fault after it applied Times times: a script.
	// Fault{Status: 503, Times: 2} fails twice, then lets everything
	// through; with Skip 2 too, a second fault takes over after the first.
	Skip, Times int
	// Start and Duration, if Duration is positive, confine the fault to
	// the window [Start, Start+Duration) of the Injector's timeline,
	// which begins at its Epoch. An Outage needs them.
	Start, Duration time.Duration

	// Status is the status of Status [503], Outage [503] and RateLimit
	// [429], and Header headers added to their responses.
	Status int
	Header http.Header
	// RetryAfter, if positive, adds a Retry-After to the responses of
	// Status, Outage and RateLimit: whole seconds rounded up, or, with
	// RetryAfterDate, the HTTP date that far from now.
	RetryAfter     time.Duration
	RetryAfterDate bool

	// Stage is when a Reset breaks the connection [BeforeHeaders].
	Stage Stage
	// Bytes is how much of the body MidBody and CutBody let through (less
	// than a Content-Length, whatever it says). 0 means half of a body of
	// known length; of a body of unknown length (chunked), a number of
	// bytes drawn for each request from 1 to MaxDrawnBytes with the
	// Injector's Seed. A body shorter than that is let through whole,
	// and the fault acts at its end, before the chunk that would end it.
	Bytes int64

	// Delay is the wait of Latency, SlowFirstByte, SlowBody and Stall; if
	// Dist.Name is set, each request draws it from Dist instead. A Stall
	// without either waits for the request's context.
	Delay time.Duration
	Dist  Distribution

	// Limit [10] requests per Window [1 s] pass a RateLimit.
	Limit  int
	Window time.Duration
}

// The statuses a Status, Outage or RateLimit fault may answer with: the
// final statuses, the range Envoy's fault filter accepts for an abort.
// An interim 1xx cannot end a response (a client reads on for the final
// one after a 100, and after a 101 the connection is no longer HTTP), and
// 600 and above are no HTTP status at all. 2xx and 3xx are accepted: a
// 200 that carries no data or a 302 to nowhere are answers a client may
// have to survive too.
const (
	MinStatus = 200
	MaxStatus = 599
	// StatusAccepted says so, for errors and help texts.
	StatusAccepted = "a status from 200 to 599"
)

// ValidStatus reports whether a fault may answer with status: whether it
// is from MinStatus to MaxStatus.
func ValidStatus(status int) bool { return status >= MinStatus && status <= MaxStatus }

// MaxDrawnBytes bounds the bytes of a body of unknown length that MidBody
// and CutBody let through when Fault.Bytes is 0: a draw from 1 to it, so
// that the fault acts within the first few TCP segments of a long body and
// still after some of it.
const MaxDrawnBytes = 4096

// withDefaults returns f with its defaults, or a *FieldError.
func (f Fault) withDefaults() (Fault, error) {
	if f.Kind >= numKinds {
		return f, &FieldError{"Kind", f.Kind.String(), "a Kind"}
	}
	if f.Rate == 0 {
		f.Rate = 1
	}
	if !(f.Rate > 0 && f.Rate <= 1) {
		return f, &FieldError{"Rate", fmt.Sprint(f.Rate), "a number in (0, 1]"}
	}
	if f.Skip < 0 || f.Times < 0 {
		return f, &FieldError{"Skip", fmt.Sprint(f.Skip, " ", f.Times), "Skip and Times at least 0"}
	}
	if f.Start < 0 || f.Duration < 0 {
		return f, &FieldError{"Start", fmt.Sprint(f.Start, " ", f.Duration), "Start and Duration at least 0"}
	}
	if f.Kind == Outage && f.Duration == 0 {
		return f, &FieldError{"Duration", "0", "a positive duration for an Outage"}
	}
	if f.Status == 0 {
		f.Status = http.StatusServiceUnavailable
		if f.Kind == RateLimit {
			f.Status = http.StatusTooManyRequests
		}
	}
	if !ValidStatus(f.Status) {
		return f, &FieldError{"Status", strconv.Itoa(f.Status), StatusAccepted}
	}
	if f.RetryAfter < 0 {
		return f, &FieldError{"RetryAfter", f.RetryAfter.String(), "at least 0"}
	}
	if f.Stage > MidBody {
		return f, &FieldError{"Stage", f.Stage.String(), "a Stage"}
	}
	if f.Bytes < 0 {
		return f, &FieldError{"Bytes", fmt.Sprint(f.Bytes), "at least 0"}
	}
	if f.Delay < 0 || f.Delay > time.Hour {
		return f, &FieldError{"Delay", f.Delay.String(), "a duration from 0 to 1h"}
	}
	if f.Dist.Name != "" {
		d, err := f.Dist.Defaults()
		if err != nil {
			return f, fromLatency(err, "Dist.")
		}
		f.Dist = d
	}
	if f.Limit == 0 {
		f.Limit = 10
	}
	if f.Window == 0 {
		f.Window = time.Second
	}
	if f.Limit < 0 || f.Window < time.Millisecond {
		return f, &FieldError{"Limit", fmt.Sprint(f.Limit, " per ", f.Window), "a Limit above 0 per a Window of at least 1ms"}
	}
	return f, nil
}

// Injector decides which requests get which fault, and counts them. Its
// zero value injects nothing. Set its fields before its first use and do
// not change them after; it is then safe for concurrent use, by any number
// of Handlers, Transports and interceptors, which share its counters.
type Injector struct {
	// Faults are tried in order for each request; the first that matches
	// it, is within its window and script, and draws it (Rate) applies.
	// Each fault counts the requests it matches within its window, for
	// Skip and the Rate's draws, whether or not another fault applies.
	// An invalid Fault makes Validate fail, and every Pick return its
	// error (Injection.Err): the Handler answers 500 and the Transport
	// fails.
	Faults []Fault
	// Seed picks which requests a Rate applies to and the delays drawn
	// from a Distribution: the same Seed, the same requests in the same
	// order, the same faults. Every value, 0 included, is a seed.
	Seed uint64
	// MaxActive, if positive, caps the faults in progress at once
	// (Envoy's max_active_faults): a request that would exceed it gets
	// none. A fault is in progress until the Handler returns, or until
	// the Transport's RoundTrip returns.
	MaxActive int
	// Epoch is the start of the timeline of Start and Duration, and of
	// RateLimit's windows; zero means the time of the first request.
	Epoch time.Time
	// Now, if not nil, is the clock (of the timeline, the windows and
	// Retry-After dates); nil means time.Now. Waits use timers, which
	// testing/synctest fakes.
	Now func() time.Time
	// OnInject, if not nil, is called once per injected fault, on the
	// request's goroutine, before the fault acts.
	OnInject func(Event)

	once     sync.Once
	faults   []Fault // with their defaults
	counts   []faultCount
	err      error
	epoch    time.Time
	active   atomic.Int64
	requests atomic.Int64
	kinds    [numKinds]atomic.Int64
}

type faultCount struct {
	seen, fired atomic.Int64
	mu          sync.Mutex // the RateLimit window
	window      int64
	used        int
}

// Validate returns the *FieldError of the first invalid Fault, its Field
// prefixed with "Faults[i].", or nil.
func (in *Injector) Validate() error {
	for i, f := range in.Faults {
		if _, err := f.withDefaults(); err != nil {
			fe := *err.(*FieldError)
			fe.Field = fmt.Sprintf("Faults[%d].%s", i, fe.Field)
			return &fe
		}
	}
	return nil
}

func (in *Injector) init() {
	in.once.Do(func() {
		if in.err = in.Validate(); in.err != nil {
			return
		}
		in.faults = make([]Fault, len(in.Faults))
		for i, f := range in.Faults {
			in.faults[i], _ = f.withDefaults()
		}
		in.counts = make([]faultCount, len(in.Faults))
		in.epoch = in.Epoch
		if in.epoch.IsZero() {
			in.epoch = in.now()
		}
	})
}

func (in *Injector) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

// Requests returns how many requests the Injector has seen.
func (in *Injector) Requests() int64 { return in.requests.Load() }

// Injected returns how many faults of kind k it has injected.
func (in *Injector) Injected(k Kind) int64 {
	if k >= numKinds {
		return 0
	}
	return in.kinds[k].Load()
}

// Active returns how many faults are in progress.
func (in *Injector) Active() int { return int(in.active.Load()) }

// Event is an injected fault, as OnInject receives it.
type Event struct {
	Index int    // the fault's index in Injector.Faults
	Fault *Fault // the fault, its defaults set; read it, do not change it
	// The request's Target, without its headers.
	Method, Path, Host string
	// Context is the Target's context, context.Background() if it had
	// none.
	Context context.Context
}

// Injection is a fault picked for one request, with what it needs to act.
// Its zero value (Fault nil) is no fault. Done must be called once the
// fault has acted, when Fault is not nil.
type Injection struct {
	Fault *Fault // with its defaults set; nil: none
	// Index is the fault's index in Faults.
	Index int
	// Delay is the wait drawn for this request (Delay or a draw from
	// Dist); for Status, Outage and RateLimit, the Retry-After.
	Delay time.Duration
	// Header holds the headers to add to a Status, Outage or RateLimit
	// response, Fault.Header's and the fault's own; nil for other kinds.
	Header http.Header
	// Bytes is, for MidBody and CutBody, how much of a body of unknown
	// length to let through: Fault.Bytes, or the draw from 1 to
	// MaxDrawnBytes if that is 0.
	Bytes int64
	// Err is the Injector's Validate error; Fault is then nil.
	Err error
	in  *Injector
}

// Done ends the injection: the fault no longer counts in MaxActive.
func (j *Injection) Done() {
	if j.Fault != nil && j.in.MaxActive > 0 {
		j.in.active.Add(-1)
	}
}

// cut returns how much of a body of length n (-1: unknown) a MidBody or
// CutBody lets through: Fault.Bytes, or half of a known length if it is
// 0, and always less than a known length; of an unknown length, Bytes.
func (j *Injection) cut(n int64) int64 {
	switch f := j.Fault; {
	case n < 0:
		return j.Bytes
	case f.Bytes == 0:
		return n / 2
	case f.Bytes >= n:
		return max(n-1, 0)
	default:
		return f.Bytes
	}
}

// Pick returns the fault for the request t, if any (Injection.Fault nil
// otherwise), counts it, and calls OnInject. It is the decision Handler,
// Transport and the gRPC interceptors share; a protocol of one's own calls
// it too. With no fault matching, it allocates nothing.
func (in *Injector) Pick(t *Target) Injection {
	if len(in.Faults) == 0 {
		return Injection{}
	}
	in.init()
	if in.err != nil {
		return Injection{Err: in.err}
	}
	in.requests.Add(1)
	var (
		now    time.Time
		picked Injection
		capped bool
	)
	// Every matching fault counts the request, even once an earlier one
	// has been picked, so that Skip and the Rate's draws count the
	// matching requests whatever the other faults do.
	for i := range in.faults {
		f := &in.faults[i]
		if !f.Match.matches(t) {
			continue
		}
		if f.Duration > 0 || f.Kind == RateLimit || f.RetryAfterDate {
			if now.IsZero() {
				now = in.now()
			}
			if at := now.Sub(in.epoch); f.Duration > 0 && (at < f.Start || at >= f.Start+f.Duration) {
				continue
			}
		}
		c := &in.counts[i]
		n := c.seen.Add(1) - 1
		if picked.Fault != nil || capped || n < int64(f.Skip) {
			continue
		}
		if f.Rate < 1 && draw(in.Seed, uint64(i), uint64(n)) >= f.Rate {
			continue
		}
		j := Injection{Fault: f, Index: i, in: in}
		if f.Kind == RateLimit && !in.overLimit(c, f, now, &j) {
			continue
		}
		if f.Times > 0 && c.fired.Add(1) > int64(f.Times) {
			continue
		}
		if in.MaxActive > 0 && in.active.Add(1) > int64(in.MaxActive) {
			in.active.Add(-1)
			capped = true // no other fault either
			continue
		}
		in.kinds[f.Kind].Add(1)
		in.fill(&j, n, now)
		picked = j
	}
	if picked.Fault != nil && in.OnInject != nil {
		ctx := t.Context
		if ctx == nil {
			ctx = context.Background()
		}
		in.OnInject(Event{Index: picked.Index, Fault: picked.Fault, Method: t.Method, Path: t.Path, Host: t.Host, Context: ctx})
	}
	return picked
}

// overLimit reports whether the request is over f's limit in its window,
// and sets the RateLimit fields of j's response.
func (in *Injector) overLimit(c *faultCount, f *Fault, now time.Time, j *Injection) bool {
	at := now.Sub(in.epoch)
	w := int64(at / f.Window)
	c.mu.Lock()
	if c.window != w {
		c.window, c.used = w, 0
	}
	c.used++
	over := c.used > f.Limit
	c.mu.Unlock()
	if !over {
		return false
	}
	reset := time.Duration(w+1)*f.Window - at
	secs := int64((reset + time.Second - 1) / time.Second)
	j.Header = http.Header{
		"Ratelimit-Policy": {fmt.Sprintf(`"fault";q=%d;w=%d`, f.Limit, int64((f.Window+time.Second-1)/time.Second))},
		"Ratelimit":        {fmt.Sprintf(`"fault";r=0;t=%d`, secs)},
	}
	return true
}

// fill draws the request's delay and builds its headers.
func (in *Injector) fill(j *Injection, n int64, now time.Time) {
	f := j.Fault
	switch f.Kind {
	case Status, Outage, RateLimit:
		if j.Header == nil && (len(f.Header) > 0 || f.RetryAfter > 0) {
			j.Header = make(http.Header, len(f.Header)+1)
		}
		for k, v := range f.Header {
			j.Header[k] = v
		}
		if f.RetryAfter > 0 {
			j.Delay = f.RetryAfter
			if f.RetryAfterDate {
				j.Header.Set("Retry-After", now.Add(f.RetryAfter+time.Second-1).UTC().Format(http.TimeFormat))
			} else {
				j.Header.Set("Retry-After", strconv.FormatInt(int64((f.RetryAfter+time.Second-1)/time.Second), 10))
			}
		}
	case Reset, CutBody:
		j.Bytes = f.Bytes
		if j.Bytes == 0 {
			// A stream of its own (the seed mixed once more): the Rate's
			// draw picked this request, so it is not independent.
			j.Bytes = 1 + int64(draw(mix(in.Seed), uint64(j.Index), uint64(n))*MaxDrawnBytes)
		}
	default:
		j.Delay = f.Delay
		if f.Dist.Name != "" {
			src := rand.NewPCG(in.Seed, mix(uint64(j.Index)<<32^uint64(n)))
			j.Delay = f.Dist.Sample(rand.New(src))
		}
	}
}

// draw returns a number in [0, 1) that depends only on its arguments.
func draw(seed, i, n uint64) float64 {
	return float64(mix(seed^mix(i<<40^n))>>11) / (1 << 53)
}

// mix is SplitMix64's finalizer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Wait waits for d or until ctx ends, and returns ctx's error if it ended
// first. A d of 0 or less with waitForever waits for ctx alone.
func wait(ctx context.Context, d time.Duration, waitForever bool) error {
	if d <= 0 {
		if !waitForever {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
