package ready

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fake is a Checker that is ready from a moment of the (synctest) clock
// on, or fails with err.
type fake struct {
	name  string
	from  time.Time // ready from then on; zero: never
	err   error     // the failure before from
	calls atomic.Int32
}

func (f *fake) String() string { return f.name }
func (f *fake) Check(ctx context.Context) error {
	f.calls.Add(1)
	if !f.from.IsZero() && !time.Now().Before(f.from) {
		return nil
	}
	if f.err != nil {
		return f.err
	}
	return &Error{msg: "connection refused"}
}

func TestWait(t *testing.T) {
	permanent := &Error{Permanent: true, msg: "wrong credentials: password authentication failed"}
	for _, tc := range []struct {
		name   string
		upIn   []time.Duration // per target: ready after; -1 never
		errs   []error
		invert bool
		want   []string // per target: ready, permanent, deadline, stopped
	}{
		{name: "all up", upIn: []time.Duration{0, 0}, want: []string{"ready", "ready"}},
		{name: "one late", upIn: []time.Duration{0, 3 * time.Second}, want: []string{"ready", "ready"}},
		{name: "never", upIn: []time.Duration{0, -1}, want: []string{"ready", "deadline"}},
		{name: "permanent stops the others", upIn: []time.Duration{-1, -1}, errs: []error{permanent, nil}, want: []string{"permanent", "stopped"}},
		{name: "invert", upIn: []time.Duration{0, -1}, invert: true, want: []string{"deadline", "ready"}},
		{name: "invert keeps permanent", upIn: []time.Duration{-1}, errs: []error{permanent}, invert: true, want: []string{"permanent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				begin := time.Now()
				var targets []Checker
				for i, d := range tc.upIn {
					f := &fake{name: string(rune('a' + i))}
					if d >= 0 {
						f.from = begin.Add(d)
					}
					if i < len(tc.errs) {
						f.err = tc.errs[i]
					}
					targets = append(targets, f)
				}
				cfg := DefaultConfig()
				cfg.Deadline = 10 * time.Second
				cfg.Invert = tc.invert
				results, err := Wait(context.Background(), targets, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range results {
					got := "deadline"
					switch {
					case r.Ready:
						got = "ready"
					case r.Permanent:
						got = "permanent"
					case r.Stopped:
						got = "stopped"
					}
					if got != tc.want[i] {
						t.Errorf("target %d: %s (%+v), want %s", i, got, r, tc.want[i])
					}
					if r.Attempts != int(targets[i].(*fake).calls.Load()) {
						t.Errorf("target %d: Attempts = %d, but Check ran %d times", i, r.Attempts, targets[i].(*fake).calls.Load())
					}
					if got == "ready" && r.Err != nil {
						t.Errorf("target %d: ready with Err %v", i, r.Err)
					}
					if got != "ready" && r.Err == nil {
						t.Errorf("target %d: %s without an error", i, got)
					}
				}
			})
		})
	}
}

