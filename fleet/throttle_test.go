package fleet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/fleet/fleettest"
	"github.com/again-go/again/throttle"
	"github.com/redis/go-redis/v9"
)

// recordingRand draws from a seeded stream and remembers the last draw.
type recordingRand struct {
	mu   sync.Mutex
	r    *rand.Rand
	last float64
}

func (r *recordingRand) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = r.r.Float64()
	return r.last
}

func (r *recordingRand) take() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.last
	r.last = -1
	return d
}

func newTestThrottle(t *testing.T, cfg ThrottleConfig) *Throttle {
	t.Helper()
	if cfg.Key == "" {
		cfg.Key = "t"
	}
	th, err := NewThrottle(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { th.Close() })
	return th
}

// drive asks th for n requests against a backend that accepts one in
// four of those sent, and checks the rule of the fallback: every request
// admitted is one that th's own counts would have admitted too (its draw
// is at least the local p), and no Admit waits longer than bound. It
// returns how many were sent.
func drive(t *testing.T, th *Throttle, r *recordingRand, n int, bound time.Duration) int {
	t.Helper()
	sent := 0
	for i := range n {
		pl := th.local.Snapshot().P
		r.take()
		start := time.Now()
		err := th.Admit(t.Context())
		if d := time.Since(start); d > bound {
			t.Fatalf("Admit %d took %v, want at most %v", i+1, d, bound)
		}
		if err != nil {
			if !errors.Is(err, throttle.ErrRejected) {
				t.Fatalf("Admit = %v, want a rejection", err)
			}
			continue
		}
		if d := r.take(); d >= 0 && d < pl {
			t.Fatalf("request %d admitted on a draw of %v, below the local p %v: more sent than local throttling allows", i+1, d, pl)
		} else if d < 0 && pl > 0 {
			t.Fatalf("request %d admitted without a draw at local p %v", i+1, pl)
		}
		sent++
		th.Done(sent%4 != 0)
	}
	return sent
}

// TestThrottleFleetCounts: a process that sent nothing itself throttles on
// what the fleet saw.
func TestThrottleFleetCounts(t *testing.T) {
	s := startServer(t)
	busy := newTestThrottle(t, ThrottleConfig{Client: s.client(nil), Key: "fleet", FlushInterval: 10 * time.Millisecond})
	quiet := newTestThrottle(t, ThrottleConfig{Client: s.client(nil), Key: "fleet", FlushInterval: 10 * time.Millisecond,
		Throttle: throttle.Config{Rand: zeroDraw{}}})
	for range 200 {
		if busy.Admit(t.Context()) == nil {
			busy.Done(true) // all overloaded
		}
	}
	eventually(t, "the fleet's p seen by the quiet process", func() bool { return quiet.Stats().FleetP > 0.9 })
	if err := quiet.Admit(t.Context()); !errors.Is(err, throttle.ErrRejected) {
		t.Errorf("quiet process's first request: %v, want rejected on the fleet's counts", err)
	}
	// Rejected while no accept is in either window: not counted (the cold
	// start rule of package throttle), but a rejection.
	if st := quiet.Stats(); st.Local.Requests != 0 || st.Local.Rejected != 1 || !st.Shared {
		t.Errorf("quiet process: %+v, want 1 rejection of its own, not counted as a request, Shared", st)
	}
	got, _ := s.Query("HGET", "again:{fleet}:throttle:"+fmt.Sprint(time.Now().UnixNano()/int64(10*time.Second)), "r")
	if got == "" {
		t.Error("no count in the current bucket's hash")
	}
}

type zeroDraw struct{}

func (zeroDraw) Float64() float64 { return 0 }

