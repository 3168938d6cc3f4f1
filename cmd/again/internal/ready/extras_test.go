package ready

import (
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
	"github.com/again-go/again/fleet/fleettest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// want is what a result should be: "ready", "permanent" or "not ready"
// (at the deadline), with its last error containing msg.
func checkResult(t *testing.T, r Result, want, msg string) {
	t.Helper()
	got := "not ready"
	switch {
	case r.Ready:
		got = "ready"
	case r.Permanent:
		got = "permanent"
	}
	if got != want || (msg != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), msg))) {
		t.Errorf("%s: %s (%v), want %s with an error saying %q", r.Target, got, r.Err, want, msg)
	}
	if want == "permanent" && r.Attempts != 1 {
		t.Errorf("%s: permanent after %d attempts, want 1", r.Target, r.Attempts)
	}
}

func TestDatabases(t *testing.T) {
	for _, db := range []struct {
		name   string
		server *shared
		url    string
	}{
		{"postgres", postgresServer, "postgres://app:%s@%s/%s?sslmode=disable"},
		{"mysql", mariadbServer, "mysql://app:%s@%s/%s"},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			addr := db.server.get(t).Addr
			url := func(database string) string { return fmt.Sprintf(db.url, readytest.Password, addr, database) }
			t.Run("unknown database", func(t *testing.T) {
				r := waitFor(t, url("nope"), nil, 30*time.Second)
				checkResult(t, r, "permanent", "unknown database")
			})
			t.Run("table exists", func(t *testing.T) {
				r := waitFor(t, url(readytest.Database), &Options{Table: readytest.Table}, 30*time.Second)
				checkResult(t, r, "ready", "")
			})
			t.Run("table missing", func(t *testing.T) {
				r := waitFor(t, url(readytest.Database), &Options{Table: "migrations"}, 1500*time.Millisecond)
				checkResult(t, r, "not ready", "table migrations does not exist")
			})
		})
	}
	t.Run("postgres password in the query", func(t *testing.T) {
		t.Parallel()
		addr := postgresServer.get(t).Addr
		r := waitFor(t, "postgres://app@"+addr+"/app?sslmode=disable&password=wrong-pw", nil, 30*time.Second)
		checkResult(t, r, "permanent", "wrong credentials")
		if strings.Contains(r.Target, "wrong-pw") || !strings.Contains(r.Target, "password="+Mask) {
			t.Errorf("target %q: want the password masked", r.Target)
		}
	})
}

func TestRedisKey(t *testing.T) {
	t.Parallel()
	srv := fleettest.Start(t, "--requirepass", readytest.Password)
	url := "redis://:" + readytest.Password + "@" + srv.Addr() + "/0"
	r := waitFor(t, url, &Options{Key: "migrated"}, 1500*time.Millisecond)
	checkResult(t, r, "not ready", `key "migrated" does not exist`)
	if err := srv.Do("AUTH", readytest.Password); err != nil {
		t.Log(err) // Do uses a connection per command; SET below authenticates itself if needed
	}
	time.AfterFunc(time.Second, func() {
		if err := setKey(srv.Addr(), "migrated"); err != nil {
			t.Error(err)
		}
	})
	r = waitFor(t, url, &Options{Key: "migrated"}, 30*time.Second)
	checkResult(t, r, "ready", "")
	r = waitFor(t, "redis://:"+readytest.Password+"@"+srv.Addr()+"/99", nil, 30*time.Second)
	checkResult(t, r, "permanent", "unknown database")
}

// setKey sets key on a Redis that wants readytest.Password, with the
// protocol spoken by hand (fleettest's Do sends one command a connection).
func setKey(addr, key string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	cmd := fmt.Sprintf("AUTH %s\r\nSET %s 1\r\n", readytest.Password, key)
	if _, err := c.Write([]byte(cmd)); err != nil {
		return err
	}
	buf := make([]byte, 10)
	n, err := c.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "+OK") {
		return fmt.Errorf("setting %s: %q %v", key, buf[:n], err)
	}
	return nil
}

func TestAMQPVhost(t *testing.T) {
	t.Parallel()
	addr := rabbitServer.get(t).Addr
	r := waitFor(t, "amqp://app:"+readytest.Password+"@"+addr+"/nope", nil, 30*time.Second)
	checkResult(t, r, "permanent", `unknown vhost "nope"`)
}

