package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/redis/go-redis/v9"
)

// slack is what a loaded CI machine may add to a bounded wait: far less
// than the faults' own delays, so that a call that waited for the fault
// fails the test.
const slack = 150 * time.Millisecond

// decideBounded calls Failure n times, failing the test if one call takes
// longer than bound. It may run on any goroutine.
func decideBounded(t *testing.T, b *Budget, n int, bound time.Duration) {
	t.Helper()
	for i := range n {
		start := time.Now()
		b.Failure()
		if d := time.Since(start); d > bound {
			t.Errorf("Failure call %d took %v, want at most %v", i+1, d, bound)
			return
		}
	}
}

// beforeFault waits until b decides on the shared bucket (a loaded machine
// may have made a first decision miss its Timeout) and forgets the log, so
// that the log lines counted are the fault's.
func beforeFault(t *testing.T, b *Budget, log *logBuffer) {
	t.Helper()
	eventually(t, "shared before the fault", b.Shared)
	log.reset()
}

// lines counts the log lines containing s.
func lines(log *logBuffer, s string) int { return strings.Count(log.String(), s) }

const (
	lostLine    = "Redis cannot be used"
	resumedLine = "Redis can be used again"
)

// checkModes checks the log has one line per switch, and the switch back.
func checkModes(t *testing.T, log *logBuffer, lost, resumed int) {
	t.Helper()
	if l, r := lines(log, lostLine), lines(log, resumedLine); l != lost || r != resumed {
		t.Errorf("log has %d %q and %d %q lines, want %d and %d; log:\n%s", l, lostLine, r, resumedLine, lost, resumed, log)
	}
}

func TestKill9AndRestart(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	var log logBuffer
	// A server killed refuses connections at once; the Timeout is for a
	// loaded machine's scheduling.
	const timeout = 200 * time.Millisecond
	b := newTestBudget(t, BudgetConfig{Client: c, Timeout: timeout, ConnectTimeout: timeout, FlushInterval: 10 * time.Millisecond, Logger: log.logger()})
	decideBounded(t, b, 3, time.Second)
	beforeFault(t, b, &log)

	s.Kill()
	decideBounded(t, b, 50, timeout+slack)
	for range 20 {
		b.Success() // counted while Redis is down, flushed when it is back
	}
	if b.Shared() {
		t.Fatal("Shared() = true with the server killed")
	}

	s.Restart()
	eventually(t, "shared again after the restart", b.Shared)
	checkModes(t, &log, 1, 1)
	// The restarted server is empty (it saves nothing): the budget
	// starts again from a full bucket there, and decisions reach it.
	if !b.Failure() {
		t.Error("first failure on the restarted server: Failure() = false, want true")
	}
	got, err := b.SharedTokens(context.Background())
	if err != nil || got != 9 {
		t.Errorf("SharedTokens after restart = %v, %v; want 9 (one failure)", got, err)
	}
}

func TestSlowRedis(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr())
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	var log logBuffer
	const timeout = 100 * time.Millisecond
	b := newTestBudget(t, BudgetConfig{Client: c, Timeout: timeout, ConnectTimeout: timeout, FlushInterval: 10 * time.Millisecond, Logger: log.logger()})
	decideBounded(t, b, 3, time.Second)
	beforeFault(t, b, &log)

	p.setDelay(time.Second)
	// Concurrent decisions too: those that queue behind a round trip in
	// flight still wait at most Timeout in all.
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { decideBounded(t, b, 5, timeout+slack) })
	}
	wg.Wait()
	if b.Shared() {
		t.Fatal("Shared() = true with answers 1s late and Timeout 100ms")
	}

	p.setDelay(0)
	eventually(t, "shared again once answers are prompt", b.Shared)
	checkModes(t, &log, 1, 1)
}

func TestMaxmemoryNoeviction(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	ctx := context.Background()
	var log logBuffer
	const timeout = 200 * time.Millisecond // Redis refuses at once; this is for scheduling
	b := newTestBudget(t, BudgetConfig{Client: c, Timeout: timeout, ConnectTimeout: timeout, FlushInterval: 10 * time.Millisecond, Logger: log.logger()})
	decideBounded(t, b, 1, time.Second)
	beforeFault(t, b, &log)

	// Fill the server's memory up to maxmemory, then past what it accepts.
	info := c.InfoMap(ctx, "memory").Item("Memory", "used_memory")
	var mem int64
	fmt.Sscan(info, &mem)
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(mem+1<<20)).Err(); err != nil {
		t.Fatal(err)
	}
	// Large values first, then ever smaller ones, until even a one-byte
	// SET is refused: a large SET that fails frees its query buffer, which
	// may leave room for a small one.
	n := 0
	for _, size := range []int{64 << 10, 1 << 10, 1} {
		for ; ; n++ {
			err := c.Set(ctx, fmt.Sprint("filler:", n), strings.Repeat("x", size), 0).Err()
			if err != nil && strings.Contains(err.Error(), "OOM") {
				break
			}
			if err != nil || n > 1<<20 {
				t.Fatalf("filling memory: SET %d: %v, want an OOM error after 1 MB", n, err)
			}
		}
	}
	decideBounded(t, b, 20, timeout+slack)
	if b.Shared() {
		t.Fatal("Shared() = true while Redis refuses writes")
	}
	for range 5 {
		b.Success()
	}

	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "shared again once memory is freed", b.Shared)
	checkModes(t, &log, 1, 1)
}

