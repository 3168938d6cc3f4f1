package run

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
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
	running atomic.Int64 // processes not yet exited
	n       int

	mu      sync.Mutex
	stderrs []string // each process's stderr, when it has exited
}

// startStorm starts n again processes sharing the budget at url, each
// waiting wait before a retry. With load, four busy loops run on the
// machine from before the processes start until they have all exited, at
// most 30 s.
func startStorm(t testing.TB, n int, url string, wait time.Duration, load bool) *storm {
	t.Helper()
	s := &storm{firsts: make(chan struct{}), exited: make(chan struct{}), n: n, stderrs: make([]string, n)}
	var stopLoad func()
	if load {
		stopLoad = busyLoops(t, 4, 30*time.Second)
	}
	var wg sync.WaitGroup
	for i := range n {
		// --jitter none: every retry allowed waits wait, so that a fault
		// injected once all first decisions are made falls between them
		// and the second ones.
		cmd := cmdtest.AgainCommand(t, "run", "--retries", "3", "--initial", wait.String(), "--max", wait.String(), "--jitter", "none",
			"--budget", url, "--", "false")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.running.Add(1)
		wg.Go(func() {
			defer s.running.Add(-1)
			var all strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				line := sc.Text()
				all.WriteString(line + "\n")
				if strings.HasPrefix(line, "again run: attempt 1/") && s.first.Add(1) == int64(n) {
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

// faultRow is a row of the fault table.
type faultRow struct {
	name string
	// url, if not nil, breaks what it must and returns the budget's URL,
	// or "" for the server's.
	url func(t testing.TB, s *fleettest.Server) string
	// fault, if not nil, runs once every process has made its first
	// decision.
	fault func(s *fleettest.Server, st *storm)
	load  bool
	// never: Redis is never usable, so each process may make one retry.
	never bool
	// restarts: how many times the fault brings Redis back empty, each a
	// full shared bucket again.
	restarts int
	cause    string // in every process's log, if not ""
}

// faultRows is the fault table: Redis healthy, on a loaded machine,
// killed, hung, restarted empty, full, down or silent.
func faultRows() []faultRow {
	return []faultRow{
		{name: "healthy"},
		{name: "loaded (4 busy loops)", load: true},
		{name: "killed (SIGKILL) mid-storm", fault: func(s *fleettest.Server, _ *storm) { s.Kill() }},
		{name: "hung (SIGSTOP) 5s mid-storm", fault: func(s *fleettest.Server, st *storm) {
			s.Stop()
			select { // everything after the fault is decided by then
			case <-st.exited:
			case <-time.After(5 * time.Second):
			}
			s.Continue()
		}},
		{name: "restarted empty mid-storm", restarts: 1, fault: func(s *fleettest.Server, _ *storm) {
			s.Kill()
			s.Restart()
		}},
		{name: "full (maxmemory, noeviction)", never: true, cause: "out of memory",
			url: func(t testing.TB, s *fleettest.Server) string { s.Fill(); return "" }},
		{name: "down from the start (closed port)", never: true, cause: "connection refused",
			url: func(t testing.TB, s *fleettest.Server) string {
				return "redis://" + fleettest.ClosedAddr(t) + "/0?key=storm"
			}},
		{name: "accepts, never answers", never: true, cause: "timeout",
			url: func(t testing.TB, s *fleettest.Server) string {
				return "redis://" + fleettest.Silent(t) + "/0?key=storm"
			}},
	}
}

// bounds are the fleet-wide retries a row allows a fleet of n, of which
// fellBack processes logged that they decided locally: exactly one
// budget's 4 when healthy, plus at most one for each process that missed
// a decision's 50 ms on a busy machine (the cautious fallback allows it
// one retry), at most 10 when loaded or hit mid-storm, at most one per
// process when Redis is never usable (never a full bucket each, 3n).
func (row faultRow) bounds(n, fellBack int) (lo, hi int) {
	switch {
	case row.never:
		return 0, n
	case row.name == "healthy":
		return 4, 4 + fellBack
	case row.load:
		return 4, 10
	}
	return 0, 10
}

// oneBudget is the retries that one shared budget of 10 tokens allows a
// storm of failures: a retry while more than half the tokens remain.
const oneBudget = 4

// splitRetries reads a process's log and returns the retries the shared
// budget allowed it (those made while it decided on Redis) and the most
// it made in one spell on its local budget (from a "Redis cannot be used"
// line to the next "can be used again" line, or the end). The cautious
// fallback allows at most one retry a spell, whenever and however often
// Redis fails: a fleet's retries are the shared budget's plus at most one
// for each process that fell back.
func splitRetries(log string) (shared, local int) {
	inLocal, spell := false, 0
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, "fleet: Redis cannot be used"):
			inLocal, spell = true, 0
		case strings.Contains(line, "fleet: Redis can be used again"):
			inLocal = false
		case strings.Contains(line, "; retrying in "):
			if !inLocal {
				shared++
				continue
			}
			spell++
			local = max(local, spell)
		}
	}
	return shared, local
}

// TestSplitRetries: the reading of a process's log that the fault table's
// per-process bound rests on.
func TestSplitRetries(t *testing.T) {
	const (
		retry  = "again run: attempt 1/4 failed (exit status 1); retrying in 1s\n"
		stop   = "again run: attempt 2/4 failed (exit status 1); not retrying: the --budget has too few tokens left\n"
		lost   = "again run: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget storm)\n"
		resume = "again run: fleet: Redis can be used again; retry decisions use the shared budget (budget storm)\n"
	)
	for _, tt := range []struct {
		name          string
		log           string
		shared, local int
	}{
		{"refused at once", stop, 0, 0},
		{"shared, then one local", retry + lost + retry + stop, 1, 1},
		{"two local in one spell", lost + retry + retry + stop, 0, 2},
		{"one local in each of two spells", lost + retry + resume + retry + lost + retry + stop, 1, 1},
	} {
		if shared, local := splitRetries(tt.log); shared != tt.shared || local != tt.local {
			t.Errorf("%s: splitRetries = %d shared, %d local; want %d, %d", tt.name, shared, local, tt.shared, tt.local)
		}
	}
}

// runRow runs one storm of n processes for row and returns the fleet's
// retries and how many processes logged that they decided locally, after
// checking each process's log names the cause.
func runRow(t testing.TB, row faultRow, n int, wait time.Duration) (retries, fellBack int) {
	s := fleettest.Start(t)
	url := s.URL("key=storm")
	if row.url != nil {
		if u := row.url(t, s); u != "" {
			url = u
		}
	}
	st := startStorm(t, n, url, wait, row.load)
	if row.fault != nil {
		<-st.firsts
		// The processes still running are those waiting for a retry the
		// budget allowed: without any, the fault would change nothing.
		if st.running.Load() == 0 {
			t.Errorf("%s: every process had exited before the fault: the storm was over", row.name)
		}
		row.fault(s, st)
	}
	got := st.wait()
	shared := 0
	for i, log := range st.stderrs {
		if row.cause != "" && strings.Count(log, "fleet: Redis cannot be used ("+row.cause) != 1 {
			t.Errorf("process %d's log does not say once that Redis cannot be used (%s):\n%s", i, row.cause, log)
		}
		if strings.Contains(log, "fleet: Redis cannot be used") {
			fellBack++
		}
		sh, local := splitRetries(log)
		shared += sh
		if local > 1 {
			t.Errorf("%s: process %d made %d retries on its local budget before Redis answered again, want at most 1 (the cautious fallback's one retry):\n%s", row.name, i, local, log)
		}
	}
	// The shared bucket's answers are exact whatever the machine's load:
	// one budget's retries per life of the Redis server, no more.
	if lives := 1 + row.restarts; shared > oneBudget*lives {
		t.Errorf("%s: the shared budget allowed %d retries, want at most %d (%d per empty Redis)", row.name, shared, oneBudget*lives, oneBudget)
	}
	// A healthy Redis that most processes could not use would make the
	// row's bound meaningless: a few misses on a busy machine, no more.
	if row.name == "healthy" && fellBack > n/10 {
		t.Errorf("%s: %d of %d processes decided locally; want at most %d", row.name, fellBack, n, n/10)
	}
	return got, fellBack
}

// TestFaultTable measures what a fleet of 30 again run --retries 3
// --budget processes, started together on a command that fails at once,
// retries in all when its Redis is healthy, busy, killed, hung, restarted
// empty, full, down or silent, and checks each row's bounds. Without a
// budget it would retry 90 times; one shared budget of 10 tokens allows 4.
func TestFaultTable(t *testing.T) {
	for _, row := range faultRows() {
		t.Run(row.name, func(t *testing.T) {
			got, fellBack := runRow(t, row, stormSize, time.Second)
			lo, hi := row.bounds(stormSize, fellBack)
			t.Logf("%s: the fleet of %d retried %d times (%d processes decided locally)", row.name, stormSize, got, fellBack)
			if got < lo || got > hi {
				t.Errorf("%s: the fleet of %d retried %d times, want %d to %d", row.name, stormSize, got, lo, hi)
			}
		})
	}
}

// BenchmarkFaultTable200 is the fault table with 200 processes, reporting
// each row's fleet-wide retries (retries/op). Retries wait 3 s, so that
// the processes allowed one are still waiting for it when the last of the
// 200 has made its first decision and a fault strikes. Every iteration is
// one storm, so run it once:
//
//	go test -run '^$' -bench FaultTable200 -benchtime 1x ./internal/cmd/run
func BenchmarkFaultTable200(b *testing.B) {
	const n = 200
	for _, row := range faultRows() {
		b.Run(row.name, func(b *testing.B) {
			total := 0
			for range b.N {
				got, fellBack := runRow(b, row, n, 3*time.Second)
				lo, hi := row.bounds(n, fellBack)
				if got < lo || got > hi {
					b.Errorf("%s: the fleet of %d retried %d times, want %d to %d", row.name, n, got, lo, hi)
				}
				total += got
			}
			b.ReportMetric(float64(total)/float64(b.N), "retries/op")
		})
	}
}
