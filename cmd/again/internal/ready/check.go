package ready

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func init() {
	// The MySQL driver logs some connection errors to stderr itself; the
	// check reports them, masked, through its error instead.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	// So does go-redis, for failed dials.
	redis.SetLogger(quiet{})
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Error is a failed check: why the target is not ready. Its text names the
// cause and never shows the target's secrets; Unwrap returns the driver's
// error (whose own text may show them: print the Error, not what it
// wraps).
type Error struct {
	// Permanent reports that waiting will not help: wrong credentials, an
	// unknown database or vhost, a TLS certificate that does not verify.
	Permanent bool
	msg       string
	err       error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// fail makes the *Error of a failed check: cause (may be empty) says in
// words what the driver's err means. The cause is said once: when the
// driver's text already says it ("dial tcp ...: connect: connection
// refused"), the driver's text alone is the message.
func (t *Target) fail(permanent bool, cause string, err error) *Error {
	msg := cause
	if err != nil {
		switch text := err.Error(); {
		case msg == "":
			msg = text
		case strings.Contains(strings.ToLower(text), strings.ToLower(cause)):
			msg = text
		default:
			msg += ": " + text
		}
	}
	// One line: pgx lists the addresses it tried on lines of their own.
	msg = strings.NewReplacer(":\n\t", ": ", "\n\t", "; ", "\n", " ").Replace(msg)
	return &Error{Permanent: permanent, msg: t.mask(msg), err: err}
}

// notReady is a transient failure without a driver error: the target
// answered, but not as ready.
func (t *Target) notReady(format string, args ...any) *Error {
	return t.fail(false, fmt.Sprintf(format, args...), nil)
}

// classify turns a driver's error that no scheme-specific rule claimed
// into an *Error: a TLS certificate that does not verify is permanent,
// anything else (refused, reset, timed out, a protocol the driver does not
// recognise) is "not up yet".
func (t *Target) classify(err error) *Error {
	var (
		verr  *tls.CertificateVerificationError
		uae   x509.UnknownAuthorityError
		he    x509.HostnameError
		cie   x509.CertificateInvalidError
		rhe   tls.RecordHeaderError
		e     *Error
		errno syscall.Errno
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &verr), errors.As(err, &uae), errors.As(err, &he), errors.As(err, &cie):
		return t.fail(true, "TLS certificate does not verify", err)
	case errors.As(err, &rhe):
		return t.fail(false, "the server does not speak TLS", err)
	case errors.As(err, &errno) && (errno == syscall.EACCES || errno == syscall.EPERM):
		return t.fail(true, "permission denied", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return t.fail(false, "connection refused", err)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return t.timedOut(err, false)
	}
	return t.fail(false, "", err)
}

// timedOut is the *Error of a check that its context (the attempt's
// timeout, or the deadline) ended: a timeout, said as one, whatever the
// driver made of it (amqp091-go reports it as a frame error, grpc-go as
// a status). accepts reports that the target's port accepted a TCP
// connection meanwhile (see probe), which tells a server that is slow to
// answer, or speaks another protocol, from one that cannot be reached.
// The driver's text is kept where it says more than that time ran out.
func (t *Target) timedOut(err error, accepts bool) *Error {
	cause := "timed out"
	switch {
	case !accepts:
	case t.scheme == "http", t.scheme == "https", t.scheme == "grpc", t.scheme == "grpcs":
		// A slow server, most likely: no guess at another protocol.
		cause = "timed out: the server accepted the connection but did not answer in time"
	default:
		cause = "timed out: the port accepts connections but gave no " + t.scheme +
			" answer in time (a slow server, or another protocol on this port)"
	}
	if err == nil || saysOnlyTimeout(err) {
		return &Error{msg: t.mask(cause), err: err}
	}
	return t.fail(false, cause, err)
}

// saysOnlyTimeout reports whether err's text says no more than that time
// ran out: "context deadline exceeded", "read tcp A->B: i/o timeout", a
// gRPC DeadlineExceeded.
func saysOnlyTimeout(err error) bool {
	text := err.Error()
	if status.Code(err) == codes.DeadlineExceeded {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op != "dial" && oe.Timeout() {
		return true
	}
	return text == context.DeadlineExceeded.Error() || text == "i/o timeout"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// probeReserve is the part of a check's time kept back to probe the port
// after a timeout (see probe): a tenth, at most probeMax, so that the
// probe too ends with the check's context.
func probeReserve(left time.Duration) time.Duration { return min(left/10, probeMax) }

const probeMax = 100 * time.Millisecond

// probe reports whether the target's port accepts a TCP connection
// before ctx ends: after a check timed out, it tells a server that took
// the connection but did not answer from one that could not be reached.
func (t *Target) probe(ctx context.Context) bool {
	addr := t.hostPort()
	if addr == "" || t.scheme == "tcp" {
		return false
	}
	return dial(ctx, "tcp", addr) == nil
}

// hostPort is the address that the target's check connects to first, or
// "" (unix, file).
func (t *Target) hostPort() string {
	switch t.scheme {
	case "tcp", "grpc", "grpcs", "nats":
		return t.addr
	case "kafka":
		return t.addrs[0]
	case "postgres":
		return net.JoinHostPort(t.pg.Host, strconv.Itoa(int(t.pg.Port)))
	case "mysql":
		return t.my.Addr
	case "redis", "rediss":
		return t.redis.Addr
	case "amqp", "amqps":
		return net.JoinHostPort(t.amqp.Host, strconv.Itoa(t.amqp.Port))
	case "http", "https":
		if t.url.Port() != "" {
			return t.url.Host
		}
		if t.scheme == "https" {
			return net.JoinHostPort(t.url.Hostname(), "443")
		}
		return net.JoinHostPort(t.url.Hostname(), "80")
	}
	return ""
}

// tlsConfig is the TLS configuration for host: Options.RootCAs, or the
// system's roots.
func (t *Target) tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, RootCAs: t.opts.RootCAs}
}

// Check makes one attempt at the target and returns nil if it is ready,
// or an *Error saying why not. It returns by ctx's end, whatever the
// driver's own timeouts: the driver gets ctx's deadline less a tenth (at
// most 100 ms), in which a check that timed out probes the port to say
// whether it accepts connections; a timeout is an *Error whose text starts
// "timed out". It is safe for concurrent use.
//
// What ready means for each scheme:
//
//	tcp, HOST:PORT   a connection is accepted
//	unix             the socket accepts a connection
//	file             the path exists
//	http, https      GET, after redirects, answers a status of the set
//	                 (2xx by default), and the body and header checks pass
//	grpc, grpcs      grpc.health.v1 Check of the service ("" by default)
//	                 answers SERVING
//	postgres         connected, authenticated, SELECT 1 on the database
//	mysql            connected, authenticated, SELECT 1 on the database
//	redis, rediss    AUTH if given, PING (LOADING is not ready), the key
//	                 exists
//	amqp, amqps      connected, and a channel opened on the vhost
//	kafka            metadata naming at least one broker
//	nats             connected, and a flush answered
func (t *Target) Check(ctx context.Context) error {
	// The driver gets ctx's time but the probe's reserve, so that a check
	// that times out has time to say why, and still returns by ctx's end.
	dctx, end := ctx, time.Time{}
	if dl, ok := ctx.Deadline(); ok {
		end = dl.Add(-probeReserve(time.Until(dl)))
		var cancel context.CancelFunc
		dctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
	}
	err := t.check(dctx)
	// A connection's own deadline (set from the context's) can fire just
	// before the context's timer: the clock says whether time ran out.
	ranOut := dctx.Err() != nil || !end.IsZero() && !time.Now().Before(end)
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e) && e.Permanent:
		return e
	case ranOut && ctx.Err() == nil:
		// The driver's time ran out, whatever it made of it.
		return t.timedOut(err, t.probe(ctx))
	case ranOut:
		return t.timedOut(err, false)
	}
	return t.classify(err)
}