// TestWaitWithinOneStep checks the promise of DefaultPolicy: a target that
// comes up is found ready within the cap of one wait (2 s), however long
// it was down, and the deadline is kept.
func TestWaitWithinOneStep(t *testing.T) {
	for _, down := range []time.Duration{time.Second, 5 * time.Second, 20 * time.Second, 50 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{name: "db", from: time.Now().Add(down)}
			results, err := Wait(context.Background(), []Checker{f}, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			r := results[0]
			if !r.Ready || r.Elapsed < down || r.Elapsed > down+DefaultPolicy().Max {
				t.Errorf("down %v: ready %v after %v, want ready within %v of %v", down, r.Ready, r.Elapsed, DefaultPolicy().Max, down)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		f := &fake{name: "db"}
		begin := time.Now()
		results, _ := Wait(context.Background(), []Checker{f}, DefaultConfig())
		if r := results[0]; r.Ready || r.Stopped || r.Permanent || time.Since(begin) > DefaultDeadline {
			t.Errorf("never up: %+v after %v, want not ready by the %v deadline", r, time.Since(begin), DefaultDeadline)
		}
		// Jittered, capped at 2 s: between 30 (every 2 s) and a few hundred.
		if n := f.calls.Load(); n < 25 || n > 400 {
			t.Errorf("never up: %d attempts in a minute, want the 2 s cap to allow 25 to 400", n)
		}
	})
}

// hang is a Checker whose check blocks until its context ends.
type hang struct{}

func (hang) String() string { return "hang" }
func (hang) Check(ctx context.Context) error {
	<-ctx.Done()
	return &Error{msg: "attempt timed out", err: ctx.Err()}
}

func TestWaitAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Deadline = 12 * time.Second
		cfg.AttemptTimeout = 3 * time.Second
		var mu sync.Mutex
		var at []time.Duration
		cfg.OnAttempt = func(p Progress) {
			mu.Lock()
			at = append(at, p.Elapsed)
			mu.Unlock()
		}
		results, _ := Wait(context.Background(), []Checker{hang{}}, cfg)
		r := results[0]
		if r.Ready || r.Attempts < 2 || r.Attempts > 4 {
			t.Errorf("a check that hangs: %+v, want 2 to 4 attempts of 3 s in 12 s", r)
		}
		if len(at) == 0 || at[0] != 3*time.Second {
			t.Errorf("attempts ended at %v, want the first at 3s", at)
		}
	})
}

// An AttemptTimeout of 0 is none: a check that hangs runs until the
// deadline, in one attempt.
func TestWaitNoAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Deadline = 12 * time.Second
		cfg.AttemptTimeout = 0
		start := time.Now()
		results, err := Wait(context.Background(), []Checker{hang{}}, cfg)
		if err != nil {
			t.Fatalf("Wait with AttemptTimeout 0 = %v, want no error", err)
		}
		if r := results[0]; r.Ready || r.Attempts != 1 || r.Deadline != cfg.Deadline || time.Since(start) != cfg.Deadline {
			t.Errorf("a check that hangs, no attempt timeout: %+v after %v; want 1 attempt ended by the deadline at 12s", r, time.Since(start))
		}
	})
}

func TestWaitCallerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(5*time.Second, cancel) // a signal, say
		results, _ := Wait(ctx, []Checker{&fake{name: "db"}}, DefaultConfig())
		if r := results[0]; r.Ready || !r.Stopped {
			t.Errorf("the caller's context ended: %+v, want Stopped", r)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Policy: DefaultPolicy(), AttemptTimeout: time.Second},
		{Policy: DefaultPolicy(), Deadline: -1, AttemptTimeout: time.Second},
		{Policy: DefaultPolicy(), Deadline: time.Second, AttemptTimeout: -1},
	} {
		if _, err := Wait(context.Background(), nil, c); !errors.Is(err, ErrConfig) {
			t.Errorf("Wait(%+v) = %v, want ErrConfig", c, err)
		}
	}
	bad := DefaultConfig()
	bad.Policy.Multiplier = 0.5
	if err := bad.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("a multiplier of 0.5: %v, want ErrConfig", err)
	}
}

