package ready

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// Schemes lists the TARGET schemes that Parse accepts, in the order the
// help names them. A bare HOST:PORT is tcp.
var schemes = []string{"tcp", "http", "https", "grpc", "grpcs", "postgres", "postgresql", "mysql",
	"redis", "rediss", "amqp", "amqps", "kafka", "nats", "unix", "file"}

// forms is the accepted form of a TARGET of each scheme, as the errors of
// Parse name it.
var forms = map[string]string{
	"tcp":      "tcp://HOST:PORT or HOST:PORT",
	"http":     "http://HOST[:PORT][/PATH]",
	"https":    "https://HOST[:PORT][/PATH]",
	"grpc":     "grpc://HOST:PORT[/SERVICE]",
	"grpcs":    "grpcs://HOST:PORT[/SERVICE]",
	"postgres": "postgres://USER:PASS@HOST[:PORT]/DB[?sslmode=...]",
	"mysql":    "mysql://USER:PASS@HOST[:PORT]/DB[?tls=true] or mysql://USER:PASS@tcp(HOST:PORT)/DB",
	"redis":    "redis://[USER:PASS@]HOST[:PORT][/DB]",
	"rediss":   "rediss://[USER:PASS@]HOST[:PORT][/DB]",
	"amqp":     "amqp://USER:PASS@HOST[:PORT][/VHOST]",
	"amqps":    "amqps://USER:PASS@HOST[:PORT][/VHOST]",
	"kafka":    "kafka://[USER:PASS@]HOST:PORT[,HOST:PORT...]",
	"nats":     "nats://[USER:PASS@]HOST[:PORT]",
	"unix":     "unix:///ABSOLUTE/PATH or unix:/ABSOLUTE/PATH",
	"file":     "file:///ABSOLUTE/PATH or file:/ABSOLUTE/PATH",
}

// want is the end of a Parse error for a target of scheme: its accepted
// form.
func want(scheme string) string {
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	return " (want " + forms[scheme] + ")"
}

// Schemes returns the TARGET schemes that Parse accepts, a new slice on
// each call.
func Schemes() []string { return slices.Clone(schemes) }

// ErrParse is matched (errors.Is) by every error of Parse and
// Options.Validate: a TARGET or an option that cannot be used, which no
// amount of waiting fixes.
var ErrParse = errors.New("ready: invalid target")

// Options are the extra checks that a target of the matching scheme must
// pass to count as ready, beyond the scheme's own (see Target.Check). The
// zero Options add none. An Options is read, never modified, by Parse and
// the checks, so one may be shared by concurrent waits.
type Options struct {
	// Status is the set of HTTP statuses that count as ready (after
	// redirects); empty means 200 to 299.
	Status []StatusRange
	// Body, if set, must match the HTTP response body (its first MiB).
	Body *regexp.Regexp
	// Header, if set, names an HTTP response header that must be present;
	// with HeaderValue set, one of its values must match it too.
	Header      string
	HeaderValue *regexp.Regexp
	// Table, if set, is a table that must exist (PostgreSQL: in the
	// search path, or schema-qualified; MySQL: in the URL's database).
	Table string
	// Key, if set, is a Redis key that must exist.
	Key string
	// RootCAs, if set, are the authorities trusted instead of the system's
	// wherever a target verifies a certificate against the system's: https,
	// grpcs, rediss, amqps, NATS when the server asks for TLS, PostgreSQL
	// (sslmode=verify-ca or verify-full, or require with no sslrootcert)
	// and MySQL (tls=true). They change neither whether a target uses TLS
	// nor whether it verifies (sslmode=require, skip_verify=true and
	// tls=skip-verify still do not), and an authority the URL names
	// (sslrootcert) wins. Nil means the system's roots.
	RootCAs *x509.CertPool
}

// StatusRange is an inclusive range of HTTP statuses: 200-299, or 204-204
// for one.
type StatusRange struct{ Min, Max int }

// StatusSyntax says what ParseStatus accepts, for messages.
const StatusSyntax = "a status or a range of statuses from 100 to 599, such as 200,204 or 200-399"

// ParseStatus parses a list of HTTP statuses and ranges such as
// "200,204,300-399".
func ParseStatus(s string) ([]StatusRange, error) {
	var out []StatusRange
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 100 || b > 599 || a > b {
			return nil, fmt.Errorf("%w: HTTP status %q: want %s", ErrParse, part, StatusSyntax)
		}
		out = append(out, StatusRange{a, b})
	}
	return out, nil
}

