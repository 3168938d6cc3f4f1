package ready

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
	"github.com/again-go/again/fleet/fleettest"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A server that the tests of one binary share: started by the first test
// that needs it, stopped by TestMain.
type shared struct {
	once  sync.Once
	start func() (*readytest.Server, error)
	s     *readytest.Server
	err   error
}

func (sh *shared) get(t *testing.T) *readytest.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real server; skipped under -short")
	}
	sh.once.Do(func() { sh.s, sh.err = sh.start() })
	if sh.err != nil {
		t.Fatal(sh.err)
	}
	return sh.s
}

var (
	postgresServer = &shared{start: readytest.StartPostgres}
	mariadbServer  = &shared{start: readytest.StartMariaDB}
	natsServer     = &shared{start: readytest.StartNATS}
	natsTLSServer  = &shared{start: readytest.StartNATSTLS}
	rabbitServer   = &shared{start: func() (*readytest.Server, error) { return readytest.StartRabbitMQ(amqpUp) }}
	servers        = []*shared{postgresServer, mariadbServer, natsServer, natsTLSServer, rabbitServer}
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for _, sh := range servers {
		sh.once.Do(func() {}) // a server never started stays so
		if sh.s != nil {
			sh.s.Stop()
		}
	}
	if code == 0 {
		// Every driver's goroutines end with its check.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// scheme is the table row of one scheme's tests against its server.
type scheme struct {
	name string
	// server returns the address of a server that is up.
	server func(t *testing.T) string
	// url is a TARGET for a server at addr that should be ready.
	url func(addr string) string
	// wrong is a TARGET with wrong credentials, if the scheme has any.
	wrong func(addr string) string
}

func withPassword(format string) func(string) string {
	return func(addr string) string { return fmt.Sprintf(format, readytest.Password, addr) }
}

func withWrongPassword(format string) func(string) string {
	return func(addr string) string { return fmt.Sprintf(format, "wrong-pw", addr) }
}

func schemeCases() []scheme {
	return []scheme{
		{name: "tcp", server: httpServer, url: func(a string) string { return "tcp://" + a }},
		{name: "bare", server: httpServer, url: func(a string) string { return a }},
		{name: "http", server: httpServer, url: func(a string) string { return "http://" + a + "/healthz" }},
		{name: "grpc", server: grpcServer, url: func(a string) string { return "grpc://" + a }},
		{name: "postgres", server: func(t *testing.T) string { return postgresServer.get(t).Addr },
			url:   withPassword("postgres://app:%s@%s/app?sslmode=disable"),
			wrong: withWrongPassword("postgresql://app:%s@%s/app?sslmode=disable")},
		{name: "mysql", server: func(t *testing.T) string { return mariadbServer.get(t).Addr },
			url:   withPassword("mysql://app:%s@%s/app"),
			wrong: withWrongPassword("mysql://app:%s@%s/app")},
		{name: "redis", server: redisServer,
			url:   withPassword("redis://:%s@%s/0"),
			wrong: withWrongPassword("redis://:%s@%s/0")},
		{name: "amqp", server: func(t *testing.T) string { return rabbitServer.get(t).Addr },
			url:   withPassword("amqp://app:%s@%s/"),
			wrong: withWrongPassword("amqp://app:%s@%s/")},
		{name: "kafka", server: kafkaServer,
			url:   withPassword("kafka://app:%s@%s"),
			wrong: withWrongPassword("kafka://app:%s@%s")},
		{name: "nats", server: func(t *testing.T) string { return natsServer.get(t).Addr },
			url:   withPassword("nats://app:%s@%s"),
			wrong: withWrongPassword("nats://app:%s@%s")},
	}
}

func httpServer(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-State", "green")
		fmt.Fprintln(w, "status: ok")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

func grpcServer(t *testing.T) string {
	addr, _ := grpcHealth(t)
	return addr
}

// grpcHealth serves grpc.health.v1 on a free port: "" is SERVING, the
// service "app" NOT_SERVING until the test says otherwise.
func grpcHealth(t *testing.T) (string, *health.Server) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	h := health.NewServer()
	h.SetServingStatus("app", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(s, h)
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String(), h
}

func redisServer(t *testing.T) string {
	return fleettest.Start(t, "--requirepass", readytest.Password).Addr()
}

func kafkaServer(t *testing.T) string {
	if testing.Short() {
		t.Skip("needs kfake's cluster; skipped under -short")
	}
	c, err := newKafka(t, kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	return c.ListenAddrs()[0]
}

// newKafka starts a kfake cluster that authenticates "app" (SASL PLAIN,
// password Password) and answers a failed authentication as Kafka does.
func newKafka(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, error) {
	c, err := kfake.NewCluster(append(opts, kfake.EnableSASL(), kfake.Superuser("PLAIN", "app", readytest.Password))...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(c.Close)
	// kfake closes the connection on a failed SASL authentication; Kafka
	// (since 1.0, SaslAuthenticate) answers SASL_AUTHENTICATION_FAILED,
	// which is what the check relies on: answer as Kafka does.
	c.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		auth := req.(*kmsg.SASLAuthenticateRequest)
		parts := strings.Split(string(auth.SASLAuthBytes), "\x00")
		if len(parts) == 3 && parts[1] == "app" && parts[2] == readytest.Password {
			return nil, nil, false
		}
		resp := auth.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	return c, nil
}

// waitFor runs Wait on one target and returns its result.
func waitFor(t *testing.T, target string, opts *Options, deadline time.Duration) Result {
	t.Helper()
	tg, err := Parse(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Deadline = deadline
	cfg.AttemptTimeout = min(deadline, 5*time.Second)
	results, err := Wait(context.Background(), []Checker{tg}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if line := Line(r); strings.Contains(line, readytest.Password) || strings.Contains(line, "wrong-pw") {
		t.Errorf("the line shows the password: %s", line)
	}
	t.Log(Line(r))
	return r
}

// otherProtocol reports whether a last error says that the port does not
// speak the expected protocol, in the driver's words or the check's.
func otherProtocol(msg string) bool {
	for _, w := range []string{"HTTP", "another protocol", "not an AMQP"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// TestSchemes runs, for each scheme against its real server: already up,
// wrong credentials, never up, and a port that speaks HTTP instead.
// TestRealLateStart has the servers that come up while the wait runs.
func TestSchemes(t *testing.T) {
	for _, sc := range schemeCases() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			addr := sc.server(t)
			t.Run("up", func(t *testing.T) {
				r := waitFor(t, sc.url(addr), nil, 30*time.Second)
				if !r.Ready || r.Attempts != 1 {
					t.Errorf("a server that is up: ready %v after %d attempts (%v), want ready at the first", r.Ready, r.Attempts, r.Err)
				}
			})
			t.Run("never", func(t *testing.T) {
				port, err := readytest.FreePort()
				if err != nil {
					t.Fatal(err)
				}
				r := waitFor(t, sc.url(fmt.Sprintf("127.0.0.1:%d", port)), nil, 1500*time.Millisecond)
				if r.Ready || r.Permanent || r.Stopped || r.Err == nil || !strings.Contains(r.Err.Error(), "refused") {
					t.Errorf("nothing on the port: %+v, want not ready at the deadline, the connection refused", r)
				}
			})
			if sc.wrong != nil {
				t.Run("wrong credentials", func(t *testing.T) {
					r := waitFor(t, sc.wrong(addr), nil, 30*time.Second)
					if r.Ready || !r.Permanent || r.Attempts != 1 || !strings.Contains(r.Err.Error(), "wrong credentials") {
						t.Errorf("wrong credentials: %+v, want a permanent failure at the first attempt saying so", r)
					}
				})
			}
			if sc.name == "tcp" || sc.name == "bare" || sc.name == "http" {
				return // HTTP is the other protocol
			}
			t.Run("other protocol", func(t *testing.T) {
				r := waitFor(t, sc.url(httpServer(t)), nil, 2*time.Second)
				if r.Ready || r.Permanent || r.Err == nil || !otherProtocol(r.Err.Error()) {
					t.Errorf("an HTTP server on the port: %+v, want not ready, with a last error that says the port speaks another protocol", r)
				}
			})
		})
	}
}

func waitCfg(tg *Target, cfg Config) ([]Result, error) {
	return Wait(context.Background(), []Checker{tg}, cfg)
}

// amqpUp is RabbitMQ's start-up probe: "app" connects to the vhost.
func amqpUp(addr string) error {
	c, err := amqp.Dial("amqp://app:" + readytest.Password + "@" + addr + "/")
	if err == nil {
		c.Close()
	}
	return err
}

// lateServer starts a server of one scheme on addr (a loopback host:port,
// or a path for unix and file) and returns when it accepts, stopping it
// when t ends.
type lateServer func(t *testing.T, addr string) error

func withServer(start func(port int) (*readytest.Server, error)) lateServer {
	return func(t *testing.T, addr string) error {
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		s, err := start(port)
		if err != nil {
			return err
		}
		t.Cleanup(s.Stop)
		return nil
	}
}

// serveOn listens on addr and serves with serve (which returns at once)
// until t ends.
func serveOn(network string, serve func(l net.Listener) (stop func())) lateServer {
	return func(t *testing.T, addr string) error {
		l, err := net.Listen(network, addr)
		if err != nil {
			return err
		}
		t.Cleanup(serve(l))
		return nil
	}
}

func serveHTTP(l net.Listener) func() {
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })}
	go s.Serve(l)
	return func() { s.Close() }
}

func serveGRPC(l net.Listener) func() {
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(l)
	return s.Stop
}

// lateCases are TestRealLateStart's servers; rediss' presents the
// certificate that WriteCerts wrote in certs.
func lateCases(certs string) []struct {
	name  string
	start lateServer
	url   func(addr string) string
	after time.Duration // when the server starts, from the wait's start
} {
	return []struct {
		name  string
		start lateServer
		url   func(addr string) string
		after time.Duration
	}{
		{"postgres", withServer(readytest.StartPostgresOn), func(addr string) string {
			// The superuser: app does not exist until the server is up.
			return "postgres://postgres:" + readytest.Password + "@" + addr + "/postgres?sslmode=disable"
		}, time.Second},
		{"mysql", withServer(readytest.StartMariaDBOn), withPassword("mysql://app:%s@%s/app"), time.Second},
		{"amqp", withServer(func(port int) (*readytest.Server, error) { return readytest.StartRabbitMQOn(port, amqpUp) }),
			withPassword("amqp://app:%s@%s/"), time.Second},
		{"nats", withServer(readytest.StartNATSOn), withPassword("nats://app:%s@%s"), time.Second},
		{"redis", withServer(func(port int) (*readytest.Server, error) { return readytest.StartRedisOn(port) }), withPassword("redis://:%s@%s/0"), 1500 * time.Millisecond},
		{"rediss", withServer(func(port int) (*readytest.Server, error) { return readytest.StartRedisTLSOn(port, certs) }),
			withPassword("rediss://:%s@%s/0"), 1500 * time.Millisecond},
		{"kafka", func(t *testing.T, addr string) error {
			_, p, _ := net.SplitHostPort(addr)
			port, _ := strconv.Atoi(p)
			c, err := newKafka(t, kfake.Ports(port))
			if err == nil {
				t.Cleanup(c.Close)
			}
			return err
		}, withPassword("kafka://app:%s@%s"), 1500 * time.Millisecond},
		{"grpc", serveOn("tcp", serveGRPC), func(a string) string { return "grpc://" + a }, 1500 * time.Millisecond},
		{"http", serveOn("tcp", serveHTTP), func(a string) string { return "http://" + a + "/healthz" }, 1500 * time.Millisecond},
		{"tcp", serveOn("tcp", serveHTTP), func(a string) string { return "tcp://" + a }, 1500 * time.Millisecond},
		{"unix", serveOn("unix", serveHTTP), func(a string) string { return "unix://" + a }, 1500 * time.Millisecond},
		{"file", func(t *testing.T, path string) error { return os.WriteFile(path, nil, 0o644) },
			func(a string) string { return "file://" + a }, 1500 * time.Millisecond},
	}
}

// TestRealLateStart starts real servers on the port a wait is already
// polling (not a proxy in front of a server that is up), one to three
// seconds after the wait began: the wait must see each ready within one
// step of the schedule after it accepts, through whatever it answers while
// it starts (PostgreSQL: "the database system is starting up"; MariaDB and
// RabbitMQ: a port that accepts before the server answers).
func TestRealLateStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers; skipped under -short")
	}
	// rediss' certificate, made before the wait so that it can trust it.
	certs := t.TempDir()
	ca, err := readytest.WriteCerts(certs)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	opts := &Options{RootCAs: pool}
	for _, tc := range lateCases(certs) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := filepath.Join(t.TempDir(), tc.name)
			if tc.name != "unix" && tc.name != "file" {
				port, err := readytest.FreePort()
				if err != nil {
					t.Fatal(err)
				}
				addr = fmt.Sprintf("127.0.0.1:%d", port)
			}
			begin := time.Now()
			up := make(chan time.Duration, 1)
			timer := time.AfterFunc(tc.after, func() {
				if err := tc.start(t, addr); err != nil {
					t.Error(err)
					up <- -1
					return
				}
				up <- time.Since(begin)
			})
			defer timer.Stop()
			// RabbitMQ takes ten seconds or more to boot on a loaded machine.
			// The authority for rediss, given to every target: the others
			// must neither ask for TLS nor fail for it.
			r := waitFor(t, tc.url(addr), opts, 2*time.Minute)
			upAt := <-up
			if upAt < 0 {
				return
			}
			// upAt is when the helper saw the server ready, later than it
			// began accepting: the wait may end before it, never long after.
			if !r.Ready || r.Attempts < 2 || r.Elapsed > upAt+DefaultPolicy().Max+3*time.Second {
				t.Errorf("a server up at %v: ready %v after %v and %d attempts (%v), want ready within %v of it",
					upAt, r.Ready, r.Elapsed, r.Attempts, r.Err, DefaultPolicy().Max)
			}
		})
	}
}
