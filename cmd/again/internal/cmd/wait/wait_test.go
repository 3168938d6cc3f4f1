package wait

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/fleet/fleettest"
	"github.com/spf13/cobra"
)

func httpServer(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(s.Close)
	return s
}

// closedPort is a loopback address that refuses connections.
func closedPort(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(fleettest.FreePort(t))
}

func TestUsageErrors(t *testing.T) {
	srv := httpServer(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"wait"}, "again wait: missing the TARGET to wait for; usage: again wait [flags] TARGET... [-- COMMAND [ARG...]] (see 'again wait --help')"},
		{[]string{"wait", "--", "true"}, "again wait: missing the TARGET to wait for; usage: again wait [flags] TARGET... [-- COMMAND [ARG...]] (see 'again wait --help')"},
		{[]string{"wait", "db:5432", "--"}, "again wait: missing the COMMAND after --; usage: again wait [flags] TARGET... [-- COMMAND [ARG...]]"},
		{[]string{"wait", "ftp://u:hunter2@host/"}, `again wait: invalid target: "ftp://xxxxx@host/": unknown scheme "ftp" (known: tcp, http, https, grpc, grpcs, postgres, postgresql, mysql, redis, rediss, amqp, amqps, kafka, nats, unix, file)`},
		{[]string{"wait", "db"}, `again wait: invalid target: "db": address db: missing port in address (a TARGET is a URL such as tcp://db:5432 or unix:/run/app.sock, or HOST:PORT)`},
		{[]string{"wait", "unix:run/app.sock"}, `again wait: invalid target: "unix:run/app.sock": not a unix TARGET (want unix:///ABSOLUTE/PATH or unix:/ABSOLUTE/PATH)`},
		{[]string{"wait", "mysql://app:hunter2@tcp(db)x/app"}, `again wait: invalid target: mysql://app:xxxxx@tcp(db)x/app: "tcp(db)x" is not a host (want mysql://USER:PASS@HOST[:PORT]/DB[?tls=true] or mysql://USER:PASS@tcp(HOST:PORT)/DB)`},
		{[]string{"wait", "--format", "yaml", "db:1"}, `again wait: --format "yaml": want one of text or json`},
		{[]string{"wait", "--table", "t", srv.URL}, "again wait: --table applies to postgres or mysql targets, and no TARGET is one"},
		{[]string{"wait", "--key", "k", srv.URL}, "again wait: --key applies to redis or rediss targets, and no TARGET is one"},
		{[]string{"wait", "--expect-header", "X-Ready", "db:1"}, "again wait: --expect-header applies to http or https targets, and no TARGET is one"},
		{[]string{"wait", "--expect-status", "200-", srv.URL}, `again wait: --expect-status "200-": want a status or a range of statuses from 100 to 599, such as 200,204 or 200-399`},
		{[]string{"wait", "--expect-body", "(", srv.URL}, "again wait: --expect-body \"(\": want a regexp (RE2 syntax): error parsing regexp: missing closing ): `(`"},
		// 0 is none everywhere, but a wait is never unbounded.
		{[]string{"wait", "--deadline", "0", "db:1"}, `again wait: --deadline "0": want a duration above 0: a wait is never unbounded; give a long one, such as 24h`},
		{[]string{"wait", "--deadline", "0s", "db:1"}, `again wait: --deadline "0s": want a duration above 0: a wait is never unbounded; give a long one, such as 24h`},
		{[]string{"wait", "--deadline", "30", "db:1"}, "again wait: --deadline \"30\": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"wait", "--multiplier", "0.5", "db:1"}, "again wait: --multiplier \"0.5\": want a finite number >= 1"},
		{[]string{"wait", "--cacert", "/nonexistent/ca.pem", srv.URL}, `again wait: --cacert: cannot read "/nonexistent/ca.pem": no such file or directory`},
		{[]string{"wait", "--cacert", notPEM, srv.URL}, `again wait: --cacert "` + notPEM + `": want a file of PEM certificates (it holds none)`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, tc.args...)
			wantUsageError(t, r, tc.want)
			if strings.Contains(r.Stderr, "hunter2") {
				t.Errorf("stderr %q shows the password", r.Stderr)
			}
		})
	}
}

