// Package fleettest starts a real redis-server for tests. It serves tests
// of code that uses package fleet: on a free loopback port, in a temporary directory, saving
// nothing, and stopped when the test ends. It is to fleet what
// net/http/httptest is to net/http, except that the server is Redis itself
// (Debian's redis-server package), never a fake: a test that needs one
// fails when redis-server is not installed, and skips only under -short.
//
//	s := fleettest.Start(t)
//	b, err := fleet.OpenBudget("redis://"+s.Addr()+"/0?key=test", nil)
//
// Kill, Stop, Continue and Restart let a test play the faults a fleet
// meets: a crash, a hang, and a restart that lost every key; Silent is a
// port that accepts connections and never answers, and Echoing one that
// knows no command and quotes the arguments of each, as Redis does a
// command it does not know (AUTH renamed away, or a proxy's). StartTLS serves
// rediss:// with a certificate authority of the test's own, and
// StartSentinel runs a Sentinel (Debian's redis-sentinel) watching a
// Server.
package fleettest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/internal/testcert"
)

// Server is a redis-server of a test's own. Its methods are safe for
// concurrent use. The zero value is not usable: call Start.
type Server struct {
	t        testing.TB
	port     int
	dir      string
	args     []string
	tls      *tls.Config // for Do on a TLS server, or nil
	caFile   string      // the TLS server's authority, or ""
	sentinel bool        // a Sentinel: args[0] is its configuration file

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts redis-server on a free loopback port with args appended to
// its command line (such as "--maxmemory", "1mb"), waits until it answers
// PING, and stops it when the test ends. Under -short it skips the test.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (scripts/test installs it: apt-get install redis-server): %v", err)
	}
	s := &Server{t: t, port: FreePort(t), dir: t.TempDir(), args: args}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// FreePort returns a loopback TCP port that nothing listened on a moment
// ago: for a server that the test starts itself, or a closed port.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Addr is the server's host:port on loopback.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is a fleet URL for the server's database 0 with the given query
// (such as "key=test&timeout=1s"), without a leading "?". For a TLS
// server it is a rediss:// URL with ca_file set.
func (s *Server) URL(query string) string {
	if s.caFile != "" {
		return "rediss://" + s.Addr() + "/0?ca_file=" + url.QueryEscape(s.caFile) + "&" + query
	}
	return "redis://" + s.Addr() + "/0?" + query
}

// CAFile is the PEM file of the authority that signed a TLS server's
// certificate (see StartTLS), or "" for a server without TLS.
func (s *Server) CAFile() string { return s.caFile }

// Dir is the server's working directory, where its log (redis.log) is.
func (s *Server) Dir() string { return s.dir }

func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command("redis-server")
	if s.sentinel {
		cmd.Args = append(cmd.Args, s.args[0], "--sentinel")
	}
	cmd.Args = append(cmd.Args, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--logfile", "redis.log", "--daemonize", "no")
	if s.sentinel {
		cmd.Args = append(cmd.Args, s.args[1:]...)
	} else {
		cmd.Args = append(cmd.Args, "--save", "", "--appendonly", "no")
		cmd.Args = append(cmd.Args, s.args...)
	}
	if s.tls != nil {
		cmd.Args[slices.Index(cmd.Args, "--port")] = "--tls-port"
		cmd.Args = append(cmd.Args, "--port", "0", "--tls-auth-clients", "no",
			"--tls-cert-file", filepath.Join(s.dir, testcert.CertFile),
			"--tls-key-file", filepath.Join(s.dir, testcert.KeyFile),
			"--tls-ca-cert-file", s.caFile)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Do("PING")
		var reply replyError
		if err == nil || errors.As(err, &reply) && strings.HasPrefix(string(reply), "NOAUTH") {
			return // a server with a password answers too
		}
		if time.Now().After(deadline) {
			s.Kill()
			s.t.Fatalf("redis-server on %s did not answer within 10s: %v", s.Addr(), err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Do sends one command to the server on a connection of its own and
// returns an error for a failed dial, a timeout (1 s) or an error reply.
// It needs no Redis client, so that this package depends on none.
func (s *Server) Do(args ...string) error {
	_, err := s.Query(args...)
	return err
}

// Query is Do returning the answer's first line without its type byte
// ("PONG" for PING, "2" for the integer 2, "*2" for an array of two), or
// a bulk string's value.
func (s *Server) Query(args ...string) (string, error) {
	d := &net.Dialer{Timeout: time.Second}
	var c net.Conn
	var err error
	if s.tls != nil {
		c, err = tls.DialWithDialer(d, "tcp", s.Addr(), s.tls)
	} else {
		c, err = d.Dial("tcp", s.Addr())
	}
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSpace(line)
	if n, err := strconv.Atoi(strings.TrimPrefix(line, "$")); err == nil && strings.HasPrefix(line, "$") && n >= 0 {
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	if strings.HasPrefix(line, "-") {
		return "", replyError(line[1:])
	}
	if strings.HasPrefix(line, "*") {
		return line, nil
	}
	return line[1:], nil
}

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}

// replyError is an error reply of Redis's, such as "NOAUTH Authentication
// required.".
type replyError string

func (e replyError) Error() string { return "redis: " + string(e) }

// Fill sets maxmemory just above what the server uses, with the
// noeviction policy, and writes keys until even a one-byte write is
// refused with OOM: every write fails from then on, reads still work.
// FLUSHALL frees the memory.
func (s *Server) Fill() {
	s.t.Helper()
	info, err := s.Query("INFO", "memory")
	if err != nil {
		s.t.Fatalf("INFO memory: %v", err)
	}
	var used int64
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if used == 0 {
		s.t.Fatalf("INFO memory has no used_memory: %q", info)
	}
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", strconv.FormatInt(used+1<<20, 10)}} {
		if err := s.Do("CONFIG", "SET", kv[0], kv[1]); err != nil {
			s.t.Fatalf("CONFIG SET %s: %v", kv[0], err)
		}
	}
	// Large values first, then ever smaller ones: a large SET that fails
	// frees its query buffer, which may leave room for a small one.
	n := 0
	for _, size := range []int{64 << 10, 1 << 10, 1} {
		for ; ; n++ {
			err := s.Do("SET", "fleettest:filler:"+strconv.Itoa(n), strings.Repeat("x", size))
			if err != nil && strings.Contains(err.Error(), "OOM") {
				break
			}
			if err != nil || n > 1<<16 {
				s.t.Fatalf("filling memory: SET %d: %v, want an OOM error after 1 MB", n, err)
			}
		}
	}
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit. Killing a server that is not running does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	if canStop {
		s.cmd.Process.Signal(sigCont) // a stopped process must run to die
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Stop stops the server with SIGSTOP: it keeps its port and connections
// but answers nothing, as a server stuck in a long command or swapping
// would, until Continue. Where there is no SIGSTOP (Windows), it fails the
// test.
func (s *Server) Stop() { s.pause(sigStop) }

// Continue lets a stopped server run again.
func (s *Server) Continue() { s.pause(sigCont) }

// pause sends Stop's or Continue's signal, or fails the test where the
// system has none.
func (s *Server) pause(sig syscall.Signal) {
	s.t.Helper()
	if !canStop {
		s.t.Fatalf("fleettest: Stop and Continue need SIGSTOP and SIGCONT, which %s does not have", runtime.GOOS)
	}
	s.signal(sig)
}

// Restart starts a killed server again on the same port. It comes back
// empty: it saves nothing.
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
}