func TestHTTPChecks(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-State", "green")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("/starting", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/healthz", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	status := func(s string) []StatusRange {
		r, err := ParseStatus(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		path string
		opts *Options
		want string
		msg  string
	}{
		{"/healthz", nil, "ready", ""},
		{"/moved", nil, "ready", ""},
		{"/starting", nil, "not ready", "HTTP status 503"},
		{"/starting", &Options{Status: status("503")}, "ready", ""},
		{"/healthz", &Options{Status: status("204,300-399")}, "not ready", "HTTP status 200"},
		{"/healthz", &Options{Body: regexp.MustCompile(`"status":"ok"`)}, "ready", ""},
		{"/healthz", &Options{Body: regexp.MustCompile(`"status":"up"`)}, "not ready", "the body does not match"},
		{"/healthz", &Options{Header: "X-State"}, "ready", ""},
		{"/healthz", &Options{Header: "X-State", HeaderValue: regexp.MustCompile(`^green$`)}, "ready", ""},
		{"/healthz", &Options{Header: "X-State", HeaderValue: regexp.MustCompile(`^red$`)}, "not ready", "does not match"},
		{"/healthz", &Options{Header: "X-Missing"}, "not ready", "no X-Missing header"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := waitFor(t, srv.URL+tc.path, tc.opts, 1500*time.Millisecond)
			checkResult(t, r, tc.want, tc.msg)
		})
	}
	t.Run("TLS that does not verify", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(mux)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes that fail on purpose
		srv.StartTLS()
		defer srv.Close()
		r := waitFor(t, srv.URL+"/healthz", nil, 30*time.Second)
		checkResult(t, r, "permanent", "TLS certificate does not verify")
		pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		r = waitFor(t, srv.URL+"/healthz", &Options{RootCAs: pool}, 30*time.Second)
		checkResult(t, r, "ready", "")
	})
}

func TestGRPCHealth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a gRPC server; skipped under -short")
	}
	addr, h := grpcHealth(t)
	time.AfterFunc(1500*time.Millisecond, func() { h.SetServingStatus("app", healthpb.HealthCheckResponse_SERVING) })
	r := waitFor(t, "grpc://"+addr+"/app", nil, 30*time.Second)
	checkResult(t, r, "ready", "")
	if r.Attempts < 2 {
		t.Errorf("a service NOT_SERVING for 1.5 s: ready at attempt %d, want later", r.Attempts)
	}
	r = waitFor(t, "grpc://"+addr+"/other", nil, 1500*time.Millisecond)
	checkResult(t, r, "not ready", `service "other" unknown`)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bare := grpc.NewServer() // no health service
	go bare.Serve(l)
	defer bare.Stop()
	r = waitFor(t, "grpc://"+l.Addr().String(), nil, 30*time.Second)
	checkResult(t, r, "permanent", "does not implement grpc.health.v1")
}

func TestUnixAndFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "app.sock")
	file := filepath.Join(dir, "ready")
	r := waitFor(t, "unix://"+sock, nil, 1500*time.Millisecond)
	checkResult(t, r, "not ready", "no such file")
	r = waitFor(t, "file://"+file, nil, 1500*time.Millisecond)
	checkResult(t, r, "not ready", "does not exist")

	listening := make(chan net.Listener, 1)
	time.AfterFunc(time.Second, func() {
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Error(err)
		}
		listening <- l
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Error(err)
		}
	})
	r = waitFor(t, "unix://"+sock, nil, 30*time.Second)
	checkResult(t, r, "ready", "")
	if l := <-listening; l != nil {
		defer l.Close()
	}
	r = waitFor(t, "file://"+file, nil, 30*time.Second)
	checkResult(t, r, "ready", "")
}

func TestInvertRealPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	time.AfterFunc(1500*time.Millisecond, func() { l.Close() })
	tg, _ := Parse(addr, nil)
	cfg := DefaultConfig()
	cfg.Invert = true
	cfg.Deadline = 30 * time.Second
	results, err := waitCfg(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if !r.Ready || r.Attempts < 2 || !strings.Contains(Line(r), "unreachable after") {
		t.Errorf("a port freed after 1.5 s, --invert: %s, want unreachable after a few attempts", Line(r))
	}
}

