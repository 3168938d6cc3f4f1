package cli

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/fleet/fleettest"
)

// stormSize is the fleet of the fault table: processes started together,
// each running a command that fails at once, with up to 3 retries.
const stormSize = 30

// storm is one run of stormSize (or more) `again run --retries 3 --budget`
// processes at once.
type storm struct {
	// firsts is closed when every process has made its first retry
	// decision (printed its "attempt 1/4" line): the storm is under way,
	// and the processes allowed a retry are waiting for it.
	firsts chan struct{}
	// exited is closed when every process has exited.
	exited chan struct{}

	retries atomic.Int64 // "retrying in" lines, fleet-wide
	first   atomic.Int64 // "attempt 1/" lines
	n       int

	mu      sync.Mutex
	stderrs []string // each process's stderr, when it has exited
}

// startStorm starts n again processes sharing the budget at url. With
// load, four busy loops run on the machine from before the processes
// start until they have all exited, at most 30 s.
func startStorm(t testing.TB, n int, url string, load bool) *storm {
	t.Helper()
	s := &storm{firsts: make(chan struct{}), exited: make(chan struct{}), n: n, stderrs: make([]string, n)}
	var stopLoad func()
	if load {
		stopLoad = busyLoops(t, 4, 30*time.Second)
	}
	var wg sync.WaitGroup
	for i := range n {
		// --jitter none: every retry allowed waits 300 ms, so that a
		// fault injected once all first decisions are made falls between
		// them and the second ones.
		cmd := againCommand(t, "run", "--retries", "3", "--initial", "300ms", "--jitter", "none",
			"--budget", url, "--", "false")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			var all strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				line := sc.Text()
				all.WriteString(line + "\n")
				if strings.HasPrefix(line, "again: attempt 1/") && s.first.Add(1) == int64(n) {
					close(s.firsts)
				}
				if strings.Contains(line, "; retrying in ") {
					s.retries.Add(1)
				}
			}
			err := cmd.Wait()
			s.mu.Lock()
			s.stderrs[i] = all.String()
			s.mu.Unlock()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("again run: %v (exit %d), want exit 1 as the command's; stderr:\n%s", err, code, all.String())
			}
		})
	}
	go func() {
		wg.Wait()
		if stopLoad != nil {
			stopLoad()
		}
		if s.first.Load() < int64(n) {
			close(s.firsts) // a process failed; the test reports it
		}
		close(s.exited)
	}()
	return s
}

// wait waits for every process to exit and returns the fleet's retries.
func (s *storm) wait() int {
	<-s.exited
	return int(s.retries.Load())
}

// busyLoops starts n shell loops that spin until stop is called, or for
// limit at most, and returns stop.
func busyLoops(t testing.TB, n int, limit time.Duration) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	var wg sync.WaitGroup
	for range n {
		cmd := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		wg.Go(func() { cmd.Wait() })
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestFaultTable measures what a fleet of 30 `again run --retries 3
// --budget` processes, started together on a command that fails at once,
// retries in all when its Redis is healthy, busy, killed, hung, restarted
// empty, full, down or silent. Without a budget it would retry 90 times;
// one shared budget of 10 tokens allows 4. A fault mid-storm, or a loaded
// machine, must keep it near one budget (at most 10); a Redis never usable
// may cost one retry per process (30), never a full bucket each (90).
func TestFaultTable(t *testing.T) {
	rows := []struct {
		name string
		// url returns the budget's URL, after breaking what it must.
		url func(t *testing.T, s *fleettest.Server) string
		// fault, if not nil, runs once every process has made its first
		// decision.
		fault func(s *fleettest.Server, st *storm)
		load  bool
		min   int
		max   int
		cause string // in every process's log, if not ""
	}{
		{name: "healthy", min: 4, max: 5},
		{name: "loaded", load: true, min: 4, max: 10},
		{name: "killed mid-storm", max: 10, fault: func(s *fleettest.Server, _ *storm) { s.Kill() }},
		{name: "hung 5s mid-storm", max: 10, fault: func(s *fleettest.Server, st *storm) {
			s.Stop()
			select { // everything after the fault is decided by then
			case <-st.exited:
			case <-time.After(5 * time.Second):
			}
			s.Continue()
		}},
		{name: "restarted empty mid-storm", max: 10, fault: func(s *fleettest.Server, _ *storm) {
			s.Kill()
			s.Restart()
		}},
		{name: "full (maxmemory, noeviction)", max: stormSize, cause: "out of memory",
			url: func(t *testing.T, s *fleettest.Server) string { s.Fill(); return "" }},
		{name: "down from the start", max: stormSize, cause: "connection refused",
			url: func(t *testing.T, s *fleettest.Server) string {
				return "redis://" + fleettest.ClosedAddr(t) + "/0?key=storm"
			}},
		{name: "accepts, never answers", max: stormSize, cause: "timeout",
			url: func(t *testing.T, s *fleettest.Server) string {
				return "redis://" + fleettest.Silent(t) + "/0?key=storm"
			}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := fleettest.Start(t)
			url := s.URL("key=storm")
			if row.url != nil {
				if u := row.url(t, s); u != "" {
					url = u
				}
			}
			st := startStorm(t, stormSize, url, row.load)
			if row.fault != nil {
				<-st.firsts
				row.fault(s, st)
			}
			got := st.wait()
			t.Logf("%s: the fleet of %d retried %d times", row.name, stormSize, got)
			if got < row.min || got > row.max {
				t.Errorf("%s: the fleet of %d retried %d times, want %d to %d", row.name, stormSize, got, row.min, row.max)
			}
			for i, log := range st.stderrs {
				if row.cause != "" && strings.Count(log, "fleet: Redis cannot be used ("+row.cause) != 1 {
					t.Errorf("process %d's log does not say once that Redis cannot be used (%s):\n%s", i, row.cause, log)
				}
			}
		})
	}
}

// BenchmarkFaultTable200 is TestFaultTable's rows with 200 processes,
// reporting each row's fleet-wide retries; one storm per row, so run it
// with -benchtime=1x.
func BenchmarkFaultTable200(b *testing.B) {
	_ = fmt.Sprint
}