func TestReady(t *testing.T) {
	srv := httpServer(t)
	addr := srv.Listener.Addr().String()
	r := run(t, "wait", srv.URL+"/healthz", addr, "tcp://"+addr)
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if r.Code != 0 || r.Stdout != "" || len(lines) != 3 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and a line per target", r.Code, r.Stdout, r.Stderr)
	}
	// In the order they became ready, which the test does not know.
	for _, target := range []string{srv.URL + "/healthz", addr, "tcp://" + addr} {
		want := "again wait: " + target + " ready after 1 attempt, "
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("lines %q, want one starting %q", lines, want)
		}
	}
	if r := run(t, "wait", "-q", srv.URL); r.Code != 0 || r.Stderr != "" {
		t.Errorf("-q: exit %d, stderr %q; want 0 and nothing", r.Code, r.Stderr)
	}
}

// A response's checks are --expect-status, --expect-body and
// --expect-header, which cannot be read as a request's (fetch's
// -H/--header sends one). The old names still check, each with one
// warning naming the new one.
func TestExpectChecks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ready", "yes")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status": "ok"}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		args     []string
		code     int
		warnings []string
	}{
		{[]string{"--expect-status", "202", "--expect-body", `"ok"`, "--expect-header", "X-Ready=^yes$"}, 0, nil},
		{[]string{"--status", "202", "--body", `"ok"`, "--header", "X-Ready=^yes$"}, 0, []string{
			"again wait: --status is now --expect-status; it still works, but write --expect-status",
			"again wait: --body is now --expect-body; it still works, but write --expect-body",
			"again wait: --header is now --expect-header; it still works, but write --expect-header",
		}},
		// Each check is made: one that fails leaves the target not ready.
		{[]string{"--expect-status", "200"}, ExitDeadline, nil},
		{[]string{"--expect-body", "down"}, ExitDeadline, nil},
		{[]string{"--expect-header", "X-Ready=no"}, ExitDeadline, nil},
		{[]string{"--header", "X-Missing"}, ExitDeadline, []string{"again wait: --header is now --expect-header; it still works, but write --expect-header"}},
	} {
		args := append([]string{"wait", "-q", "--deadline", "500ms"}, tc.args...)
		r := run(t, append(args, srv.URL)...)
		var warnings []string
		for line := range strings.Lines(r.Stderr) {
			if strings.Contains(line, " is now --") {
				warnings = append(warnings, strings.TrimSuffix(line, "\n"))
			}
		}
		if r.Code != tc.code || !slices.Equal(warnings, tc.warnings) {
			t.Errorf("again %q: exit %d, stderr %q; want %d and the warnings %q", args, r.Code, r.Stderr, tc.code, tc.warnings)
		}
	}
}

func TestDeadline(t *testing.T) {
	srv := httpServer(t)
	closed := closedPort(t)
	r := run(t, "wait", "--deadline", "1s", "-q", srv.URL, "postgres://app:hunter2@"+closed+"/app")
	if r.Code != ExitDeadline {
		t.Errorf("exit %d, want %d", r.Code, ExitDeadline)
	}
	want := "again wait: postgres://app:xxxxx@" + closed + "/app not ready: stopped by the --deadline 1s after "
	if !strings.HasPrefix(r.Stderr, want) || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "connection refused") {
		t.Errorf("stderr %q, want one line starting %q, the connection refused", r.Stderr, want)
	}
	if strings.Contains(r.Stderr, "hunter2") {
		t.Errorf("stderr %q shows the password", r.Stderr)
	}
}