func (o *Options) statusOK(code int) bool {
	if len(o.Status) == 0 {
		return code >= 200 && code <= 299
	}
	for _, r := range o.Status {
		if code >= r.Min && code <= r.Max {
			return true
		}
	}
	return false
}

// Target is one TARGET of a wait: where to connect and what counts as
// ready. The zero Target is not usable: call Parse. A Target is immutable
// and safe for concurrent use.
type Target struct {
	scheme  string // one of schemes, postgresql read as postgres
	raw     string // as given
	shown   string // raw with its secrets masked
	secrets []string
	opts    *Options

	addr    string   // host:port (tcp, grpc, nats), or the path (unix, file)
	addrs   []string // kafka's brokers
	user    string   // kafka's SASL PLAIN user and password
	pass    string
	service string // grpc's health service
	url     *url.URL

	pg    *pgx.ConnConfig
	my    *mysql.Config
	redis *redis.Options
	amqp  amqp.URI
}

// Mask is what replaces a password or a secret query value in every
// string that Target shows.
const Mask = "xxxxx"

// String is the target as given, with its password and secret query
// values replaced by Mask.
func (t *Target) String() string { return t.shown }

// Scheme is the target's scheme: tcp for a bare HOST:PORT, postgres for
// postgresql.
func (t *Target) Scheme() string { return t.scheme }

// mask replaces the target's secrets in s, as given and URL-escaped, in
// one pass over s: text that a replacement wrote is never searched again,
// so a secret that Mask contains (a password "x") cannot make the line
// grow without end. A secret of 8 characters or more is masked wherever it
// appears. A shorter one is masked only where it stands as a token of its
// own, between characters that are not letters or digits (":pw@", "=pw&",
// "pw" in quotes): inside a word ("postgres" for a password "e") it is no
// sign of the secret, and masking it there would garble every message
// while hiding nothing that the token rule does not.
func (t *Target) mask(s string) string {
	forms := t.maskForms()
	if len(forms) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		for _, f := range forms {
			if strings.HasPrefix(s[i:], f) && (len(f) >= 8 || tokenAt(s, i, len(f))) {
				n = len(f)
				break
			}
		}
		if n == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(Mask)
		i += n
	}
	return b.String()
}