// check is Check's attempt, its error not yet classified.
func (t *Target) check(ctx context.Context) error {
	var err error
	switch t.scheme {
	case "tcp":
		err = dial(ctx, "tcp", t.addr)
	case "unix":
		err = dial(ctx, "unix", t.addr)
	case "file":
		_, err = os.Stat(t.addr)
		if errors.Is(err, fs.ErrNotExist) {
			return t.notReady("%s does not exist", t.addr)
		}
	case "http", "https":
		err = t.checkHTTP(ctx)
	case "grpc", "grpcs":
		err = t.checkGRPC(ctx)
	case "postgres":
		err = t.checkPostgres(ctx)
	case "mysql":
		err = t.checkMySQL(ctx)
	case "redis", "rediss":
		err = t.checkRedis(ctx)
	case "amqp", "amqps":
		err = t.checkAMQP(ctx)
	case "kafka":
		err = t.checkKafka(ctx)
	case "nats":
		err = t.checkNATS(ctx)
	default:
		return t.fail(true, "unknown scheme "+t.scheme, nil)
	}
	return err
}

func dial(ctx context.Context, network, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// natsRequiresTLS dials addr and reads the server's greeting (INFO and a
// JSON object, in the clear), which says whether it requires TLS: given
// any TLS configuration, nats.go demands TLS of every server, so the
// roots of Options.RootCAs can be given only to one that requires it. A
// greeting that is not NATS's, or none, reads as no TLS: nats.Connect
// then says what is wrong.
func natsRequiresTLS(ctx context.Context, addr string) (bool, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	r := bufio.NewReader(c)
	if p, err := r.Peek(len("INFO ")); err != nil || string(p) != "INFO " {
		return false, nil
	}
	_, _ = r.Discard(len("INFO "))
	var info struct {
		TLSRequired bool `json:"tls_required"`
	}
	_ = json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&info)
	return info.TLSRequired, nil
}

