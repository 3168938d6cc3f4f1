package fleet

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
	"github.com/redis/go-redis/v9"
)

// ThrottleConfig configures a Throttle. Only Client and Key are required;
// every zero field has the documented default.
type ThrottleConfig struct {
	// Client is the Redis (or Valkey) client, with ContextTimeoutEnabled
	// set, as for BudgetConfig.Client. The Throttle does not close it.
	Client redis.UniversalClient
	// Key names the throttle: every process that uses the same Key on the
	// same Redis throttles on the same counts. They are stored under
	// "again:{Key}:throttle:N", one hash per bucket N of the window (a
	// hash tag: one Redis Cluster slot), each expiring once it has left
	// the window. It must be non-empty, without '{' or '}'.
	Key string
	// Throttle is the rule (K, Window, Buckets, MaxP, MinRequests, Rand),
	// applied both to this process's own counts and to the fleet's. Its
	// Clock must be nil: the fleet's buckets are numbered on the wall
	// clock, which every process shares.
	Throttle throttle.Config
	// Timeout bounds each Redis round trip once connected: zero means
	// DefaultTimeout (50 ms); negative is rejected.
	Timeout time.Duration
	// ConnectTimeout bounds the first connection, which NewThrottle
	// starts at once: the requests asked for within ConnectTimeout of
	// NewThrottle wait for it, so that a process does not decide on its
	// own counts alone while the fleet's are on the way. Zero means
	// DefaultConnectTimeout (1 s); negative is rejected.
	ConnectTimeout time.Duration
	// FlushInterval is how often this process's counts are added to the
	// fleet's and the fleet's read back, in one round trip: zero means
	// DefaultFlushInterval (100 ms); negative is rejected.
	FlushInterval time.Duration
	// Logger receives one line each time the Throttle switches between
	// the fleet's counts and its own, naming why Redis cannot be used.
	// Nil means slog.Default().
	Logger *slog.Logger
}