// maskForms is every form in which a secret may appear, the longest first
// so that a secret is masked whole before any shorter one inside it.
func (t *Target) maskForms() []string {
	var forms []string
	for _, sec := range t.secrets {
		for _, f := range []string{sec, url.QueryEscape(sec), url.PathEscape(sec)} {
			if f != "" && !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// tokenAt reports whether s[i:i+n] stands between characters that are not
// ASCII letters or digits (or the ends of s).
func tokenAt(s string, i, n int) bool {
	word := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return (i == 0 || !word(s[i-1])) && (i+n == len(s) || !word(s[i+n]))
}

// secretKey reports whether a query parameter holds a secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"pass", "secret", "token", "credential", "auth"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Parse parses a TARGET (see the package documentation for the schemes)
// and attaches opts, which may be nil, to it. Its errors match ErrParse and
// never show the target's password.
func Parse(s string, opts *Options) (*Target, error) {
	if opts == nil {
		opts = &Options{}
	}
	t := &Target{raw: s, opts: opts}
	given := s // shown as given, whatever form Parse reads it in
	if scheme, path, ok := strings.Cut(s, ":/"); ok && !strings.HasPrefix(path, "/") &&
		(strings.EqualFold(scheme, "unix") || strings.EqualFold(scheme, "file")) {
		// unix:/run/app.sock, as curl's --unix-socket users and Go's
		// url package write it: the same as unix:///run/app.sock.
		s = scheme + ":///" + path
		t.raw = s
	}
	if !strings.Contains(s, "://") {
		t.scheme, t.addr = "tcp", s
		t.shown = s
		if err := hostPort(s); err != nil {
			if scheme, _, _ := strings.Cut(s, ":"); slices.Contains(schemes, strings.ToLower(scheme)) {
				// unix:run/app.sock: a scheme, not a host.
				return nil, fmt.Errorf("%w: %q: not a %s TARGET%s", ErrParse, s, strings.ToLower(scheme), want(strings.ToLower(scheme)))
			}
			return nil, fmt.Errorf("%w: %q: %v (a TARGET is a URL such as tcp://db:5432 or unix:/run/app.sock, or HOST:PORT)", ErrParse, s, err)
		}
		return t, nil
	}
	scheme, rest, _ := strings.Cut(s, "://")
	t.scheme = strings.ToLower(scheme)
	if t.scheme == "postgresql" {
		t.scheme = "postgres"
	}
	if !slices.Contains(schemes, t.scheme) {
		t.shown = s
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			t.shown = scheme + "://" + Mask + rest[i:]
		}
		return nil, fmt.Errorf("%w: %q: unknown scheme %q (known: %s)", ErrParse, t.shown, scheme, strings.Join(schemes, ", "))
	}
	if t.scheme == "kafka" {
		return t, t.parseKafka(rest)
	}
	if t.scheme == "mysql" {
		s = mysqlDSN(scheme, rest)
	}
	u, err := url.Parse(s)
	if err != nil {
		// url's message quotes the whole URL, password included.
		return nil, fmt.Errorf("%w: %s: %v%s", ErrParse, t.redactRaw(given), unquoted(err), want(t.scheme))
	}
	t.url = u
	if p, ok := u.User.Password(); ok && p != "" {
		t.secrets = append(t.secrets, p)
		// The password as s writes it, too: escapes such as %2f or %5A
		// are not the ones maskForms would write, and a text that url
		// cannot escape back (%00) has no other form.
		if raw := rawPassword(s); raw != "" {
			t.secrets = append(t.secrets, raw)
		}
	}
	for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		// Each secret value as the query writes it, for the same reason,
		// and as it reads; a key written with escapes (pass%77ord) is
		// still a secret's.
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); v == "" || !secretKey(k) && (err != nil || !secretKey(uk)) {
			continue
		}
		t.secrets = append(t.secrets, v)
		if uv, err := url.QueryUnescape(v); err == nil && uv != "" {
			t.secrets = append(t.secrets, uv)
		}
	}
	t.shown = t.mask(given)
	if err := t.parseScheme(u); err != nil {
		return nil, fmt.Errorf("%w: %s: %s%s", ErrParse, t.shown, t.mask(err.Error()), want(t.scheme))
	}
	return t, nil
}

// mysqlDSN turns go-sql-driver's DSN form behind mysql:// (wait4x's),
// USER:PASS@tcp(HOST:PORT)/DB?PARAMS, into the URL form that Parse reads,
// mysql://USER:PASS@HOST:PORT/DB?PARAMS, escaping the user and password,
// which the DSN form takes raw. Anything else is returned as it is.
func mysqlDSN(scheme, rest string) string {
	info, addr := "", rest
	if i := strings.LastIndex(rest, "@tcp("); i >= 0 {
		info, addr = rest[:i], rest[i+1:]
	}
	addr, ok := strings.CutPrefix(addr, "tcp(")
	if !ok {
		return scheme + "://" + rest
	}
	host, tail, ok := strings.Cut(addr, ")")
	if !ok || tail != "" && tail[0] != '/' && tail[0] != '?' {
		return scheme + "://" + rest
	}
	if info != "" {
		user, pass, hasPass := strings.Cut(info, ":")
		u := url.User(user)
		if hasPass {
			u = url.UserPassword(user, pass)
		}
		info = u.String() + "@"
	}
	return scheme + "://" + info + host + tail
}

// rawPassword is the password of URL s as s writes it, escapes and all:
// the text after the user's colon, up to the last @ of the authority,
// which is where url.Parse reads it.
func rawPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:i], ":")
	return pw
}

// redactRaw hides the user information of a URL that url.Parse refused.
func (t *Target) redactRaw(s string) string {
	scheme, rest, _ := strings.Cut(s, "://")
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return scheme + "://" + Mask + rest[i:]
	}
	return s
}