func (t *Target) checkHTTP(ctx context.Context) error {
	tr := &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		TLSClientConfig:   t.tlsConfig(t.url.Hostname()),
		DisableKeepAlives: true,
		ForceAttemptHTTP2: true,
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.raw, nil)
	if err != nil {
		return t.fail(true, "", err)
	}
	req.Header.Set("User-Agent", "again-wait")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			// *url.Error quotes the URL; the target is named anyway.
			err = ue.Unwrap()
		}
		return err
	}
	defer resp.Body.Close()
	if !t.opts.statusOK(resp.StatusCode) {
		return t.notReady("HTTP status %d", resp.StatusCode)
	}
	if name := t.opts.Header; name != "" {
		vals := resp.Header.Values(name)
		if len(vals) == 0 {
			return t.notReady("no %s header in the response", name)
		}
		if re := t.opts.HeaderValue; re != nil && !anyMatch(re.MatchString, vals) {
			return t.notReady("header %s: %q does not match %s", name, vals[0], re)
		}
	}
	if re := t.opts.Body; re != nil {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return err
		}
		if !re.Match(body) {
			return t.notReady("the body does not match %s", re)
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return nil
}

func anyMatch(match func(string) bool, vals []string) bool {
	for _, v := range vals {
		if match(v) {
			return true
		}
	}
	return false
}

