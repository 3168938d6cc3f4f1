package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retry"
	"github.com/redis/go-redis/v9"
)

// Defaults of a BudgetConfig (and BreakerStoreConfig) whose fields are zero.
const (
	// DefaultTimeout bounds every Redis round trip: a decision that Redis
	// has not answered by then is made locally.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultFlushInterval is how often successes counted locally are sent
	// to Redis, in one round trip.
	DefaultFlushInterval = 100 * time.Millisecond
	// DefaultConnectTimeout bounds the connection that opening a Budget
	// starts (dial, TLS, AUTH, script load): the decisions made before it
	// is ready wait for it, up to this long after the Budget was made.
	DefaultConnectTimeout = time.Second
)

// The same defaults as retry's local token bucket (gRPC's usual values).
const (
	defaultMaxTokens  = retry.DefaultMaxTokens
	defaultTokenRatio = retry.DefaultTokenRatio
)

// milli is the fixed-point scale of the shared token count, as in retry's
// local bucket: gRPC specifies TokenRatio to three decimal places.
const milli = 1000

// ErrInvalid is matched (errors.Is) by every error that NewBudget,
// NewBreakerStore, ParseURL and OpenBudget return for a configuration they
// reject (the name every package of the module gives that error).
var ErrInvalid = errors.New("fleet: invalid configuration")

// configError names the field that was wrong and what is accepted.
type configError struct{ msg string }

func (e *configError) Error() string { return "fleet: " + e.msg }
func (e *configError) Is(target error) bool {
	return target == ErrInvalid
}