// TestBreakerStoreKill9: with the server killed, calls through a shared
// breaker go on, each bounded, and the breaker uses the shared state again
// once the server is back.
func TestBreakerStoreKill9(t *testing.T) {
	s := startServer(t)
	var log logBuffer
	const timeout = 200 * time.Millisecond // a killed server refuses at once; this is for scheduling
	st, err := NewBreakerStore(BreakerStoreConfig{Client: s.client(nil), Key: "kill", Timeout: timeout, ConnectTimeout: timeout, Logger: log.logger()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := breakerConfig(st)
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	call := func(i int) {
		t.Helper()
		start := time.Now()
		if err := b.Do(ctx, ok); err != nil {
			t.Fatalf("call %d: %v, want the call made", i, err)
		}
		if d := time.Since(start); d > timeout+slack {
			t.Fatalf("call %d took %v, want at most %v", i, d, timeout+slack)
		}
	}
	eventually(t, "the breaker using the shared state before the fault", func() bool {
		call(0)
		return !b.Snapshot().SharedDown
	})
	log.reset()
	s.Kill()
	for i := range 30 {
		call(i + 1)
		time.Sleep(cfg.SharedRefresh / 4) // let refreshes fall due
	}
	if !b.Snapshot().SharedDown {
		t.Fatal("Snapshot().SharedDown = false with the server killed")
	}
	s.Restart()
	eventually(t, "the breaker using the shared state again", func() bool {
		call(-1)
		return !b.Snapshot().SharedDown
	})
	if l, r := lines(&log, lostLine), lines(&log, resumedLine); l != 1 || r != 1 {
		t.Errorf("log has %d lines for the loss and %d for the return, want 1 and 1:\n%s", l, r, &log)
	}
}

// TestColdStart: a decision made while the first connection is under way
// (here each answer takes 300 ms, six Timeouts) waits for it, up to
// ConnectTimeout, and is the shared bucket's. (Once ConnectTimeout has
// passed, decisions wait at most Timeout: TestSlowRedis.)
func TestColdStart(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr())
	p.setDelay(300 * time.Millisecond)
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	const timeout, connect = 50 * time.Millisecond, 3 * time.Second
	coldDecision(t, s, c, "cold", timeout, connect, connect)
}

// TestColdStartLateConnection: a decision made while the first connection
// is under way, which becomes ready only as ConnectTimeout ends (its last
// answer arrives then), still gets Timeout for its own round trip and is
// the shared bucket's. (It once got what was left of ConnectTimeout, here
// nothing: on a busy machine, a storm's processes whose connection was
// ready late fell back to the local bucket, one retry each, on top of the
// shared bucket's four.)
func TestColdStartLateConnection(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	// The warm-up's script run is answered at once, but its answer is
	// held until the warm-up's wait, ConnectTimeout, is over.
	var held atomic.Bool
	c.AddHook(holdHook{func(cmd redis.Cmder) bool {
		return cmd.Name() == "evalsha" && held.CompareAndSwap(false, true)
	}})
	// Timeout is for a busy machine's scheduling: Redis answers at once.
	const timeout, connect = 300 * time.Millisecond, time.Second
	coldDecision(t, s, c, "late", timeout, connect, connect+timeout+slack)
}

// coldDecision opens a Budget on c and makes one decision at once, which
// must be the shared bucket's (one failure in the key), made within limit,
// with nothing logged.
func coldDecision(t *testing.T, s *server, c *redis.Client, key string, timeout, connect, limit time.Duration) {
	t.Helper()
	var log logBuffer
	b, err := NewBudget(BudgetConfig{Client: c, Key: key, Timeout: timeout, ConnectTimeout: connect, FlushInterval: time.Hour, Logger: log.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	if !b.Failure() || !b.Shared() {
		t.Fatalf("the first decision, cold: Shared() = %v after %v; want the shared bucket's answer; log:\n%s", b.Shared(), time.Since(start), &log)
	}
	if d := time.Since(start); d > limit {
		t.Errorf("the first decision took %v, want at most %v", d, limit)
	}
	if got, _ := s.Query("GET", "again:{"+key+"}:budget"); got != "1000" {
		t.Errorf("the shared bucket's key = %q, want 1000 (one failure)", got)
	}
	if log.String() != "" {
		t.Errorf("log:\n%swant nothing: Redis could be used", &log)
	}
}

// holdHook holds the answer of each command that hold selects until the
// command's context ends, as a server answering just then would.
type holdHook struct {
	hold func(redis.Cmder) bool
}

func (h holdHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h holdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.hold(cmd) {
			<-ctx.Done()
		}
		return err
	}
}
func (h holdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