func TestTLSTargets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts TLS servers; skipped under -short")
	}
	// One certificate for both, httptest's, with its authority.
	https := httptest.NewTLSServer(http.NotFoundHandler())
	defer https.Close()
	trust := https.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&https.TLS.Certificates[0])))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(l)
	defer srv.Stop()
	grpcs := "grpcs://" + l.Addr().String()
	checkResult(t, waitFor(t, grpcs, nil, 30*time.Second), "permanent", "TLS certificate does not verify")
	checkResult(t, waitFor(t, grpcs, &Options{RootCAs: trust}, 30*time.Second), "ready", "")

	redis := fleettest.StartTLS(t)
	rediss := "rediss://" + redis.Addr() + "/0"
	checkResult(t, waitFor(t, rediss, nil, 30*time.Second), "permanent", "TLS certificate does not verify")
	pem, err := os.ReadFile(redis.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	checkResult(t, waitFor(t, rediss, &Options{RootCAs: pool}, 30*time.Second), "ready", "")
}

// TestTLSDatabases connects with TLS to the real PostgreSQL (ssl=on),
// MariaDB (ssl-cert) and RabbitMQ (its TLS listener), whose certificates
// an authority made at test time signed: without that authority the
// certificate does not verify (permanent, at the first attempt, saying
// so); with it the target is ready.
func TestTLSDatabases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server *shared
		url    func(s *readytest.Server) string
	}{
		{"postgres", postgresServer, func(s *readytest.Server) string {
			return "postgres://app:" + readytest.Password + "@" + s.Addr + "/app?sslmode=verify-full"
		}},
		{"mysql", mariadbServer, func(s *readytest.Server) string {
			return "mysql://app:" + readytest.Password + "@" + s.Addr + "/app?tls=true"
		}},
		{"amqps", rabbitServer, func(s *readytest.Server) string {
			return "amqps://app:" + readytest.Password + "@" + s.TLSAddr + "/"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.server.get(t)
			checkResult(t, waitFor(t, tc.url(s), nil, 30*time.Second), "permanent", "TLS certificate does not verify")
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				t.Fatalf("no certificate in %s", s.CAFile)
			}
			checkResult(t, waitFor(t, tc.url(s), &Options{RootCAs: pool}, 30*time.Second), "ready", "")
		})
	}
}

// poolOf reads the PEM authorities of file into a pool.
func poolOf(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", file)
	}
	return pool
}

// TestRootCAsKeepTheURLsTLS checks that Options.RootCAs (again wait's
// --cacert) changes only which authorities a verifying target trusts:
// with an authority that signed nothing here, a target that does not
// verify (sslmode=require, skip_verify=true) or does not use TLS (a NATS
// server without it) is still ready, while one that verifies
// (sslmode=verify-ca, NATS that asks for TLS) is refused until it is given
// the right authority.
func TestRootCAsKeepTheURLsTLS(t *testing.T) {
	other := t.TempDir()
	ca, err := readytest.WriteCerts(other)
	if err != nil {
		t.Fatal(err)
	}
	unrelated := &Options{RootCAs: poolOf(t, ca)}
	pg := postgresServer.get(t)
	pgURL := "postgres://app:" + readytest.Password + "@" + pg.Addr + "/app?sslmode="
	redis := fleettest.StartTLS(t)
	nats, natsTLS := natsServer.get(t), natsTLSServer.get(t)
	natsURL := func(addr string) string { return "nats://app:" + readytest.Password + "@" + addr }
	for _, c := range []struct {
		name, url string
		opts      *Options
		want, msg string
	}{
		{"postgres, require", pgURL + "require", unrelated, "ready", ""},
		{"postgres, verify-ca", pgURL + "verify-ca", unrelated, "permanent", "TLS certificate does not verify"},
		{"postgres, verify-ca, its authority", pgURL + "verify-ca", &Options{RootCAs: poolOf(t, pg.CAFile)}, "ready", ""},
		{"postgres, sslrootcert wins", pgURL + "verify-full&sslrootcert=" + pg.CAFile, unrelated, "ready", ""},
		{"rediss, skip_verify", "rediss://" + redis.Addr() + "/0?skip_verify=true", unrelated, "ready", ""},
		{"nats without TLS", natsURL(nats.Addr), unrelated, "ready", ""},
		{"nats with TLS", natsURL(natsTLS.Addr), nil, "permanent", "TLS certificate does not verify"},
		{"nats with TLS, its authority", natsURL(natsTLS.Addr), &Options{RootCAs: poolOf(t, natsTLS.CAFile)}, "ready", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkResult(t, waitFor(t, c.url, c.opts, 30*time.Second), c.want, c.msg)
		})
	}
}