func TestLine(t *testing.T) {
	cause := &Error{Permanent: true, msg: "wrong credentials: denied"}
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Target: "db:5432", Ready: true, Attempts: 1, Elapsed: 1234567 * time.Microsecond},
			"again wait: db:5432 ready after 1 attempt, 1.235s"},
		{Result{Target: "db:5432", Ready: true, Inverted: true, Attempts: 3, Elapsed: 12345 * time.Millisecond},
			"again wait: db:5432 unreachable after 3 attempts, 12.3s"},
		{Result{Target: "pg", Permanent: true, Attempts: 1, Err: cause},
			"again wait: pg will not be ready: wrong credentials: denied"},
		{Result{Target: "pg", Attempts: 31, Elapsed: time.Minute, Err: &Error{msg: "connection refused"}},
			"again wait: pg not ready after 31 attempts, 1m0s: connection refused"},
		{Result{Target: "pg", Attempts: 31, Elapsed: time.Minute, Deadline: time.Minute, Err: &Error{msg: "connection refused"}},
			"again wait: pg not ready: stopped by the --deadline 1m after 31 attempts: connection refused"},
		{Result{Target: "pg", Stopped: true, Attempts: 2, Elapsed: time.Second, Err: &Error{msg: "connection refused"}},
			"again wait: pg not ready, stopped after 2 attempts, 1s: connection refused"},
	} {
		if got := Line(tc.r); got != tc.want {
			t.Errorf("Line(%+v) =\n%q, want\n%q", tc.r, got, tc.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	err := WriteJSON(&b, []Result{
		{Target: "postgres://app:xxxxx@db/app", Ready: true, Attempts: 2, Elapsed: 1500 * time.Millisecond},
		{Target: "nats://n:4222", Attempts: 5, Elapsed: time.Minute, Deadline: time.Minute, Err: &Error{msg: "connection refused"}},
		{Target: "pg", Permanent: true, Attempts: 1, Err: &Error{msg: "wrong credentials"}},
		{Target: "redis://r", Stopped: true, Attempts: 1, Err: &Error{msg: "connection refused"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"target":"postgres://app:xxxxx@db/app","ready":true,"reason":"ready","attempts":2,"elapsed_ms":1500,"last_error":null}
{"target":"nats://n:4222","ready":false,"reason":"deadline","attempts":5,"elapsed_ms":60000,"deadline_ms":60000,"last_error":"connection refused"}
{"target":"pg","ready":false,"reason":"permanent","attempts":1,"elapsed_ms":0,"last_error":"wrong credentials"}
{"target":"redis://r","ready":false,"reason":"stopped","attempts":1,"elapsed_ms":0,"last_error":"connection refused"}
`
	if b.String() != want {
		t.Errorf("WriteJSON =\n%s\nwant\n%s", b.String(), want)
	}
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || len(m) != 6 && (len(m) != 7 || m["reason"] != ReasonDeadline) {
			t.Errorf("line %q: %v, %d fields, want the 6 of the contract (7 with deadline_ms)", line, err, len(m))
		}
	}
}

func TestLive(t *testing.T) {
	var b bytes.Buffer
	l := NewLive(&b, 40, []string{"db:5432", "redis://cache"})
	l.Update(Progress{Index: 1, Target: "redis://cache", Attempt: 2, Elapsed: time.Second, Err: &Error{msg: "connection refused by the server"}})
	l.Finish([]Result{{Target: "db:5432", Ready: true, Attempts: 1}, {Target: "redis://cache", Ready: true, Attempts: 3, Elapsed: 2 * time.Second}})
	out := b.String()
	frames := strings.Split(out, "\x1b[2A")
	if len(frames) != 3 {
		t.Fatalf("%q: want 3 frames of 2 lines, each but the first after moving up 2 lines", out)
	}
	if !strings.Contains(frames[1], "\r\x1b[Kagain wait: redis://cache waiting, att…\n") {
		t.Errorf("frame %q: want the live line, cut to 40 columns", frames[1])
	}
	for line := range strings.Lines(frames[1]) {
		if n := len([]rune(strings.TrimSuffix(strings.TrimPrefix(line, "\r\x1b[K"), "\n"))); n > 39 {
			t.Errorf("live line %q is %d columns wide, want at most 39", line, n)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[Kagain wait: redis://cache ready after 3 attempts, 2s\n") {
		t.Errorf("%q: want the final lines last, in full", out)
	}
}

// TestWaitOnResult checks that each target's result is told when its wait
// ends, not when the last target's does: a target ready at once is told
// at once, one ready at 1.5 s then.
func TestWaitOnResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		targets := []Checker{&fake{name: "late", from: begin.Add(1500 * time.Millisecond)}, &fake{name: "now", from: begin}}
		cfg := DefaultConfig()
		var mu sync.Mutex
		told := map[string]time.Duration{}
		cfg.OnResult = func(r Result) {
			mu.Lock()
			told[r.Target] = time.Since(begin)
			mu.Unlock()
		}
		if _, err := Wait(context.Background(), targets, cfg); err != nil {
			t.Fatal(err)
		}
		if told["now"] != 0 || told["late"] < 1500*time.Millisecond || told["late"] > 3500*time.Millisecond {
			t.Errorf("results told at %v, want now at 0s and late from 1.5s on, once it is seen", told)
		}
	})
}