// BudgetConfig configures a Budget. Only Client and Key are required; every
// zero field has the documented default.
type BudgetConfig struct {
	// Client is the Redis (or Valkey) client, a *redis.Client,
	// *redis.ClusterClient or *redis.Ring. It must have
	// ContextTimeoutEnabled set, so that Timeout bounds each round trip
	// (without it go-redis waits up to its ReadTimeout whatever the
	// context says); OpenBudget makes such a client. The Budget does not
	// close it.
	Client redis.UniversalClient
	// Key names the budget: every process that uses the same Key on the
	// same Redis shares one bucket. It is stored under the Redis key
	// "again:{Key}:budget" (a hash tag, so it works on Redis Cluster) and
	// must be non-empty, without '{' or '}'.
	Key string
	// MaxTokens is the bucket's capacity, as in retry.TokenBucket: zero
	// means 10; otherwise it must be a finite number > 0.
	MaxTokens float64
	// TokenRatio is the number of tokens each success refunds, as in
	// retry.TokenBucket, such as 0.1 for a tenth of a token: zero means 0.1;
	// otherwise it must be a finite number > 0. The bucket counts in
	// thousandths of a token, rounding to the nearest, so a ratio below
	// 0.001 refunds 0.001.
	TokenRatio float64
	// Timeout bounds each Redis round trip once connected: zero means
	// DefaultTimeout (50 ms); negative is rejected.
	Timeout time.Duration
	// ConnectTimeout bounds the first connection, which NewBudget starts
	// at once: a decision made within ConnectTimeout of NewBudget waits
	// for that connection until then, and for its own answer until then
	// or Timeout after the connection is ready, whichever is later, so
	// that a process starting cold on a busy machine (when storms happen)
	// still decides on the shared bucket. Zero means
	// DefaultConnectTimeout (1 s); negative is rejected.
	ConnectTimeout time.Duration
	// FlushInterval is how often successes counted locally are sent to
	// Redis: zero means DefaultFlushInterval (100 ms); negative is
	// rejected. While Redis is unreachable it is also how often the Budget
	// tries it again.
	FlushInterval time.Duration
	// Logger receives one line each time the Budget switches between the
	// shared and the local bucket, naming why Redis cannot be used. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Budget is a retry budget shared by every process that uses the same
// Redis and Key: gRPC A6's token bucket (retry.TokenBucket's rule), held
// in Redis so that a fleet of N processes retries as much as one process
// would, not N times as much. It implements retry.Budget (Success and
// Failure); FailureCost, through which retry charges a class of failure
// its own cost (retry.Class.Cost: a class of cost 5 takes 5 tokens from
// the bucket every process shares, as from a retry.TokenBucket); and
// Take, which package hedge asks for a hedge's token, so that hedges
// refused by a spent bucket cost the fleet nothing.
//
// Round trips: Success never waits for Redis; successes are counted in memory
// and sent every FlushInterval in one round trip by a goroutine that Close
// stops. Failure, a retry decision, costs at most one round trip: one Lua
// script on one key, atomic on the server, which also carries this
// process's successes not yet sent. Concurrent decisions share round
// trips (the calls that arrive while one is in flight go together in the
// next), with the same answers as one at a time. The shared bucket
// therefore sees another process's successes up to FlushInterval late,
// and its failures at once. No tokens are leased: the fleet never retries
// more than one bucket allows.
//
// Opening: NewBudget starts connecting at once (dial, TLS, AUTH/HELLO,
// script load, and one read of the shared level). A decision made within
// ConnectTimeout of NewBudget waits for that connection until
// ConnectTimeout has passed, then for its answer until then or Timeout
// after the connection is ready, whichever is later (a connection ready
// only as ConnectTimeout ends still leaves the decision Timeout); later
// decisions wait at most Timeout.
//
// When Redis cannot be used (no answer within the wait above, connection
// refused or lost, wrong password, ACL denied, out of memory, a read-only
// replica, a key of the wrong type, ...), no call waits longer, and the
// Budget decides with a local bucket of the same settings that is never
// full: it starts from the lower of the last level this process saw in
// Redis and just enough tokens for one retry. So a process that falls
// back makes at most one retry until its own successes refill its bucket
// (with the default ratio, ten successes per token), and none if the
// shared bucket it last saw was already spent: a fleet whose Redis fails
// mid-storm stays near one budget, and one whose Redis was never reachable
// makes at most one retry per process. The Budget logs one line naming
// the cause, tries Redis again every FlushInterval, and the next answer
// switches it back, with one more line. A script missing after a failover
// or SCRIPT FLUSH is loaded again (EVALSHA, then EVAL on NOSCRIPT).
// Failures decided locally are not sent to Redis later; successes are.
//
// A Budget is safe for concurrent use. Create it with NewBudget or
// OpenBudget and Close it when done; the zero Budget is not usable.
type Budget struct {
	client   redis.UniversalClient
	owned    bool // client made by OpenBudget: Close closes it
	keys     []string
	capArg   int64 // capacity in milli-tokens
	refund   int64 // refund per success in milli-tokens
	timeout  time.Duration
	interval time.Duration
	logger   *slog.Logger
	secrets  redactor     // passwords to keep out of the log
	local    *localBucket // decides while Redis cannot be used

	opened    time.Time   // when NewBudget made it
	connectBy time.Time   // end of the first connection's wait
	reached   atomic.Bool // Redis has answered once

	pending atomic.Int64 // successes not yet sent to Redis
	shared  atomic.Bool  // decisions use Redis (false: the local bucket)
	// modeMu orders the switch to the local bucket with the levels read
	// from Redis: the cautious level is set before any decision can see
	// the switch, and no answer from Redis raises it afterwards.
	modeMu sync.Mutex
	// switched, if not nil, runs when the switch to the local bucket has
	// become visible, before fallBack returns (tests).
	switched func()
	closed   atomic.Bool // Close began: decisions are local
	flushMu  sync.Mutex  // one flush at a time

	batchMu sync.Mutex
	running *batch // in flight, or nil
	open    *batch // waiting for running to end, open to joiners, or nil

	ctx       context.Context // cancelled by Close: ends the warm-up
	cancel    context.CancelFunc
	warm      chan struct{} // closed when the warm-up is over
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// NewBudget returns a Budget on cfg.Client, validated, whose flushing
// goroutine runs until Close. It does not wait for Redis: that goroutine
// connects and loads the script at once, in the background (see Budget
// for how the first decisions wait for it), and a server that cannot be
// used only makes decisions local until it can. Errors match ErrInvalid
// and name the field.
func NewBudget(cfg BudgetConfig) (*Budget, error) { return newBudget(cfg, nil, false) }

// newBudget is NewBudget with more passwords to keep out of the log, and
// whether Close closes the client: set before the goroutine starts.
func newBudget(cfg BudgetConfig, secrets redactor, owned bool) (*Budget, error) {
	if err := checkStore("BudgetConfig", cfg.Client, cfg.Key); err != nil {
		return nil, err
	}
	capArg, err := milliTokens("MaxTokens", cfg.MaxTokens, defaultMaxTokens)
	if err != nil {
		return nil, err
	}
	refund, err := milliTokens("TokenRatio", cfg.TokenRatio, defaultTokenRatio)
	if err != nil {
		return nil, err
	}
	timeout, err := duration("BudgetConfig.Timeout", cfg.Timeout, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	interval, err := duration("BudgetConfig.FlushInterval", cfg.FlushInterval, DefaultFlushInterval)
	if err != nil {
		return nil, err
	}
	connect, err := duration("BudgetConfig.ConnectTimeout", cfg.ConnectTimeout, DefaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	refund = max(1, refund)
	now := time.Now()
	b := &Budget{
		client:    cfg.Client,
		keys:      []string{"again:{" + cfg.Key + "}:budget"},
		capArg:    capArg,
		refund:    refund,
		timeout:   timeout,
		interval:  interval,
		logger:    logger.With(slog.String("budget", cfg.Key)),
		owned:     owned,
		secrets:   append(clientSecrets(cfg.Client), secrets...),
		local:     newLocalBucket(capArg, refund),
		opened:    now,
		connectBy: now.Add(connect),
		warm:      make(chan struct{}),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.shared.Store(true)
	go b.flushLoop()
	return b, nil
}

// checkStore validates the Client and Key fields that BudgetConfig and
// BreakerStoreConfig share; typ names the config type in the error.
func checkStore(typ string, c redis.UniversalClient, key string) error {
	if c == nil {
		return &configError{typ + ".Client must be a Redis client, got nil"}
	}
	if !contextTimeouts(c) {
		return &configError{"the Redis client must have ContextTimeoutEnabled set, so that " + typ + ".Timeout bounds each round trip"}
	}
	if !validKey(key) {
		return &configError{fmt.Sprintf("%s.Key must be a non-empty name without '{' or '}', got %q", typ, key)}
	}
	return nil
}

// contextTimeouts reports whether c's waits end at its context's deadline.
// Clients of other types are trusted.
func contextTimeouts(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

// validKey reports whether name can be a Key: its braces would break the
// hash tag that keeps a fleet's keys in one Redis Cluster slot.
func validKey(name string) bool {
	return name != "" && !strings.ContainsAny(name, "{}")
}

func milliTokens(field string, v, def float64) (int64, error) {
	switch {
	case v == 0:
		v = def
	case !(v > 0) || math.IsInf(v, 1):
		return 0, &configError{fmt.Sprintf("BudgetConfig.%s must be a finite number > 0, or 0 for the default %g, got %g", field, def, v)}
	}
	return toMilli(v), nil
}

func duration(field string, d, def time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return def, nil
	case d < 0:
		return 0, &configError{fmt.Sprintf("%s must be > 0, or 0 for the default %v, got %v", field, def, d)}
	}
	return d, nil
}

// Success records an attempt that succeeded. It makes no round trip and
// does not allocate: the success is sent to Redis with the next flush or
// retry decision.
func (b *Budget) Success() {
	b.local.success()
	b.pending.Add(1)
}

// Failure records an attempt that failed and could be retried, and
// reports whether the retry may be made, by the shared bucket in one round
// trip, or by the local bucket, without waiting, when Redis cannot be used
// (see Budget). It waits at most Timeout, or, within ConnectTimeout of
// NewBudget, until ConnectTimeout has passed or Timeout after the first
// connection is ready, whichever is later. Concurrent calls share round
// trips: while one is in flight, the calls that arrive meanwhile are
// decided together by the next.
func (b *Budget) Failure() bool { return b.ask(failure, milli) }

// FailureCost is Failure for a failure that costs cost tokens instead of
// one, as retry.TokenBucket.FailureCost: retry charges a class's Cost
// (retry.Class.Cost) through it, so that a class of cost 5 takes 5 tokens
// from the shared bucket, seen by every process of the fleet, and from the
// local bucket while Redis cannot be used. A cost that is not a number > 0
// takes nothing. It waits, shares round trips and falls back as Failure.
func (b *Budget) FailureCost(cost float64) bool { return b.ask(failure, costMilli(cost)) }

// Take takes one token from the shared bucket if more than half the tokens
// remain after it, and reports whether it did: retry.TokenBucket.Take's
// rule, which package hedge uses for a Hedger's Budget. Unlike Failure, a
// refusal takes nothing, so a bucket that refuses hedges refills with the
// successes. It waits, shares round trips and falls back to the local
// bucket as Failure does, and a Take decided locally is not sent to Redis.
func (b *Budget) Take() bool { return b.ask(take, milli) }

// The kinds of decision a batch carries, as indexes of its counts.
const (
	failure = iota // Failure: a token taken, a retry allowed or not
	take           // Take: a token taken only if one may be
)

// ask decides a Failure or a Take, by kind; a failure costs m milli-tokens.
func (b *Budget) ask(kind int, m int64) bool {
	if b.closed.Load() {
		return b.local.decide(kind, m)
	}
	now := time.Now()
	if now.Before(b.connectBy) {
		b.awaitWarm()
		// The decision's own wait starts once the first connection is
		// ready, not when it was asked: a connection ready late in the
		// connect window (a cold start on a busy machine) would
		// otherwise leave the round trip too little time, and the
		// decision would go to the local bucket, which allows a retry
		// that the spent shared bucket would not, though Redis answers.
		now = time.Now()
	}
	deadline := now.Add(b.timeout)
	if b.connectBy.After(deadline) {
		deadline = b.connectBy
	}
	if !b.shared.Load() {
		return b.local.decide(kind, m)
	}
	allow, err := b.decide(deadline, kind, m)
	if err != nil {
		b.fallBack(err)
		return b.local.decide(kind, m)
	}
	return allow
}

// awaitWarm waits for the first connection, which ends by connectBy.
func (b *Budget) awaitWarm() { awaitWarm(b.warm, b.connectBy, nil) }

// awaitWarm waits until warm is closed, by at most, or until done is
// closed (a nil done never is).
func awaitWarm(warm <-chan struct{}, by time.Time, done <-chan struct{}) {
	select {
	case <-warm:
		return
	default:
	}
	t := time.NewTimer(time.Until(by))
	defer t.Stop()
	select {
	case <-warm:
	case <-t.C:
	case <-done:
	}
}

// batch is one round trip's worth of decisions: n[failure] failures, the
// ith costing costs[i] milli-tokens, of which the first allowed[failure]
// may be retried, and n[take] takes, of which the first allowed[take] got
// a token (the bucket only empties along a batch, so the allowed ones come
// first, as they would one by one).
type batch struct {
	n       [2]int
	costs   []int64 // of the failures, in order
	allowed [2]int
	err     error
	done    chan struct{} // closed when allowed and err are set
}

// decide adds one decision of kind (a failure costing m milli-tokens, or
// a take) to the batch that will be sent next and waits for its answer,
// until deadline at most. At most one batch is in flight
// and one is open to joiners, so that concurrent decisions cost one round
// trip per batch instead of one each, and a decision waits for at most the
// round trip in flight and its own.
func (b *Budget) decide(deadline time.Time, kind int, m int64) (bool, error) {
	b.batchMu.Lock()
	if bt := b.open; bt != nil {
		i := bt.n[kind]
		bt.add(kind, m)
		b.batchMu.Unlock()
		<-bt.done
		return i < bt.allowed[kind], bt.err
	}
	bt := &batch{done: make(chan struct{})}
	bt.add(kind, m)
	if prev := b.running; prev != nil {
		// Lead the next batch: collect joiners until the one in flight ends.
		b.open = bt
		b.batchMu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-prev.done:
			t.Stop()
		case <-t.C:
		}
		b.batchMu.Lock()
		b.open = nil
	}
	b.running = bt
	costs, takes := bt.costs, bt.n[take]
	b.batchMu.Unlock()

	successes := b.pending.Swap(0)
	if time.Now().Before(deadline) {
		bt.allowed, bt.err = b.eval(deadline, successes, costs, takes)
	} else {
		bt.err = fmt.Errorf("the previous round trip took the whole wait: %w", context.DeadlineExceeded)
	}
	if bt.err != nil {
		b.pending.Add(successes)
	}
	b.batchMu.Lock()
	if b.running == bt {
		b.running = nil
	}
	b.batchMu.Unlock()
	close(bt.done)
	return 0 < bt.allowed[kind], bt.err
}

// add counts one decision of kind, a failure costing m milli-tokens or a
// take, with the Budget's batchMu held.
func (bt *batch) add(kind int, m int64) {
	bt.n[kind]++
	if kind == failure {
		bt.costs = append(bt.costs, m)
	}
}

// Shared reports whether the Budget's decisions currently use the shared
// bucket in Redis (true) or the local one because Redis cannot be used.
// It is true while the first connection is under way.
func (b *Budget) Shared() bool { return b.shared.Load() && !b.closed.Load() }

// SharedTokens returns the tokens in the shared bucket now, between 0 and
// MaxTokens, in one round trip bounded by ctx. Successes not yet flushed,
// by this process or others, are not counted.
func (b *Budget) SharedTokens(ctx context.Context) (float64, error) {
	used, err := b.client.Get(ctx, b.keys[0]).Int64()
	if errors.Is(err, redis.Nil) {
		used, err = 0, nil
	}
	if err != nil {
		return 0, b.secrets.err(fmt.Errorf("fleet: reading the shared budget: %w", err))
	}
	return float64(b.capArg-min(max(used, 0), b.capArg)) / milli, nil
}

// Close stops the flushing goroutine and sends the successes not yet sent,
// waiting at most Timeout (and not at all while Redis cannot be used). It
// returns the error of that last flush, if any. After Close, Success and Failure still work, on the local bucket
// only. Close does not close a client given in BudgetConfig; it closes the
// one that OpenBudget made. Calling Close again returns the same result.
func (b *Budget) Close() error {
	b.closeOnce.Do(func() {
		b.cancel()
		close(b.stop)
		<-b.done
		b.closed.Store(true) // decisions from now on are local
		b.flushMu.Lock()
		if n := b.pending.Swap(0); n > 0 && b.shared.Load() {
			if _, err := b.eval(time.Now().Add(b.timeout), n, nil, 0); err != nil {
				b.closeErr = b.secrets.err(fmt.Errorf("fleet: flushing %d successes on Close: %w", n, err))
			}
		}
		b.flushMu.Unlock()
		if b.owned {
			if err := b.client.Close(); err != nil && b.closeErr == nil {
				b.closeErr = fmt.Errorf("fleet: closing the Redis client: %w", err)
			}
		}
	})
	return b.closeErr
}

// flushLoop sends the pending successes every interval, and while Redis is
// unreachable, tries it every interval.
func (b *Budget) flushLoop() {
	defer close(b.done)
	b.warmUp()
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.flush()
		}
	}
}

// warmUp connects, loads the script and reads the shared level at once,
// until connectBy or Close, so that the first retry decision is one round
// trip on a ready connection rather than a dial, a handshake, an EVALSHA
// answered NOSCRIPT and an EVAL, which a cold start on a loaded machine
// may not fit in Timeout. Its one run of the script writes (it sends no
// success), so that a server that refuses writes (out of memory, a
// read-only replica) or holds a key of the wrong type is found before the
// first decision, which is then made locally without waiting.
func (b *Budget) warmUp() {
	defer close(b.warm)
	ctx, cancel := context.WithDeadline(b.ctx, b.connectBy)
	defer cancel()
	err := budgetScript.Load(ctx, b.client).Err()
	if err == nil {
		_, err = b.evalCtx(ctx, 0, nil, 0)
	}
	if err != nil && b.ctx.Err() == nil {
		b.fallBack(err)
	}
}

// flush sends the pending successes in one round trip. While the Budget
// decides locally it runs even with nothing pending: its answer is what
// switches the Budget back to the shared bucket.
func (b *Budget) flush() {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	shared := b.shared.Load()
	n := b.pending.Swap(0)
	if n == 0 && shared {
		return
	}
	if _, err := b.eval(time.Now().Add(b.timeout), n, nil, 0); err != nil {
		b.pending.Add(n)
		b.fallBack(err)
		return
	}
	if b.shared.CompareAndSwap(false, true) {
		b.logger.LogAttrs(context.Background(), slog.LevelInfo, sharedAgainMsg)
	}
}

// The log lines of a Budget's switches; tests and users grep for them.
const (
	cannotUseMsg   = "fleet: Redis cannot be used"
	sharedAgainMsg = "fleet: Redis can be used again; retry decisions use the shared budget"
)

// fallBack switches to the local bucket, at the cautious level, logging
// once per switch.
func (b *Budget) fallBack(err error) {
	// A decision in flight when Close closed the client is no news.
	if b.closed.Load() {
		return
	}
	b.modeMu.Lock()
	switching := b.shared.Load()
	if switching {
		// The cautious level first: a decision that finds the Budget
		// local must never find the bucket as it was (full, say).
		b.local.clamp()
		b.shared.Store(false)
		if b.switched != nil {
			b.switched()
		}
	}
	b.modeMu.Unlock()
	if switching {
		b.logger.LogAttrs(context.Background(), slog.LevelWarn,
			cannotUseMsg+" ("+b.describe(err)+"); retry decisions use a local budget of at most one retry until it can",
			slog.String("error", b.secrets.text(err)))
	}
}

// describe is the cause of err, with the wait it exceeded for a timeout.
func (b *Budget) describe(err error) string {
	c := cause(err)
	if c == "timeout" {
		wait := b.timeout
		if !b.reached.Load() {
			wait = b.connectBy.Sub(b.opened)
		}
		c += ": no answer within " + wait.String()
	}
	return c
}

// eval runs the budget script with successes, failures of the given
// costs (milli-tokens) and takes, until deadline, and returns how many of
// each kind of decision were allowed.
func (b *Budget) eval(deadline time.Time, successes int64, costs []int64, takes int) ([2]int, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	return b.evalCtx(ctx, successes, costs, takes)
}

// evalCtx is eval bounded by ctx. Each answer sets the local bucket's
// level to the shared one, the level it falls back from.
func (b *Budget) evalCtx(ctx context.Context, successes int64, costs []int64, takes int) ([2]int, error) {
	args := make([]any, 5, 5+len(costs))
	args[0], args[1], args[2], args[3], args[4] = b.capArg, b.refund, successes, len(costs), takes
	for _, c := range costs {
		args = append(args, c)
	}
	v, err := budgetScript.Run(ctx, b.client, b.keys, args...).Int64Slice()
	if err != nil {
		return [2]int{}, err
	}
	if len(v) != 3 {
		return [2]int{}, fmt.Errorf("fleet: the budget script answered %v, want {allowed, used, taken}", v)
	}
	b.reached.Store(true)
	// The level to fall back from is the last one seen while deciding on
	// Redis: an answer that comes after the switch (a round trip that was
	// in flight, or the flush that will switch back) must not refill the
	// cautious bucket.
	b.modeMu.Lock()
	if b.shared.Load() {
		b.local.set(v[1])
	}
	b.modeMu.Unlock()
	return [2]int{failure: int(v[0]), take: int(v[2])}, nil
}
