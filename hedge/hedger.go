package hedge

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retry"
)

// Defaults of a Hedger whose fields are zero.
const (
	// DefaultQuantile is the latency quantile after which a hedge is sent
	// when no fixed delay is set: hedging at p95 costs about 5 % more
	// requests.
	DefaultQuantile = 0.95
	// DefaultWindow is how many recent latencies per key the quantile is
	// taken over.
	DefaultWindow = 200
	// DefaultWarmup is how many latencies a key needs before it is hedged by
	// quantile: with fewer, p95 would be a guess.
	DefaultWarmup = 20
	// DefaultMaxKeys bounds the keys that get a window of their own.
	DefaultMaxKeys = 1024
)

// ErrInvalid is matched (errors.Is) by the error of Hedger.Validate, a
// *FieldError, as retry.ErrInvalid is by a TokenBucket's.
var ErrInvalid = errors.New("hedge: invalid configuration")

// FieldError reports a field of Hedger whose value is outside its accepted
// range. It matches ErrInvalid with errors.Is. The zero FieldError names no
// field and is never returned.
type FieldError struct {
	Field    string // the field, e.g. "Hedger.Quantile"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted
}

// Error returns "hedge: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("hedge: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Hedger says when to send hedges, how many, and how many the traffic as a
// whole can afford. One Hedger is shared by every call to the same
// dependency: it keeps, per key (usually the host), a sliding window of the
// latencies of recent successful attempts, from which it takes the delay.
//
// The zero Hedger is ready to use: one hedge per attempt, sent once the
// attempt has run longer than the p95 of the key's last 200 successful
// latencies, and no hedging of a key until 20 latencies were seen. Set the
// fields before first use and do not change them afterwards. Validate
// reports a field out of range; Do calls it, but Attempt does not (it
// runs once per attempt, and the fields do not change), and hedges with
// such a field without an error: code that calls Attempt calls Validate
// once itself, before the first attempt. A Hedger is safe for concurrent
// use; it must not be copied after first use.
type Hedger struct {
	// After, if positive, is a fixed delay: a hedge is sent After into an
	// attempt, and another every After while none has answered. Zero means
	// the delay is the Quantile of recent latencies; negative means never
	// hedge.
	After time.Duration
	// Quantile, used when After is zero, is the quantile of the key's recent
	// successful latencies after which a hedge is sent, in (0, 1). Zero
	// means 0.95 (DefaultQuantile).
	Quantile float64
	// Window is how many of the key's latest samples the quantile is taken
	// over. Zero means 200 (DefaultWindow); otherwise it must be > 0.
	Window int
	// Warmup is how many samples a key needs before it is hedged by
	// quantile; until then its attempts are not hedged. Zero means 20
	// (DefaultWarmup); otherwise it must be between 1 and Window.
	Warmup int
	// MaxHedges is the most hedges per attempt, besides the attempt itself.
	// Zero means 1; negative means none.
	MaxHedges int
	// Budget, if not nil, pays for hedges: each hedge asks it first and is
	// sent only if it agrees, and each attempt that succeeds calls Success
	// once. A Budget with a method Take() bool (as *retry.TokenBucket and
	// the fleet module's shared *fleet.Budget have) is asked with Take,
	// which spends only when it grants; any other with Failure. A
	// retry.TokenBucket{TokenRatio: 0.1} so keeps hedges at about 10 % of
	// successful attempts at most, plus a burst of 4 (a Take must leave
	// more than half of MaxTokens, 10 by default), however slow the
	// dependency gets. Hedges asked for close together beyond the burst are
	// refused, and what successes refund to a full bucket is lost, so the
	// share sent may be well under the ratio. A Budget given here and to
	// the retry loop (retry.WithBudget) is refunded by both: give hedges a
	// bucket of their own. A Budget with a Validate() error method (as
	// *retry.TokenBucket has) is validated with the Hedger.
	Budget retry.Budget
	// Allow, if not nil, is asked before each hedge whether the key may take
	// one now: a circuit breaker that is not closed answers false. A false
	// answer sends no hedge and spends no Budget.
	Allow func(key string) bool
	// MaxKeys bounds the keys that get a latency window of their own; the
	// keys seen after that share one. Zero means 1024 (DefaultMaxKeys).
	MaxKeys int
	// OnHedge, if not nil, is called when a hedge is sent and when a hedge
	// wins (Event.Won), on the goroutine that coordinates the attempt: the
	// hedge timer's while the first copy runs on the calling goroutine
	// (see Attempt), never two at once for one attempt, but concurrently
	// for concurrent calls. It must not block: the attempt waits for it.
	OnHedge func(Event)

	racers   sync.Pool // of *racer[T], idle
	mu       sync.RWMutex
	windows  map[string]*window
	overflow window // the window of keys beyond MaxKeys
}

// Event describes a hedge: one sent, or one that won its attempt. It is
// passed to Hedger.OnHedge, by value; the zero Event describes nothing.
type Event struct {
	// Key is the key of the call.
	Key string
	// Attempt is the number of the retry loop's attempt that the hedge
	// belongs to, from 1.
	Attempt int
	// Hedge is which copy of the attempt this is: n ≥ 1 for the n-th hedge.
	Hedge int
	// Delay is how long after the attempt's first copy began this hedge was
	// sent.
	Delay time.Duration
	// Err is, for a hedge sent at once because a copy failed, that copy's
	// error; nil for a hedge sent because the delay passed, and for Won.
	Err error
	// Won is true for the event reporting that this hedge's answer is the
	// attempt's, and false for the event reporting that it was sent.
	Won bool
}