func (t *Target) checkGRPC(ctx context.Context) error {
	creds := insecure.NewCredentials()
	if t.scheme == "grpcs" {
		host, _, _ := net.SplitHostPort(t.addr)
		cfg := t.tlsConfig(host)
		// gRPC reports a failed handshake as an Unavailable status whose
		// text is all that is left of the cause: shake hands first, so that
		// a certificate that does not verify is recognised as such.
		d := tls.Dialer{Config: cfg}
		c, err := d.DialContext(ctx, "tcp", t.addr)
		if err != nil {
			return err
		}
		_ = c.Close()
		cfg.NextProtos = nil
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient("passthrough:///"+t.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return t.fail(true, "", err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: t.service})
	if err != nil {
		st := status.Convert(err)
		switch st.Code() {
		case codes.Unimplemented:
			return t.fail(true, "the server does not implement grpc.health.v1", err)
		case codes.Unauthenticated, codes.PermissionDenied:
			return t.fail(true, "wrong credentials", err)
		case codes.NotFound:
			return t.notReady("health: service %q unknown to the server", t.service)
		}
		return t.fail(false, "", err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return t.notReady("health: %s", s)
	}
	return nil
}

func (t *Target) checkPostgres(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, t.pg.Copy())
	if err != nil {
		return t.pgError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if t.opts.Table == "" {
		var one int
		return t.pgError(conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", t.opts.Table).Scan(&exists); err != nil {
		return t.pgError(err)
	}
	if !exists {
		return t.notReady("table %s does not exist", t.opts.Table)
	}
	return nil
}

// pgError classifies a PostgreSQL error by its SQLSTATE.
func (t *Target) pgError(err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	switch {
	case pe.Code == "28P01", pe.Code == "28000":
		return t.fail(true, "wrong credentials", pe)
	case pe.Code == "3D000":
		return t.fail(true, "unknown database", pe)
	case pe.Code == "57P03":
		return t.fail(false, "the database system is starting up", pe)
	case strings.HasPrefix(pe.Code, "42"):
		// Syntax or access rule violation: the query will not change.
		return t.fail(true, "", pe)
	}
	return t.fail(false, "", pe)
}

func (t *Target) checkMySQL(ctx context.Context) error {
	cfg := t.my.Clone()
	if d, ok := ctx.Deadline(); ok {
		cfg.Timeout = time.Until(d)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return t.fail(true, "", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return t.myError(err)
	}
	defer conn.Close()
	if t.opts.Table == "" {
		var one int
		return t.myError(conn.QueryRowContext(ctx, "SELECT 1").Scan(&one))
	}
	var n int
	err = conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", t.opts.Table).Scan(&n)
	if err != nil {
		return t.myError(err)
	}
	if n == 0 {
		return t.notReady("table %s does not exist", t.opts.Table)
	}
	return nil
}

// myError classifies a MySQL error by its number.
func (t *Target) myError(err error) error {
	var me *mysql.MySQLError
	if err == nil || !errors.As(err, &me) {
		if errors.Is(err, mysql.ErrMalformPkt) || errors.Is(err, mysql.ErrPktSync) {
			return t.fail(false, "not a MySQL server (yet)", err)
		}
		return err
	}
	switch me.Number {
	case 1045, 1698: // access denied (password, socket authentication)
		return t.fail(true, "wrong credentials", me)
	case 1044: // what a user without global privileges gets for a database that does not exist, too
		return t.fail(true, "unknown database or no access to it", me)
	case 1049:
		return t.fail(true, "unknown database", me)
	}
	return t.fail(false, "", me)
}

func (t *Target) checkRedis(ctx context.Context) error {
	o := *t.redis
	o.MaxRetries = -1
	// Two, not one: go-redis starts a goroutine that redials every second,
	// outliving Close by up to a second, once a pool's failed dials reach
	// PoolSize; a check dials at most once.
	o.PoolSize = 2
	o.DisableIdentity = true
	o.DialerRetries = 1 // the wait retries
	// go-redis bounds its reads and writes by ReadTimeout and
	// WriteTimeout (3 s), and the connection's handshake by nothing else,
	// unless told to follow the context: the attempt's time wins.
	o.ContextTimeoutEnabled = true
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = left, left, left, left
	}
	c := redis.NewClient(&o)
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return t.redisError(err)
	}
	if t.opts.Key != "" {
		n, err := c.Exists(ctx, t.opts.Key).Result()
		if err != nil {
			return t.redisError(err)
		}
		if n == 0 {
			return t.notReady("key %q does not exist", t.opts.Key)
		}
	}
	return nil
}

// redisError classifies a Redis error reply by its code, the reply's first
// word (the protocol's way of naming errors).
func (t *Target) redisError(err error) error {
	var re redis.Error
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	code, _, _ := strings.Cut(msg, " ")
	switch {
	case code == "LOADING":
		return t.fail(false, "loading its dataset", err)
	case code == "WRONGPASS", code == "NOAUTH", code == "NOPERM",
		code == "ERR" && (strings.Contains(msg, "invalid password") || strings.Contains(msg, "AUTH")):
		return t.fail(true, "wrong credentials", err)
	case code == "ERR" && strings.Contains(msg, "DB index is out of range"):
		return t.fail(true, "unknown database", err)
	}
	return t.fail(false, "", err)
}

func (t *Target) checkAMQP(ctx context.Context) error {
	cfg := amqp.Config{
		Properties: amqp.Table{"connection_name": "again wait"},
		Dial: func(network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// As amqp.DefaultDial: the handshake's deadline, which the
			// library clears once the connection is open.
			if dl, ok := ctx.Deadline(); ok {
				_ = c.SetDeadline(dl)
			}
			return c, nil
		},
	}
	if t.scheme == "amqps" {
		cfg.TLSClientConfig = t.tlsConfig(t.amqp.Host)
	}
	conn, err := amqp.DialConfig(t.raw, cfg)
	if err != nil {
		return t.amqpError(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return t.amqpError(err)
	}
	return ch.Close()
}

// amqpError classifies an AMQP connection exception by its reply code.
func (t *Target) amqpError(err error) error {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case errors.Is(err, amqp.ErrCredentials), ae.Code == amqp.AccessRefused && strings.Contains(ae.Reason, "password"):
		return t.fail(true, "wrong credentials", err)
	case errors.Is(err, amqp.ErrVhost), ae.Code == amqp.NotAllowed:
		return t.fail(true, "unknown vhost "+fmt.Sprintf("%q", t.amqp.Vhost)+" or no access to it", err)
	case ae.Code == amqp.AccessRefused:
		return t.fail(true, "access refused", err)
	case ae.Code == amqp.FrameError || ae.Code == amqp.SyntaxError:
		return t.fail(false, "not an AMQP 0-9-1 server (yet)", err)
	}
	return t.fail(false, "", err)
}

func (t *Target) checkKafka(ctx context.Context) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(t.addrs...),
		kgo.RequestRetries(0),
		kgo.ClientID("again-wait"),
	}
	if d, ok := ctx.Deadline(); ok {
		opts = append(opts, kgo.DialTimeout(time.Until(d)), kgo.RetryTimeout(time.Until(d)))
	}
	if t.user != "" || t.pass != "" {
		opts = append(opts, kgo.SASL(plain.Auth{User: t.user, Pass: t.pass}.AsMechanism()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return t.fail(true, "", err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState) || errors.Is(err, kerr.UnsupportedSaslMechanism) {
			return t.fail(true, "wrong credentials", err)
		}
		return err
	}
	if len(resp.Brokers) == 0 {
		return t.notReady("the metadata names no broker")
	}
	return nil
}

func (t *Target) checkNATS(ctx context.Context) error {
	// nats.go reports any failed dial as "no servers available": dial
	// first for the cause.
	secure, err := natsRequiresTLS(ctx, t.addr)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // the greeting took all the time
	}
	// nats.Connect takes no context: what is left of it, as its timeout.
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		if timeout = time.Until(d); timeout <= 0 {
			return context.DeadlineExceeded
		}
	}
	opts := []nats.Option{nats.Name("again wait"), nats.Timeout(timeout), nats.NoReconnect(), nats.NoCallbacksAfterClientClose()}
	if secure {
		opts = append(opts, nats.Secure(t.tlsConfig(t.url.Hostname())))
	}
	nc, err := nats.Connect(t.raw, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) {
			return t.fail(true, "wrong credentials", err)
		}
		return err
	}
	defer nc.Close()
	return nc.FlushWithContext(ctx)
}