// TestThrottleFaults is the fleet budget's fault table for the throttle:
// Redis killed, hung, full, and never reachable. In each, decisions stay
// bounded, the log names the cause once, and no request is sent that this
// process's own counts would have rejected.
func TestThrottleFaults(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		causes []string // one of them
		setup  func(t *testing.T) (c redis.UniversalClient, fault, heal func())
	}{
		{"killed", []string{"connection refused", "connection lost", "timeout"}, func(t *testing.T) (redis.UniversalClient, func(), func()) {
			s := startServer(t)
			return s.client(nil), s.Kill, s.Restart
		}},
		{"hung", []string{"timeout"}, func(t *testing.T) (redis.UniversalClient, func(), func()) {
			s := startServer(t)
			p := startProxy(t, s.Addr())
			c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
			t.Cleanup(func() { c.Close() })
			return c, func() { p.setDelay(time.Second) }, func() { p.setDelay(0) }
		}},
		{"full", []string{"out of memory"}, func(t *testing.T) (redis.UniversalClient, func(), func()) {
			s := startServer(t)
			c := s.client(nil)
			return c, func() { fillMemory(t, c) }, func() { c.FlushDB(t.Context()) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, fault, heal := tc.setup(t)
			var log logBuffer
			r := &recordingRand{r: rand.New(rand.NewPCG(1, 2))}
			th := newTestThrottle(t, ThrottleConfig{Client: c, Timeout: timeout, ConnectTimeout: time.Second,
				FlushInterval: 10 * time.Millisecond, Logger: log.logger(), Throttle: throttle.Config{Rand: r}})
			drive(t, th, r, 200, 2*time.Second)
			eventually(t, "shared before the fault", th.Shared)
			log.reset()

			fault()
			// A flush writes only what was counted since the last one: a
			// request gives a full Redis a write to refuse, whether or not
			// the drive's counts were flushed before the fault.
			if th.Admit(t.Context()) == nil {
				th.Done(false)
			}
			eventually(t, "local once Redis cannot be used", func() bool { return !th.Shared() })
			if tc.name == "full" {
				// A full Redis still answers the reads of a flush with
				// nothing to write: that is no recovery, and switching
				// back on it flapped, a line each way.
				for range 20 {
					time.Sleep(10 * time.Millisecond) // a FlushInterval
					if th.Shared() {
						t.Fatal("shared again while Redis is full, after a flush that wrote nothing")
					}
				}
			}
			// One in four accepted, fewer than 1/K: p climbs toward 1,
			// and draws decide on the way.
			if sent := drive(t, th, r, 2000, slack); sent < 10 || sent > 1000 {
				t.Errorf("sent %d of 2000 with one in four accepted, want some, and far from all", sent)
			}
			if l := lines(&log, lostLine); l != 1 || !namesOne(log.String(), tc.causes) {
				t.Errorf("log:\n%swant one %q line naming one of %q", &log, lostLine, tc.causes)
			}

			heal()
			// Recovery is a flush that writes: give it a count to write.
			if th.Admit(t.Context()) == nil {
				th.Done(false)
			}
			eventually(t, "shared again", th.Shared)
			drive(t, th, r, 200, slack)
			if l := lines(&log, "Redis can be used again"); l != 1 {
				t.Errorf("log:\n%swant one line saying Redis can be used again", &log)
			}
		})
	}
}

// fillMemory fills the server's memory past maxmemory, as
// TestMaxmemoryNoeviction does.
func fillMemory(t *testing.T, c redis.UniversalClient) {
	ctx := t.Context()
	info := c.InfoMap(ctx, "memory").Item("Memory", "used_memory")
	var mem int64
	fmt.Sscan(info, &mem)
	c.ConfigSet(ctx, "maxmemory-policy", "noeviction")
	c.ConfigSet(ctx, "maxmemory", fmt.Sprint(mem+1<<20))
	n := 0
	for _, size := range []int{64 << 10, 1 << 10, 1} {
		for ; n < 1<<20; n++ {
			if err := c.Set(ctx, fmt.Sprint("filler:", n), strings.Repeat("x", size), 0).Err(); err != nil {
				break
			}
		}
	}
}

// TestThrottleNeverReachable: a Redis that never answers costs the first
// requests at most ConnectTimeout, then none; the cause is logged once,
// and the Throttle throttles on its own counts.
func TestThrottleNeverReachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, Password: "s3cret-pass"})
	defer c.Close()
	var log logBuffer
	r := &recordingRand{r: rand.New(rand.NewPCG(3, 4))}
	const connect = 300 * time.Millisecond
	th := newTestThrottle(t, ThrottleConfig{Client: c, ConnectTimeout: connect, FlushInterval: 10 * time.Millisecond,
		Logger: log.logger(), Throttle: throttle.Config{Rand: r}})
	drive(t, th, r, 1, connect+slack)
	eventually(t, "local with no server", func() bool { return !th.Shared() })
	drive(t, th, r, 2000, slack)
	if lines(&log, lostLine) != 1 || !namesOne(log.String(), []string{"connection refused", "timeout: no answer within 300ms"}) {
		t.Errorf("log:\n%swant one %q line naming the cause", &log, lostLine)
	}
	if strings.Contains(log.String(), "s3cret-pass") {
		t.Errorf("the log holds the password:\n%s", &log)
	}
}

