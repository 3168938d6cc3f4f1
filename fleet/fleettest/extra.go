package fleettest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/internal/testcert"
)

// StartTLS is Start for a server that speaks only TLS (rediss://), with a
// certificate for 127.0.0.1 signed by an authority made for the test,
// whose PEM file is CAFile. It does not ask clients for certificates.
func StartTLS(t testing.TB, args ...string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
	s := &Server{t: t, port: FreePort(t), dir: t.TempDir(), args: args}
	pool := writeCerts(t, s.dir)
	s.caFile = filepath.Join(s.dir, testcert.CAFile)
	s.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// writeCerts writes ca.pem, server.pem and server-key.pem in dir: an
// authority and a certificate it signed for 127.0.0.1, valid for a day.
func writeCerts(t testing.TB, dir string) *x509.CertPool {
	t.Helper()
	ca, err := testcert.Write(dir, "fleettest CA", nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// MasterName is the name under which a Sentinel of StartSentinel knows
// its master.
const MasterName = "fleettest"

// StartSentinel starts a Sentinel (redis-server --sentinel, as Debian's
// redis-sentinel runs it) on a free loopback port, watching master under
// MasterName with a quorum of one, and waits until it names the master.
// Its Addr is the Sentinel's, for a URL such as
// "redis://"+sentinel.Addr()+"/0?master_name="+fleettest.MasterName+"&key=test".
func StartSentinel(t testing.TB, master *Server) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	host, port, _ := net.SplitHostPort(master.Addr())
	text := fmt.Sprintf("sentinel monitor %s %s %s 1\nsentinel down-after-milliseconds %s 1000\n", MasterName, host, port, MasterName)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (scripts/test installs it: apt-get install redis-server redis-sentinel): %v", err)
	}
	s := &Server{t: t, port: FreePort(t), dir: dir, args: []string{conf}, sentinel: true}
	s.start()
	t.Cleanup(s.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Query("SENTINEL", "get-master-addr-by-name", MasterName)
		if err == nil && got == "*2" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinel on %s does not name its master after 10s: %q, %v", s.Addr(), got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Silent returns the address of a loopback port that accepts connections
// and never answers, as a server stuck before its first reply (or a
// firewall that drops the answers) would; it closes them when the test
// ends.
func Silent(t testing.TB) string {
	t.Helper()
	return serve(t, nil)
}

// serve listens on a loopback port and runs handle on each connection
// accepted, on a goroutine of its own (nil: only keep it open); it closes
// the listener and the connections, and waits for the goroutines, when the
// test ends.
func serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		conns    []net.Conn // written by the accepting goroutine only
		accepted sync.WaitGroup
		handlers sync.WaitGroup
	)
	accepted.Add(1)
	go func() {
		defer accepted.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			if handle != nil {
				handlers.Add(1)
				go func() {
					defer handlers.Done()
					handle(c)
				}()
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		accepted.Wait() // no connection is accepted after this
		for _, c := range conns {
			c.Close()
		}
		handlers.Wait()
	})
	return l.Addr().String()
}

// ClosedAddr returns a loopback address where nothing listens: dialling it
// is refused at once.
func ClosedAddr(t testing.TB) string {
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}

// Echoing returns the address of a loopback port that speaks the Redis
// protocol but knows no command but PING: it answers every other one as
// Redis answers a command it does not know (one renamed away, say),
// quoting the arguments cut at 128 characters:
//
//	-ERR unknown command 'AUTH', with args beginning with: 'hunter2...'
//
// A proxy or an old server that does not know AUTH or HELLO so echoes a
// client's password, in part when it is long: the test of code that must
// never log one. Connections are closed when the test ends.
func Echoing(t testing.TB) string {
	t.Helper()
	return serve(t, serveEcho)
}

// serveEcho answers the commands read from c until it fails.
func serveEcho(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		reply := "+PONG\r\n"
		if !strings.EqualFold(args[0], "PING") {
			reply = "-" + unknownCommand(args) + "\r\n"
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// unknownCommand is Redis's reply to a command it does not know
// (server.c, processCommand): the arguments quoted until 128 characters
// of them were written, the last one cut to fit.
func unknownCommand(args []string) string {
	var quoted strings.Builder
	for _, a := range args[1:] {
		if quoted.Len() >= 128 {
			break
		}
		fmt.Fprintf(&quoted, "'%.*s' ", 128-quoted.Len(), a)
	}
	return fmt.Sprintf("ERR unknown command '%.128s', with args beginning with: %s", args[0], quoted.String())
}

// readCommand reads one command in the protocol's array form.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || !strings.HasPrefix(line, "*") || n < 1 || n > 1024 {
		return nil, fmt.Errorf("fleettest: not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || !strings.HasPrefix(line, "$") || size < 0 || size > 1<<20 {
			return nil, fmt.Errorf("fleettest: not a bulk string: %q", line)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}