// Throttle is the SRE book's client-side throttle (throttle.Throttler)
// shared by a fleet: every process counts its requests (when their outcome
// is known, as a Throttler does: a request in flight counts for nothing)
// and accepts locally, adds them to the fleet's counts in Redis every
// FlushInterval and reads the fleet's back, and rejects each request with
// probability max(p_local, p_fleet), where p_fleet is the SRE formula over
// the fleet's counts. A thousand processes then throttle on the fleet's
// accept ratio, and a process whose own traffic is too small to judge
// still holds back when the fleet sees the dependency overloaded.
// Decisions never wait for Redis (except within ConnectTimeout of
// NewThrottle: connect before deciding); they read the last answer.
//
// When Redis cannot be used (no answer within Timeout, connection refused
// or lost, wrong password, out of memory, ...), the Throttle keeps the
// last p_fleet it saw for one Window, then decides on its own counts:
// it rejects as much as a local throttle.Throttler with the same Config
// would, or more, never less. It logs one line naming the cause (never a
// password), tries Redis again every FlushInterval, and logs one more when
// it can use it again: when a flush has written its counts, since a Redis
// that is full still answers reads. Counts made while Redis cannot be used are not
// sent later: they belong to buckets the fleet has moved past.
//
// A Throttle is a retry.Admitter, for retry.WithAdmitter and a
// throttle.Group's New. It is safe for concurrent use. Create it with
// NewThrottle and Close it when done; the zero Throttle is not usable.
type Throttle struct {
	client   redis.UniversalClient
	prefix   string
	local    *throttle.Throttler
	k        float64
	maxP     float64 // the cap on the fleet's p, as on a Throttler's
	buckets  int
	width    time.Duration
	window   time.Duration
	timeout  time.Duration
	interval time.Duration
	logger   *slog.Logger
	secrets  redactor

	opened    time.Time
	connectBy time.Time
	reached   atomic.Bool

	requests, accepts atomic.Int64  // counted since the last flush
	fleetP            atomic.Uint64 // float64 bits of the last p_fleet
	fleetAccepts      atomic.Int64  // the accepts in the fleet's window, as last read
	answered          atomic.Int64  // unix nanoseconds of the last answer
	shared            atomic.Bool

	ctx       context.Context
	cancel    context.CancelFunc
	warm      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ retry.Admitter = (*Throttle)(nil)

// NewThrottle returns a Throttle on cfg.Client, validated, whose flushing
// goroutine runs until Close; it starts connecting at once, in the
// background. Errors match ErrInvalid and name the field.
func NewThrottle(cfg ThrottleConfig) (*Throttle, error) {
	if err := checkStore("ThrottleConfig", cfg.Client, cfg.Key); err != nil {
		return nil, err
	}
	if cfg.Throttle.Clock != nil {
		return nil, &configError{"ThrottleConfig.Throttle.Clock must be nil: the fleet's buckets are on the wall clock"}
	}
	local, err := throttle.New(cfg.Throttle)
	if err != nil {
		return nil, &configError{"ThrottleConfig.Throttle: " + err.Error()}
	}
	timeout, err := duration("ThrottleConfig.Timeout", cfg.Timeout, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	interval, err := duration("ThrottleConfig.FlushInterval", cfg.FlushInterval, DefaultFlushInterval)
	if err != nil {
		return nil, err
	}
	connect, err := duration("ThrottleConfig.ConnectTimeout", cfg.ConnectTimeout, DefaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	k, buckets, window := cfg.Throttle.K, cfg.Throttle.Buckets, cfg.Throttle.Window
	if k == 0 {
		k = throttle.DefaultK
	}
	if buckets == 0 {
		buckets = throttle.DefaultBuckets
	}
	if window == 0 {
		window = throttle.DefaultWindow
	}
	maxP := cfg.Throttle.MaxP // the fleet's p is capped as a Throttler's
	if maxP == 0 {
		maxP = 1
	}
	now := time.Now()
	t := &Throttle{
		client: cfg.Client, prefix: "again:{" + cfg.Key + "}:throttle:", local: local,
		k: k, maxP: maxP, buckets: buckets, width: window / time.Duration(buckets), window: window,
		timeout: timeout, interval: interval,
		logger:  logger.With(slog.String("throttle", cfg.Key)),
		secrets: clientSecrets(cfg.Client),
		opened:  now, connectBy: now.Add(connect),
		warm: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.shared.Store(true)
	go t.flushLoop()
	return t, nil
}

// Admit asks for one request now: nil if it may be sent, then reported
// with Done, or a *throttle.RejectedError (matching throttle.ErrRejected)
// if it is rejected, with probability max(p_local, p_fleet). Within
// ConnectTimeout of NewThrottle it waits for the first answer from Redis
// (at most until ConnectTimeout has passed, or ctx ends); otherwise it
// never waits.
func (t *Throttle) Admit(ctx context.Context) error {
	now := time.Now()
	if now.Before(t.connectBy) {
		awaitWarm(t.warm, t.connectBy, ctx.Done())
		now = time.Now()
	}
	err := t.local.AdmitFloor(now, t.floor(now))
	// A request sent counts when Done reports its outcome, as a
	// Throttler counts it: in flight, it would be a request without an
	// accept in the fleet's counts.
	if re, ok := err.(*throttle.RejectedError); ok && (re.Accepts != 0 || t.fleetAccepts.Load() != 0) {
		// A rejection while neither this process's window nor the
		// fleet's holds an accept is not counted, as a Throttler does not
		// count it (throttle's cold start): the fleet's counts would
		// otherwise keep it shut long after the dependency recovered.
		t.requests.Add(1)
	}
	return err
}

// floor is p_fleet as it may be used now: the last answer's while Redis
// can be used, and for one Window after it could not.
func (t *Throttle) floor(now time.Time) float64 {
	at := t.answered.Load()
	if at == 0 || now.UnixNano()-at > int64(t.window) {
		return 0
	}
	return math.Float64frombits(t.fleetP.Load())
}

// Done reports how an admitted request ended: overloaded for an overload
// signal, otherwise it counts as accepted, locally and for the fleet.
func (t *Throttle) Done(overloaded bool) {
	t.local.Done(overloaded)
	t.requests.Add(1)
	if !overloaded {
		t.accepts.Add(1)
	}
}

// ThrottleStats is what a Throttle knows, as Stats returns it.
type ThrottleStats struct {
	// Local is this process's own counts.
	Local throttle.Stats
	// FleetP is the probability of rejection from the fleet's counts, as
	// last read (0 once it is older than the Window).
	FleetP float64
	// Shared is true while Redis can be used.
	Shared bool
}

// P returns the probability with which the next request is rejected now:
// max(p_local, p_fleet).
func (t *Throttle) P() float64 {
	return max(t.local.Snapshot().P, t.floor(time.Now()))
}

// Stats returns the counts now.
func (t *Throttle) Stats() ThrottleStats {
	return ThrottleStats{Local: t.local.Snapshot(), FleetP: t.floor(time.Now()), Shared: t.Shared()}
}

// Shared reports whether Redis can be used: the fleet's counts are fresh.
func (t *Throttle) Shared() bool { return t.shared.Load() }

// Close stops the flushing goroutine. Admit and Done still work after it,
// on this process's counts and the last fleet answer. It returns nil; the
// error result is for symmetry with Budget.Close. Calling it again does
// nothing.
func (t *Throttle) Close() error {
	t.closeOnce.Do(func() {
		t.cancel()
		close(t.stop)
		<-t.done
	})
	return nil
}

func (t *Throttle) flushLoop() {
	defer close(t.done)
	t.flush(t.connectBy)
	close(t.warm)
	tk := time.NewTicker(t.interval)
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
			t.flush(time.Now().Add(t.timeout))
		}
	}
}

// flush adds the counts made since the last flush to the fleet's, in the
// current bucket, and reads the fleet's sums over the window back.
func (t *Throttle) flush(deadline time.Time) {
	ctx, cancel := context.WithDeadline(t.ctx, deadline)
	defer cancel()
	r, a := t.requests.Swap(0), t.accepts.Swap(0)
	now := time.Now()
	e := now.UnixNano() / int64(t.width)
	keys := make([]string, t.buckets)
	for i := range keys {
		// The newest bucket first: the script adds to KEYS[1].
		keys[i] = t.prefix + strconv.FormatInt(e-int64(i), 10)
	}
	ttl := (t.window + t.width).Milliseconds()
	v, err := throttleScript.Run(ctx, t.client, keys, r, a, ttl).Int64Slice()
	if err == nil && len(v) != 2 {
		err = &configError{"the throttle script answered " + strconv.Itoa(len(v)) + " values, want 2"}
	}
	if err != nil {
		if t.ctx.Err() == nil {
			t.fallBack(err)
		}
		return
	}
	if r == 0 && a == 0 && !t.shared.Load() {
		// A flush that wrote nothing proves only that Redis answers a
		// read: a full one does, and refuses the next write. Switching
		// back on it would flap between the fleet's counts and this
		// process's, a line each time; stay local until a write goes
		// through.
		return
	}
	t.reached.Store(true)
	req, acc := float64(v[0]), float64(v[1])
	p := min(max(0, (req-t.k*acc)/(req+1)), t.maxP)
	t.fleetP.Store(math.Float64bits(p))
	t.fleetAccepts.Store(v[1])
	t.answered.Store(now.UnixNano())
	if t.shared.CompareAndSwap(false, true) {
		t.logger.LogAttrs(context.Background(), slog.LevelInfo, throttleAgainMsg)
	}
}

const throttleAgainMsg = "fleet: Redis can be used again; throttling uses the fleet's counts"

// fallBack switches to this process's counts, logging once per switch.
func (t *Throttle) fallBack(err error) {
	if !t.shared.CompareAndSwap(true, false) {
		return
	}
	c := cause(err)
	if c == "timeout" {
		wait := t.timeout
		if !t.reached.Load() {
			wait = t.connectBy.Sub(t.opened)
		}
		c += ": no answer within " + wait.String()
	}
	t.logger.LogAttrs(context.Background(), slog.LevelWarn,
		cannotUseMsg+" ("+c+"); throttling uses this process's counts, and the fleet's last for one window, until it can",
		slog.String("error", t.secrets.text(err)))
}

// throttleScript adds ARGV[1] requests and ARGV[2] accepts to the bucket
// KEYS[1], which expires after ARGV[3] ms, and returns the sums over
// every KEYS: the fleet's counts over the window.
var throttleScript = redis.NewScript(`
local r, a = tonumber(ARGV[1]), tonumber(ARGV[2])
if r > 0 or a > 0 then
  redis.call('HINCRBY', KEYS[1], 'r', r)
  redis.call('HINCRBY', KEYS[1], 'a', a)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
local sr, sa = 0, 0
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'r', 'a')
  sr = sr + (tonumber(v[1]) or 0)
  sa = sa + (tonumber(v[2]) or 0)
end
return {sr, sa}
`)
