package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/redis/go-redis/v9"
)

// BreakerStoreConfig configures a BreakerStore. Client and Key are
// required.
type BreakerStoreConfig struct {
	// Client is the Redis (or Valkey) client, with ContextTimeoutEnabled
	// set, as for BudgetConfig.Client. The store does not close it.
	Client redis.UniversalClient
	// Key names the breaker: every process whose breaker uses the same
	// Key on the same Redis shares one state. It is stored under
	// "again:{Key}:breaker" (a hash) and "again:{Key}:probe" (the probe's
	// claim), one hash tag, so it works on Redis Cluster. It must be
	// non-empty, without '{' or '}'.
	Key string
	// Timeout bounds each Redis round trip: zero means DefaultTimeout
	// (50 ms); negative is rejected. When Redis does not answer in time
	// the breaker decides alone, with the same rules, until it does.
	Timeout time.Duration
	// ConnectTimeout bounds the round trips made within ConnectTimeout
	// of NewBreakerStore, which include the first connection's dial and
	// handshake: they wait until then rather than Timeout. Zero means
	// DefaultConnectTimeout (1 s); negative is rejected.
	ConnectTimeout time.Duration
	// Logger receives one line, naming the cause, each time Redis cannot
	// be used, and one when it can again. Nil means slog.Default().
	Logger *slog.Logger
}

// BreakerStore is a breaker.Shared on Redis: set it as breaker.Config.Shared
// and the breakers of every process that uses the same Key share one
// state. When one process trips, the others see the breaker open until the
// same moment on the Redis server's clock (TIME, never the hosts'); when
// the open period ends, exactly one probe runs across the fleet (a claim
// taken with SET NX PX for breaker.Config.ProbeTimeout), and its outcome
// closes or reopens the breaker for all.
//
// Every method is one Lua script on one hash tag, atomic on the server,
// bounded by Timeout. No lock is held while a caller's operation runs: the
// probe's claim is a key that expires, not a lock around the call, and the
// breaker only reaches Redis on its transitions and at most once per
// breaker.Config.SharedRefresh, never on the closed state's success path.
//
// A BreakerStore is safe for concurrent use and holds no goroutine; the
// zero BreakerStore is not usable: call NewBreakerStore or
// OpenBreakerStore.
type BreakerStore struct {
	client    redis.UniversalClient
	key       string
	keys      []string
	timeout   time.Duration
	connectBy time.Time // end of the first connection's longer wait
	logger    *slog.Logger
	base      *slog.Logger // logger without the breaker's name, for Named
	secrets   redactor     // passwords to keep out of the log
	down      atomic.Bool  // the last round trip failed
	owned     bool         // client made by OpenBreakerStore: Close closes it
}

var _ breaker.Shared = (*BreakerStore)(nil)