// unquoted is the reason of a *url.Error without the URL it quotes.
func unquoted(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func hostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// withPort is u's host:port, with def as the port when u names none.
func withPort(u *url.URL, def string) (string, error) {
	if u.Hostname() == "" {
		return "", errors.New("no host")
	}
	port := u.Port()
	if port == "" {
		if def == "" {
			return "", errors.New("no port")
		}
		port = def
	}
	hp := net.JoinHostPort(u.Hostname(), port)
	return hp, hostPort(hp)
}

func (t *Target) parseScheme(u *url.URL) error {
	var err error
	switch t.scheme {
	case "tcp":
		t.addr, err = withPort(u, "")
	case "http", "https":
		if u.Host == "" {
			return errors.New("no host")
		}
	case "grpc", "grpcs":
		t.addr, err = withPort(u, "")
		t.service = strings.TrimPrefix(u.Path, "/")
	case "nats":
		t.addr, err = withPort(u, "4222")
	case "unix", "file":
		t.addr = u.Path
		if u.Host != "" || t.addr == "" {
			return errors.New("no absolute path")
		}
	case "postgres":
		t.pg, err = pgx.ParseConfig(t.raw)
		if err == nil {
			if t.pg.Password != "" && !slices.Contains(t.secrets, t.pg.Password) {
				t.secrets = append(t.secrets, t.pg.Password)
			}
			// In place: pgx's verify-ca check reads the roots of the very
			// configuration it made.
			t.trust(t.pg.TLSConfig)
			for _, f := range t.pg.Fallbacks {
				t.trust(f.TLSConfig)
			}
		}
	case "mysql":
		err = t.parseMySQL(u)
	case "redis", "rediss":
		t.redis, err = redis.ParseURL(t.raw)
		if err == nil {
			t.trust(t.redis.TLSConfig)
		}
	case "amqp", "amqps":
		t.amqp, err = amqp.ParseURI(t.raw)
	}
	return err
}

// trust sets Options.RootCAs as c's roots, in place, when c verifies
// against the system's: it has none of its own (a URL's sslrootcert) and
// is not told to skip verification (InsecureSkipVerify without pgx's
// verify-ca check). c may be nil: no TLS.
func (t *Target) trust(c *tls.Config) {
	if c == nil || t.opts.RootCAs == nil || c.RootCAs != nil || c.InsecureSkipVerify && c.VerifyPeerCertificate == nil {
		return
	}
	c.RootCAs = t.opts.RootCAs
}

// parseMySQL reads mysql://USER:PASS@HOST[:PORT]/DB[?tls=true|skip-verify]
// into the driver's Config.
func (t *Target) parseMySQL(u *url.URL) error {
	if strings.ContainsAny(u.Host, "()") {
		// A DSN address other than tcp(...), such as unix(/PATH).
		return fmt.Errorf("%q is not a host", u.Host)
	}
	addr, err := withPort(u, "3306")
	if err != nil {
		return err
	}
	c := mysql.NewConfig()
	c.Net, c.Addr = "tcp", addr
	c.User = u.User.Username()
	c.Passwd, _ = u.User.Password()
	c.DBName = strings.TrimPrefix(u.Path, "/")
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "tls":
			switch v {
			case "true":
				c.TLS = t.tlsConfig(u.Hostname())
			case "skip-verify", "preferred", "false":
				c.TLSConfig = v
			default:
				return fmt.Errorf("tls=%q: want true, false, skip-verify or preferred", v)
			}
		default:
			if c.Params == nil {
				c.Params = map[string]string{}
			}
			c.Params[k] = v
		}
	}
	t.my = c
	return nil
}

// parseKafka reads [USER:PASS@]HOST:PORT[,HOST:PORT...], which url.Parse
// does not take.
func (t *Target) parseKafka(rest string) error {
	rest, _, _ = strings.Cut(rest, "/")
	hosts := rest
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		info := rest[:i]
		hosts = rest[i+1:]
		user, pass, _ := strings.Cut(info, ":")
		var err1, err2 error
		t.user, err1 = url.PathUnescape(user)
		t.pass, err2 = url.PathUnescape(pass)
		if t.pass != "" {
			t.secrets = append(t.secrets, t.pass, pass)
		}
		if err1 != nil || err2 != nil {
			t.shown = "kafka://" + Mask + "@" + hosts
			return fmt.Errorf("%w: %s: the user information is not valid URL escaping", ErrParse, t.shown)
		}
	}
	t.shown = t.mask(t.raw)
	for h := range strings.SplitSeq(hosts, ",") {
		if err := hostPort(h); err != nil {
			return fmt.Errorf("%w: %s: broker %q: %v%s", ErrParse, t.shown, h, err, want("kafka"))
		}
		t.addrs = append(t.addrs, h)
	}
	return nil
}
