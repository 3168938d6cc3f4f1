package wait

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/cmd/again/internal/ready"
	"github.com/again-go/again/cmd/again/internal/ready/readytest"
)

// slack is what a loaded machine (the race detector, parallel tests)
// adds to the time of a command, beyond the margin it promises.
const slack = 400 * time.Millisecond

// TestWaitNoOverrun checks that a wait for a target of every scheme on a
// port that accepts and never answers ends at its --deadline, within
// cmdutil.DeadlineOverrun (and room for a loaded machine), with status
// 124 and a line per target naming the deadline: whether the
// --attempt-timeout is shorter than the deadline or longer, no driver's own
// timeout wins.
func TestWaitNoOverrun(t *testing.T) {
	addr := readytest.Silent(t, "tcp", "127.0.0.1:0")
	var targets []string
	for _, s := range ready.Schemes() {
		switch s {
		case "tcp", "unix", "file":
			continue // a port that accepts is ready; a file never hangs
		case "kafka":
			targets = append(targets, "kafka://"+addr)
		case "redis", "rediss":
			targets = append(targets, s+"://u:pw@"+addr+"/0")
		default:
			targets = append(targets, s+"://u:pw@"+addr+"/db")
		}
	}
	targets = append(targets, "file://"+filepath.Join(t.TempDir(), "never"))
	const deadline = time.Second
	for _, attempt := range []string{"300ms", "5s"} {
		t.Run("--attempt-timeout "+attempt, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := run(t, append([]string{"wait", "--deadline", deadline.String(), "--attempt-timeout", attempt}, targets...)...)
			took := time.Since(start)
			if r.Code != cmdutil.ExitDeadline {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.Code, cmdutil.ExitDeadline, r.Stderr)
			}
			if n := strings.Count(r.Stderr, " not ready: stopped by the --deadline 1s after "); n != len(targets) {
				t.Errorf("%d of %d targets say the deadline stopped them; stderr:\n%s", n, len(targets), r.Stderr)
			}
			if took > deadline+cmdutil.DeadlineOverrun+slack {
				t.Errorf("wait --deadline %v --attempt-timeout %s took %v, more than %v over the deadline; stderr:\n%s",
					deadline, attempt, took, cmdutil.DeadlineOverrun, r.Stderr)
			}
		})
	}
}

// timedWriter records when each line was written to it.
type timedWriter struct {
	mu    sync.Mutex
	start time.Time
	buf   bytes.Buffer
	at    []time.Duration
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for range bytes.Count(p, []byte("\n")) {
		w.at = append(w.at, time.Since(w.start))
	}
	return w.buf.Write(p)
}

// TestReadyLineWhenReady checks that each target's line is written when
// it is ready: a port ready at once is told at once, not when a file that
// appears later is.
func TestReadyLineWhenReady(t *testing.T) {
	srv := httpServer(t)
	file := filepath.Join(t.TempDir(), "later")
	w := &timedWriter{start: time.Now()}
	env := cmdutil.Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: w}
	later := time.AfterFunc(600*time.Millisecond, func() { os.WriteFile(file, nil, 0o600) })
	defer later.Stop()
	code := againRunEnv(t.Context(), []string{"wait", "--deadline", "10s", "--max", "100ms", srv.Listener.Addr().String(), "file://" + file}, env)
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	if code != 0 || len(lines) != 2 || len(w.at) != 2 {
		t.Fatalf("exit %d, stderr %q; want 0 and two lines", code, w.buf.String())
	}
	if !strings.Contains(lines[0], srv.Listener.Addr().String()+" ready") || w.at[0] >= 600*time.Millisecond {
		t.Errorf("first line %q at %v, want the port's, before the file appeared at 600ms", lines[0], w.at[0])
	}
	if !strings.Contains(lines[1], "later ready") || w.at[1] < 600*time.Millisecond {
		t.Errorf("second line %q at %v, want the file's, once it appeared at 600ms", lines[1], w.at[1])
	}
}

// TestWaitSeesLateServer checks the promise of --deadline: a server that
// starts 1.2 s into a 2 s wait is seen ready, every time, however the
// jitter falls (the retry loop shortens its last wait rather than give up
// a wait early). Three waits at once.
func TestWaitSeesLateServer(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: seconds")
	}
	for i := range 3 {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			addr := closedPort(t)
			var ln net.Listener
			var mu sync.Mutex
			up := time.AfterFunc(1200*time.Millisecond, func() {
				mu.Lock()
				defer mu.Unlock()
				ln, _ = net.Listen("tcp", addr)
			})
			t.Cleanup(func() {
				up.Stop()
				mu.Lock()
				defer mu.Unlock()
				if ln != nil {
					ln.Close()
				}
			})
			r := run(t, "wait", "--deadline", "2s", addr)
			if r.Code != 0 {
				t.Errorf("wait --deadline 2s for a server up at 1.2 s: exit %d, stderr %q; want 0", r.Code, r.Stderr)
			}
		})
	}
}

// TestHelpMargin keeps the help's margin over the deadline that of the code.
func TestHelpMargin(t *testing.T) {
	long := NewCmd(&cmdutil.Env{}).Long + cmdtest.Guide(t) // the help, or the guide it points to
	if !strings.Contains(long, "within "+cmdutil.DeadlineOverrun.String()+" of the deadline") {
		t.Errorf("wait's help does not give the margin cmdutil.DeadlineOverrun = %v", cmdutil.DeadlineOverrun)
	}
}