// NewBreakerStore returns a BreakerStore on cfg.Client. It makes no round
// trip. Errors match ErrInvalid and name the field.
func NewBreakerStore(cfg BreakerStoreConfig) (*BreakerStore, error) {
	if err := checkStore("BreakerStoreConfig", cfg.Client, cfg.Key); err != nil {
		return nil, err
	}
	timeout, err := duration("BreakerStoreConfig.Timeout", cfg.Timeout, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	connect, err := duration("BreakerStoreConfig.ConnectTimeout", cfg.ConnectTimeout, DefaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &BreakerStore{
		client:    cfg.Client,
		timeout:   timeout,
		connectBy: time.Now().Add(connect),
		base:      logger,
		secrets:   clientSecrets(cfg.Client),
	}
	s.setKey(cfg.Key)
	return s, nil
}

func (s *BreakerStore) setKey(key string) {
	tag := "again:{" + key + "}:"
	s.key = key
	s.keys = []string{tag + "breaker", tag + "probe"}
	s.logger = s.base.With(slog.String("breaker", key))
}

// Named returns a BreakerStore on the same client and settings for the
// breaker named Key + "/" + name, such as one per host for a
// breaker.Group's Shared:
//
//	group := &breaker.Group{Shared: func(host string) breaker.Shared { return store.Named(host) }}
//
// Braces in name, which would break the hash tag, become underscores.
// Closing the BreakerStore that Named returns does nothing; close s.
func (s *BreakerStore) Named(name string) *BreakerStore {
	n := &BreakerStore{client: s.client, timeout: s.timeout, connectBy: s.connectBy,
		base: s.base, secrets: s.secrets}
	n.setKey(s.key + "/" + strings.NewReplacer("{", "_", "}", "_").Replace(name))
	return n
}

// Close closes the client that OpenBreakerStore made; for a store from
// NewBreakerStore or Named it does nothing. The store must not be used
// afterwards.
func (s *BreakerStore) Close() error {
	if !s.owned {
		return nil
	}
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("fleet: closing the Redis client: %w", err)
	}
	return nil
}

// Load implements breaker.Shared: the fleet's state, in one round trip.
func (s *BreakerStore) Load(ctx context.Context) (breaker.SharedState, error) {
	st, _, err := s.run(ctx, "load")
	return st, err
}

// Update implements breaker.Shared: a compare-and-set on the version, in
// one round trip; next.Wait counts from the Redis server's now.
func (s *BreakerStore) Update(ctx context.Context, ver uint64, next breaker.SharedState) (breaker.SharedState, error) {
	st, _, err := s.run(ctx, "update", ver, int(next.State), ceilMillis(next.Wait), next.Trips)
	return st, err
}

// Probe implements breaker.Shared: the fleet's one probe claim, taken with
// SET NX PX for ttl, in one round trip. The claim always expires, so that
// a probe whose process dies before reporting holds up the fleet's breaker
// for ttl at most. A breaker always passes a positive ttl: its
// Config.ProbeTimeout, or breaker.DefaultProbeTimeout (10 s) when that is
// zero or negative. A direct caller's ttl <= 0 is replaced the same way;
// without an expiry, a dead prober's claim would keep the fleet's breaker
// open until someone called Reset or Isolate.
func (s *BreakerStore) Probe(ctx context.Context, ver uint64, ttl time.Duration) (breaker.SharedState, bool, error) {
	if ttl <= 0 {
		ttl = breaker.DefaultProbeTimeout
	}
	return s.run(ctx, "probe", ver, ceilMillis(ttl))
}

// ceilMillis rounds d up to whole milliseconds, the script's unit, so that
// an open period is never shortened; negative durations become 0.
func ceilMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func (s *BreakerStore) run(ctx context.Context, op string, args ...any) (breaker.SharedState, bool, error) {
	deadline := time.Now().Add(s.timeout)
	if s.connectBy.After(deadline) {
		deadline = s.connectBy
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	v, err := breakerScript.Run(ctx, s.client, s.keys, append([]any{op}, args...)...).Int64Slice()
	if err != nil {
		if !s.down.Swap(true) {
			c := cause(err)
			if c == "timeout" {
				c += ": no answer within " + s.timeout.String()
			}
			s.logger.LogAttrs(ctx, slog.LevelWarn,
				cannotUseMsg+" ("+c+"); the breaker decides alone until it can",
				slog.String("error", s.secrets.text(err)))
		}
		return breaker.SharedState{}, false, s.secrets.err(fmt.Errorf("fleet: breaker %s: %w", op, err))
	}
	if s.down.Swap(false) {
		s.logger.LogAttrs(ctx, slog.LevelInfo, "fleet: Redis can be used again; the breaker's state is the fleet's")
	}
	if len(v) != 5 || v[0] < 0 || v[0] > math.MaxInt8 || v[3] < 0 {
		return breaker.SharedState{}, false, fmt.Errorf("fleet: breaker %s: unexpected answer %v", op, v)
	}
	st := breaker.SharedState{
		State:   breaker.State(v[0]),
		Wait:    time.Duration(v[1]) * time.Millisecond,
		Trips:   int(v[2]),
		Version: uint64(v[3]),
	}
	return st, v[4] == 1, nil
}

// breakerScript is every BreakerStore operation: it reads the breaker's
// hash, applies ARGV[1]'s operation on the server's clock, and returns
// {state, wait ms, trips, version, claimed}.
//
// KEYS[1]: the hash (state, trips, ver, until: the end of the open period
// in ms of the server's TIME). KEYS[2]: the probe's claim.
// load: nothing more. update ver state wait_ms trips: if ver is the
// stored version, store the new state, until = now + wait, version + 1,
// and release the claim. probe ver ttl_ms: if ver is the stored version,
// the state is open and its period over, take the claim with SET NX PX
// ttl (Probe makes ttl positive: a claim always expires); claimed is 1 if
// it was taken.
var breakerScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', KEYS[1], 'state', 'trips', 'ver', 'until')
local state = tonumber(f[1]) or 0
local trips = tonumber(f[2]) or 0
local ver = tonumber(f[3]) or 0
local untl = tonumber(f[4]) or 0
local OPEN = ` + fmt.Sprint(int(breaker.Open)) + `
local claimed = 0
if ARGV[1] == 'update' then
	if tonumber(ARGV[2]) == ver then
		ver = ver + 1
		state = tonumber(ARGV[3])
		untl = now + tonumber(ARGV[4])
		trips = tonumber(ARGV[5])
		redis.call('HSET', KEYS[1], 'state', state, 'trips', trips,
			'ver', string.format('%d', ver), 'until', string.format('%d', untl))
		redis.call('DEL', KEYS[2])
	end
elseif ARGV[1] == 'probe' then
	if tonumber(ARGV[2]) == ver and state == OPEN and untl <= now then
		if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then claimed = 1 end
	end
end
local wait = 0
if state == OPEN then wait = untl - now end
return {state, wait, trips, ver, claimed}
`)