func TestPermanent(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake fails on purpose
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	closed := closedPort(t)
	// The other target would wait the whole deadline: the permanent
	// failure ends the wait at once.
	r := run(t, "wait", "--deadline", "1m", tlsSrv.URL, closed)
	if r.Code != cmdutil.ExitFailure {
		t.Errorf("exit %d, want 1", r.Code)
	}
	want := "again wait: " + tlsSrv.URL + " will not be ready: TLS certificate does not verify: "
	if !strings.HasPrefix(r.Stderr, want) || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("stderr %q, want the one line %q...", r.Stderr, want)
	}
}

// --cacert trusts a server whose authority the system does not know: the
// wait that would fail at once (TestPermanent) is ready.
func TestCACert(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "wait", "--cacert", ca, tlsSrv.URL); r.Code != 0 || !strings.Contains(r.Stderr, tlsSrv.URL+" ready after 1 attempt") {
		t.Errorf("exit %d, stderr %q; want 0 and the target ready", r.Code, r.Stderr)
	}
}

func TestRedisWrongPassword(t *testing.T) {
	srv := fleettest.Start(t, "--requirepass", "right-pw")
	r := run(t, "wait", "redis://:wrong-pw@"+srv.Addr()+"/0")
	want := "again wait: redis://:xxxxx@" + srv.Addr() + "/0 will not be ready: wrong credentials: WRONGPASS"
	if r.Code != cmdutil.ExitFailure || !strings.HasPrefix(r.Stderr, want) || strings.Contains(r.Stderr, "wrong-pw") {
		t.Errorf("exit %d, stderr %q; want 1 and %q...", r.Code, r.Stderr, want)
	}
	if r := run(t, "wait", "redis://:right-pw@"+srv.Addr()+"/0"); r.Code != 0 {
		t.Errorf("the right password: exit %d, stderr %q; want 0", r.Code, r.Stderr)
	}
}

func TestJSON(t *testing.T) {
	srv := httpServer(t)
	closed := closedPort(t)
	r := run(t, "wait", "--format", "json", "--deadline", "1s", srv.URL, "nats://u:hunter2@"+closed)
	// The objects on stdout, for jq; the human lines stay on stderr.
	if r.Code != ExitDeadline || !strings.Contains(r.Stderr, "again wait: "+srv.URL+" ready after 1 attempt") {
		t.Fatalf("exit %d, stderr %q; want %d and the human lines on stderr", r.Code, r.Stderr, ExitDeadline)
	}
	var objs []map[string]any
	for line := range strings.Lines(r.Stdout) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		objs = append(objs, m)
	}
	if len(objs) != 2 {
		t.Fatalf("stdout %q: want 2 objects", r.Stdout)
	}
	if o := objs[0]; o["target"] != srv.URL || o["ready"] != true || o["attempts"] != 1.0 || o["last_error"] != nil {
		t.Errorf("first object %v, want the HTTP target ready at the first attempt", o)
	}
	if o := objs[1]; o["target"] != "nats://u:xxxxx@"+closed || o["ready"] != false || o["reason"] != "deadline" || o["deadline_ms"] != 1000.0 || !strings.Contains(fmt.Sprint(o["last_error"]), "refused") {
		t.Errorf("second object %v, want the NATS target, its password masked, not ready for the deadline of 1 s, refused", o)
	}
	if _, ok := objs[1]["elapsed_ms"].(float64); !ok || strings.Contains(r.Stdout+r.Stderr, "hunter2") {
		t.Errorf("stdout %q: want elapsed_ms, and no password anywhere", r.Stdout)
	}
}

// waitWith runs waitRun on the command line args (flags and TARGETs, no
// COMMAND) and command, with the test's exec and terminal, and returns
// what it wrote on stderr and its error.
func waitWith(t *testing.T, args, command []string, exec func(string, []string, []string) error, terminal func(io.Writer) (int, bool)) (string, error) {
	t.Helper()
	var stderr bytes.Buffer
	env := &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr}
	cmd := &cobra.Command{Use: "wait"}
	opts := newOptions(env, cmd)
	fs := cmd.Flags()
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	opts.Targets, opts.Command = fs.Args(), command
	if exec != nil {
		opts.Exec = exec
	}
	opts.Terminal = terminal
	err := waitRun(context.Background(), opts)
	return stderr.String(), err
}