func TestThrottleConfigRejected(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	for _, cfg := range []ThrottleConfig{
		{Key: "x"},
		{Client: c},
		{Client: c, Key: "a{b}"},
		{Client: c, Key: "x", Throttle: throttle.Config{K: 0.5}},
		{Client: c, Key: "x", Throttle: throttle.Config{Clock: fixedNow{}}},
		{Client: c, Key: "x", Timeout: -1},
	} {
		if _, err := NewThrottle(cfg); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewThrottle(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
}

type fixedNow struct{}

func (fixedNow) Now() time.Time { return time.Unix(0, 0) }

// namesOne reports whether log names one of causes, in the parentheses
// of the line that says Redis cannot be used.
func namesOne(log string, causes []string) bool {
	for _, c := range causes {
		if strings.Contains(log, "("+c) {
			return true
		}
	}
	return false
}

// TestThrottleWrongPassword: the cause is named, the password never
// logged, and the Throttle decides on its own counts.
func TestThrottleWrongPassword(t *testing.T) {
	s := fleettest.Start(t, "--requirepass", "right-one")
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: password, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	var log logBuffer
	th := newTestThrottle(t, ThrottleConfig{Client: c, ConnectTimeout: 300 * time.Millisecond, FlushInterval: 10 * time.Millisecond, Logger: log.logger()})
	eventually(t, "local with a wrong password", func() bool { return !th.Shared() })
	if err := th.Admit(t.Context()); err != nil {
		t.Errorf("first request with nothing counted: %v, want admitted", err)
	}
	if got := log.String(); !strings.Contains(got, lostLine+" (wrong password)") || strings.Contains(got, password) {
		t.Errorf("log:\n%swant the wrong password named, without the password", got)
	}
}

// TestThrottleFleetCap: Config.MaxP caps the fleet's p as it caps a
// Throttler's, so that the fleet keeps probing a dependency that recovers.
func TestThrottleFleetCap(t *testing.T) {
	s := startServer(t)
	busy := newTestThrottle(t, ThrottleConfig{Client: s.client(nil), Key: "cap", FlushInterval: 10 * time.Millisecond,
		Throttle: throttle.Config{MaxP: 0.5}})
	for range 200 {
		if busy.Admit(t.Context()) == nil {
			busy.Done(true)
		}
	}
	eventually(t, "the fleet's p", func() bool { return busy.Stats().FleetP > 0.4 })
	if p := busy.Stats().FleetP; p > 0.5 {
		t.Errorf("fleet's p %v, want at most MaxP 0.5", p)
	}
}

// TestThrottleFleetColdStart: rejections made while no accept is in the
// window, neither the process's nor the fleet's, are not added to the
// fleet's requests (throttle's cold start), so that the fleet's counts do
// not keep every process shut after the dependency recovers.
func TestThrottleFleetColdStart(t *testing.T) {
	s := startServer(t)
	// A generous Timeout: a flush that times out loses its counts, which
	// a loaded machine must not make this test read as a miscount.
	th := newTestThrottle(t, ThrottleConfig{Client: s.client(nil), Key: "cold", FlushInterval: 10 * time.Millisecond, Timeout: 2 * time.Second})
	var sent int64
	for range 500 {
		if th.Admit(t.Context()) == nil {
			sent++
			th.Done(true) // a dead dependency
		}
	}
	if sent >= 400 {
		t.Fatalf("%d of 500 sent to a dead dependency, want most rejected", sent)
	}
	fleetRequests := func() int64 {
		var n int64
		e := time.Now().UnixNano() / int64(10*time.Second)
		for _, b := range []int64{e, e - 1} { // the run may straddle two buckets
			v, _ := s.Query("HGET", "again:{cold}:throttle:"+fmt.Sprint(b), "r")
			if i, err := strconv.ParseInt(v, 10, 64); err == nil && i > 0 { // -1: no such bucket
				n += i
			}
		}
		return n
	}
	eventually(t, "the sent requests in Redis", func() bool { return fleetRequests() == sent })
}

// TestThrottleFleetInFlight: requests in flight count for nothing in the
// fleet's counts either, so that a dependency that has never signalled
// overload is not throttled by the fleet: 64 requests admitted and not
// yet answered when the process flushes, then an accept, leave p_fleet at
// 0, and 64 more requests are admitted. Counted when admitted, the flush
// carried 65 requests and 1 accept: p_fleet 0.95.
func TestThrottleFleetInFlight(t *testing.T) {
	s := startServer(t)
	th := newTestThrottle(t, ThrottleConfig{Client: s.client(nil), Key: "inflight", FlushInterval: 10 * time.Millisecond,
		Throttle: throttle.Config{Rand: zeroDraw{}}}) // rejects whenever p > 0
	for i := range 64 {
		if err := th.Admit(t.Context()); err != nil {
			t.Fatalf("request %d in flight: Admit = %v", i+1, err)
		}
	}
	if err := th.Admit(t.Context()); err != nil {
		t.Fatal(err)
	}
	th.Done(false)
	key := "again:{inflight}:throttle:"
	eventually(t, "the accept flushed", func() bool {
		e := time.Now().UnixNano() / int64(10*time.Second)
		for _, b := range []int64{e, e - 1} {
			if got, _ := s.Query("HGET", key+fmt.Sprint(b), "a"); got == "1" {
				return true
			}
		}
		return false
	})
	if p := th.Stats().FleetP; p != 0 {
		t.Errorf("p_fleet = %v with 64 requests in flight and 1 accept, want 0", p)
	}
	for i := range 64 {
		if err := th.Admit(t.Context()); err != nil {
			t.Fatalf("request %d with 64 in flight and none overloaded: Admit = %v", i+1, err)
		}
	}
}
