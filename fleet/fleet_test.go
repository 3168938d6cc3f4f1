package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/retry"
	"github.com/redis/go-redis/v9"
)

// The fleet tests run the test binary itself as each process of a fleet:
// childEnv set to "budget" makes TestMain call runChild instead of the
// tests, configured by the other environment variables below, and print a
// childReport in JSON.
const childEnv = "AGAIN_FLEET_CHILD"

// childConfig is what a child process of the fleet does.
type childConfig struct {
	Addr        string  // Redis address
	Key         string  // budget key
	MaxTokens   float64 // budget settings
	TokenRatio  float64
	Calls       int     // calls to make
	MaxAttempts int     // attempts per call at most
	FailRate    float64 // probability that an attempt fails
	Seed        uint64  // of the failures
	Mode        string  // "" for the budget; breaker tests: "trip", "probe"
	Until       int64   // probe: Unix milliseconds to stop at
}

// childReport is what a child process did.
type childReport struct {
	Calls, Attempts, Retries int
	FellBack                 bool   // some decision was made locally
	Probes                   int    // breaker probes admitted
	State                    string // the breaker's state at the end
}

// runChild is the child's main: makeCalls on a shared budget.
func runChild() int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child config:", err)
		return 2
	}
	if cfg.Mode != "" {
		r, err := runBreakerChild(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return 0
	}
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	// Long timeouts, the first connection's too: these tests are about
	// sharing, and fifty race-enabled processes starting at once on a
	// loaded machine must not fall back for want of CPU (the connect
	// timeout's default, 1 s, was seen to pass).
	b, err := NewBudget(BudgetConfig{Client: c, Key: cfg.Key, MaxTokens: cfg.MaxTokens, TokenRatio: cfg.TokenRatio, Timeout: 5 * time.Second, ConnectTimeout: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r := makeCalls(b, cfg, b.Shared)
	if err := b.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// makeCalls makes cfg.Calls calls of an operation that fails with
// probability cfg.FailRate, each retried while b allows it, up to
// cfg.MaxAttempts attempts, as retry.Do does: every failed attempt is
// reported with Failure, the last one included. shared, if not nil, says
// whether the decision just made was the shared bucket's.
func makeCalls(b retry.Budget, cfg childConfig, shared func() bool) childReport {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	var r childReport
	for range cfg.Calls {
		r.Calls++
		for attempt := 1; ; attempt++ {
			r.Attempts++
			if rng.Float64() >= cfg.FailRate {
				b.Success()
				break
			}
			allow := b.Failure()
			r.FellBack = r.FellBack || (shared != nil && !shared())
			if attempt == cfg.MaxAttempts || !allow {
				break
			}
			r.Retries++
		}
	}
	return r
}

// runFleet runs one child per config, all at once, and returns the sum of
// their reports.
func runFleet(t *testing.T, cfgs []childConfig) childReport {
	t.Helper()
	var (
		mu    sync.Mutex
		total childReport
		wg    sync.WaitGroup
	)
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env, _ := json.Marshal(cfg)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+string(env))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("child %d: %v; stderr:\n%s", i, err, stderr.Bytes())
				return
			}
			var r childReport
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Errorf("child %d: report %q: %v; stderr:\n%s", i, stdout.Bytes(), err, stderr.Bytes())
				return
			}
			mu.Lock()
			defer mu.Unlock()
			total.Calls += r.Calls
			total.Attempts += r.Attempts
			total.Retries += r.Retries
			total.FellBack = total.FellBack || r.FellBack
			total.Probes += r.Probes
			total.State = r.State
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if total.FellBack {
		t.Fatal("a child decided locally: Redis could not be used within its timeouts (30 s to connect, 5 s a decision)")
	}
	return total
}

// fleet returns n child configs differing only by Seed, and by Key if
// separate.
func fleet(n int, separate bool, cfg childConfig) []childConfig {
	cfgs := make([]childConfig, n)
	for i := range cfgs {
		cfgs[i] = cfg
		cfgs[i].Seed = uint64(i)
		if separate {
			cfgs[i].Key += strconv.Itoa(i)
		}
	}
	return cfgs
}

const fleetSize = 50

// TestFleetShareOneBudget: against an operation that always fails, fifty
// processes sharing one budget retry exactly as much as one process's
// budget allows (fleet.Budget leases no tokens: the slack is zero), where
// fifty separate budgets allow fifty times that.
func TestFleetShareOneBudget(t *testing.T) {
	s := startServer(t)
	// What one bucket allows from full: failures are allowed while more
	// than half the tokens remain.
	allowance := 0
	for ref := newLocal(10, 0.1); ref.Failure(); {
		allowance++
	}
	cfg := childConfig{Addr: s.Addr(), Key: "always", Calls: 5, MaxAttempts: 10, FailRate: 1}
	shared := runFleet(t, fleet(fleetSize, false, cfg))
	if shared.Retries != allowance {
		t.Errorf("%d processes sharing one budget made %d retries, want %d as one budget allows", fleetSize, shared.Retries, allowance)
	}
	separate := runFleet(t, fleet(fleetSize, true, cfg))
	if want := fleetSize * allowance; separate.Retries != want {
		t.Errorf("%d processes with separate budgets made %d retries, want %d", fleetSize, separate.Retries, want)
	}
	t.Logf("always failing: %d retries shared by %d processes, %d with separate budgets", shared.Retries, fleetSize, separate.Retries)
}

// TestFleetAmplification: with half the attempts failing, the traffic a
// fleet sharing one budget sends (attempts per call) is within 0.05 of
// what one process sends for the same total of calls. TokenRatio 1 keeps
// the bucket near its threshold, so that retries are neither all allowed
// nor all refused and the comparison means something. Fifty thousand
// calls keep the sampling error near 0.008; the fleet runs about 0.02
// above one process (interleaving and successes flushed late), measured
// with a FlushInterval of 1 ms and of 100 ms alike.
func TestFleetAmplification(t *testing.T) {
	s := startServer(t)
	const callsEach = 1000
	cfg := childConfig{Addr: s.Addr(), Key: "half", MaxTokens: 10, TokenRatio: 1, Calls: callsEach, MaxAttempts: 4, FailRate: 0.5}
	got := runFleet(t, fleet(fleetSize, false, cfg))
	// One process, the same total traffic, the same local rule.
	ref := cfg
	ref.Calls, ref.Seed = fleetSize*callsEach, fleetSize
	one := makeCalls(newLocal(cfg.MaxTokens, cfg.TokenRatio), ref, nil)
	fleetAmp := float64(got.Attempts) / float64(got.Calls)
	oneAmp := float64(one.Attempts) / float64(one.Calls)
	t.Logf("amplification: fleet of %d sharing one budget %.3f, one process %.3f, no budget %.3f", fleetSize, fleetAmp, oneAmp, 1.875)
	if math.Abs(fleetAmp-oneAmp) > 0.05 {
		t.Errorf("a fleet of %d sharing one budget sends %.3f attempts per call, one process %.3f: want within 0.05", fleetSize, fleetAmp, oneAmp)
	}
}

// newLocal returns a local budget of retry's own with the given settings:
// the reference the tests compare the shared bucket with.
func newLocal(maxTokens, ratio float64) *retry.TokenBucket {
	return &retry.TokenBucket{MaxTokens: maxTokens, TokenRatio: ratio}
}