func TestExecAfterReady(t *testing.T) {
	srv := httpServer(t)
	var path string
	var argv []string
	record := func(p string, a, env []string) error {
		path, argv = p, a
		return nil
	}
	stderr, err := waitWith(t, []string{srv.URL}, []string{"sh", "-c", "exit 3"}, record, nil)
	want, _ := exec.LookPath("sh")
	if err != nil || path != want || strings.Join(argv, " ") != "sh -c exit 3" {
		t.Errorf("waitRun = %v (stderr %q), exec(%q, %q); want exec(%q, [sh -c exit 3]) after the ready line", err, stderr, path, argv, want)
	}
	path = ""
	_, err = waitWith(t, []string{"--deadline", "500ms", closedPort(t)}, []string{"sh"}, record, nil)
	if code, _ := cmdutil.ExitCode(err); code != ExitDeadline || path != "" {
		t.Errorf("a target never ready: exit %d, exec %q; want %d and no exec", code, path, ExitDeadline)
	}
	_, err = waitWith(t, []string{srv.URL}, []string{"no-such-command-again-wait"}, record, nil)
	if code, _ := cmdutil.ExitCode(err); code != ExitNotFound || path != "" {
		t.Errorf("a COMMAND not found: exit %d, exec %q; want %d before waiting, and no exec", code, path, ExitNotFound)
	}
}

func TestLiveLines(t *testing.T) {
	srv := httpServer(t)
	terminal := func(io.Writer) (int, bool) { return 60, true }
	stderr, err := waitWith(t, []string{"--deadline", "1s", srv.URL, closedPort(t)}, nil, nil, terminal)
	if code, _ := cmdutil.ExitCode(err); code != ExitDeadline {
		t.Errorf("exit %d, want %d", code, ExitDeadline)
	}
	if !strings.Contains(stderr, "\x1b[2A") || !strings.Contains(stderr, " waiting, attempt 1, ") {
		t.Errorf("stderr %q: want live lines redrawn in place", stderr)
	}
	last := stderr[strings.LastIndex(stderr, "\x1b[2A"):]
	if !strings.Contains(last, srv.URL+" ready after 1 attempt") || !strings.Contains(last, " not ready: stopped by the --deadline 1s after ") {
		t.Errorf("the last frame %q: want the final line of each target", last)
	}
}

// TestExecKeepsPID runs the again program (the test binary) and checks
// that COMMAND replaced it: same PID, its exit status.
func TestExecKeepsPID(t *testing.T) {
	srv := httpServer(t)
	cmd := cmdtest.AgainCommand(t, "wait", "-q", srv.URL, "--", "sh", "-c", "echo $$; exit 7")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("again wait -- sh: %v, output %q; want exit status 7, the command's", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("the command ran as PID %s, again as %d: want the same process", got, cmd.Process.Pid)
	}
}

// TestSignalStopsTheWait sends SIGTERM to a waiting again: it stops at
// once and exits 128+15, as every command of again does.
func TestSignalStopsTheWait(t *testing.T) {
	// A port that accepts and never answers: its first connection says
	// that again is waiting, its signals taken over.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd, _, out := cmdtest.AgainProcess(t, "wait", "--deadline", "1m", "postgres://u:p@"+l.Addr().String()+"/db?sslmode=disable")
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(30 * time.Second):
		t.Fatalf("again wait never connected; output %q", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("again wait after SIGTERM: %v, output %q; want exit status 143", err, out.String())
	}
	if !strings.Contains(out.String(), "again wait: stopped: received SIGTERM") {
		t.Errorf("output %q: want the line saying the signal stopped it", out.String())
	}
}