// Validate reports whether the fields are in range: the error, a
// *FieldError matching ErrInvalid, names the field, what it was and what is
// accepted. The Budget's own Validate error is returned as it is.
func (h *Hedger) Validate() error {
	bad := func(field string, v any, accepted string) error {
		return &FieldError{Field: "Hedger." + field, Value: fmt.Sprint(v), Accepted: accepted}
	}
	if q := h.Quantile; q != 0 && !(q > 0 && q < 1) {
		return bad("Quantile", q, fmt.Sprintf("in (0, 1) (0 means %v)", DefaultQuantile))
	}
	if h.Window < 0 {
		return bad("Window", h.Window, fmt.Sprintf("> 0 (0 means %d)", DefaultWindow))
	}
	if w := h.window(); h.Warmup < 0 || h.Warmup > w {
		return bad("Warmup", h.Warmup, fmt.Sprintf("between 1 and Window, %d (0 means %d)", w, min(DefaultWarmup, w)))
	}
	if h.MaxKeys < 0 {
		return bad("MaxKeys", h.MaxKeys, fmt.Sprintf("> 0 (0 means %d)", DefaultMaxKeys))
	}
	if v, ok := h.Budget.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (h *Hedger) window() int {
	if h.Window > 0 {
		return h.Window
	}
	return DefaultWindow
}

func (h *Hedger) warmup() int {
	if h.Warmup > 0 {
		return h.Warmup
	}
	return min(DefaultWarmup, h.window())
}

func (h *Hedger) quantile() float64 {
	if h.Quantile > 0 {
		return h.Quantile
	}
	return DefaultQuantile
}

// hedges returns the most hedges an attempt may send.
func (h *Hedger) hedges() int {
	switch {
	case h.After < 0 || h.MaxHedges < 0:
		return 0
	case h.MaxHedges == 0:
		return 1
	}
	return h.MaxHedges
}

// spend asks the Budget for a hedge.
func (h *Hedger) spend() bool {
	if t, ok := h.Budget.(interface{ Take() bool }); ok {
		return t.Take()
	}
	return h.Budget.Failure()
}

// Delay returns how long an attempt to key runs before its first hedge is
// sent, and false if key's attempts are not hedged now (hedging is off, or
// the key has fewer samples than Warmup).
func (h *Hedger) Delay(key string) (time.Duration, bool) {
	if h.hedges() == 0 {
		return 0, false
	}
	if h.After > 0 {
		return h.After, true
	}
	w := h.lookup(key)
	if w == nil {
		return 0, false
	}
	d := w.delay.Load()
	return time.Duration(d - 1), d > 0
}

// Observe records that an attempt to key succeeded in d, as Attempt does
// for its winners. Code that makes attempts without Attempt calls it to
// feed the delay. Failures must not be observed: a failure that comes fast
// would pull the quantile down and send hedges too early.
func (h *Hedger) Observe(key string, d time.Duration) {
	if h.After != 0 || h.hedges() == 0 {
		return // a fixed delay, or no hedging: nothing reads the window
	}
	w := h.lookup(key)
	if w == nil {
		w = h.create(key)
	}
	w.add(d, h.window(), h.warmup(), h.quantile())
}

// lookup returns key's window, or nil if it has none yet.
func (h *Hedger) lookup(key string) *window {
	h.mu.RLock()
	w := h.windows[key]
	full := len(h.windows) >= h.maxKeys()
	h.mu.RUnlock()
	if w == nil && full {
		return &h.overflow
	}
	return w
}

func (h *Hedger) maxKeys() int {
	if h.MaxKeys > 0 {
		return h.MaxKeys
	}
	return DefaultMaxKeys
}

func (h *Hedger) create(key string) *window {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.windows[key]; w != nil {
		return w
	}
	if len(h.windows) >= h.maxKeys() {
		return &h.overflow
	}
	if h.windows == nil {
		h.windows = make(map[string]*window)
	}
	w := &window{}
	h.windows[key] = w
	return w
}

// window is a key's latest latencies, in a ring, and the quantile of them
// that is the delay. The delay is recomputed every few samples rather than
// at each (a sort of the window), and read without a lock.
type window struct {
	mu      sync.Mutex
	ring    []time.Duration
	scratch []time.Duration
	n       int          // samples ever added
	stale   int          // samples added since the delay was computed
	delay   atomic.Int64 // the delay plus 1ns, so that 0 means "not warm yet"
}

func (w *window) add(d time.Duration, size, warmup int, q float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ring == nil {
		w.ring = make([]time.Duration, size)
		w.scratch = make([]time.Duration, 0, size)
	}
	w.ring[w.n%size] = d
	w.n++
	w.stale++
	if w.n < warmup || (w.n > warmup && w.stale < max(1, size/16)) {
		return
	}
	w.stale = 0
	m := min(w.n, size)
	s := append(w.scratch[:0], w.ring[:m]...)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(m))) - 1
	w.delay.Store(int64(s[max(0, min(i, m-1))]) + 1)
}
