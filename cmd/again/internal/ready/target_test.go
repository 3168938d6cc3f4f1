package ready

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, scheme, shown string
	}{
		{"db:5432", "tcp", "db:5432"},
		{"127.0.0.1:80", "tcp", "127.0.0.1:80"},
		{"[::1]:80", "tcp", "[::1]:80"},
		{"tcp://db:5432", "tcp", "tcp://db:5432"},
		{"http://web/healthz", "http", "http://web/healthz"},
		{"https://u:pw@web/healthz?token=abc&x=1", "https", "https://u:xxxxx@web/healthz?token=xxxxx&x=1"},
		{"grpc://api:9000", "grpc", "grpc://api:9000"},
		{"grpcs://api:9000/app.v1.Svc", "grpcs", "grpcs://api:9000/app.v1.Svc"},
		{"postgres://app:pw@db:5432/app?sslmode=disable", "postgres", "postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"postgresql://app@db/app?password=pw&sslmode=disable", "postgres", "postgresql://app@db/app?password=xxxxx&sslmode=disable"},
		{"mysql://app:pw@db:3306/app", "mysql", "mysql://app:xxxxx@db:3306/app"},
		{"mysql://app:pw@db/app?tls=skip-verify", "mysql", "mysql://app:xxxxx@db/app?tls=skip-verify"},
		{"redis://:pw@cache:6379/0", "redis", "redis://:xxxxx@cache:6379/0"},
		{"rediss://cache:6380", "rediss", "rediss://cache:6380"},
		{"amqp://guest:pw@mq:5672/", "amqp", "amqp://guest:xxxxx@mq:5672/"},
		{"amqps://guest:pw@mq/vh", "amqps", "amqps://guest:xxxxx@mq/vh"},
		{"kafka://k1:9092,k2:9092", "kafka", "kafka://k1:9092,k2:9092"},
		{"kafka://u:p%40ss@k1:9092", "kafka", "kafka://u:xxxxx@k1:9092"},
		{"nats://app:pw@nats:4222", "nats", "nats://app:xxxxx@nats:4222"},
		{"nats://nats", "nats", "nats://nats"},
		{"unix:///run/app.sock", "unix", "unix:///run/app.sock"},
		{"unix:/run/app.sock", "unix", "unix:/run/app.sock"},
		{"file:///tmp/ready", "file", "file:///tmp/ready"},
		{"file:/tmp/ready", "file", "file:/tmp/ready"},
		{"mysql://app:p@ss@tcp(db:3306)/app?tls=skip-verify", "mysql", "mysql://app:xxxxx@tcp(db:3306)/app?tls=skip-verify"},
		{"mysql://app@tcp(db)/app", "mysql", "mysql://app@tcp(db)/app"},
		{"HTTP://web", "http", "HTTP://web"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in, nil)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.in, err)
			}
			if got.Scheme() != tc.scheme || got.String() != tc.shown || got.Scheme() == "mysql" && got.my.Addr == "" {
				t.Errorf("Parse(%q) = %s %q, want %s %q", tc.in, got.Scheme(), got.String(), tc.scheme, tc.shown)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"db", "missing port"},
		{"db:http", "port"},
		{":5432", "no host"},
		{"ftp://u:topsecret@host", "unknown scheme"},
		{"tcp://db", "no port"},
		{"grpc://api", "no port"},
		{"http://", "no host"},
		{"unix://relative", "unix:///ABSOLUTE/PATH"},
		{"unix:relative", "unix:/ABSOLUTE/PATH"},
		{"file://", "file:///ABSOLUTE/PATH"},
		{"tcp://db", "want tcp://HOST:PORT"},
		{"grpc://api", "want grpc://HOST:PORT"},
		{"nats://nats:x", "want nats://"},
		{"redis://cache:x", "want redis://"},
		{"amqp://u:topsecret@mq:x/", "want amqp://"},
		{"postgres://app:topsecret@db:x/app", "want postgres://"},
		{"kafka://k1", "want kafka://"},
		{"mysql://app:topsecret@db:x/app", "mysql://USER:PASS@tcp(HOST:PORT)/DB"},
		{"mysql://app:topsecret@tcp(db:x)/app", "mysql://USER:PASS@tcp(HOST:PORT)/DB"},
		{"mysql://app:topsecret@unix(/run/mysqld.sock)/app", "mysql://USER:PASS@tcp(HOST:PORT)/DB"},
		{"kafka://k1", "missing port"},
		{"kafka://u:topsecret@k1:9092,", "broker"},
		{"mysql://app:topsecret@db/app?tls=maybe", "tls="},
		{"postgres://app:topsecret@db:99999/app", "topsecret"[:0]},
		{"redis://:topsecret@cache:6379/x", ""},
		{"http://u:topsecret@web:%zz", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in, nil)
			if !errors.Is(err, ErrParse) {
				t.Fatalf("Parse(%q) = %v, want an error matching ErrParse", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) = %q, want it to say %q", tc.in, err, tc.want)
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Errorf("Parse(%q) = %q, which shows the password", tc.in, err)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	got, err := ParseStatus("200, 204,300-399")
	if err != nil || len(got) != 3 || got[2] != (StatusRange{300, 399}) {
		t.Fatalf("ParseStatus = %v, %v", got, err)
	}
	o := Options{Status: got}
	for code, want := range map[int]bool{200: true, 201: false, 204: true, 302: true, 404: false} {
		if o.statusOK(code) != want {
			t.Errorf("statusOK(%d) = %v, want %v", code, !want, want)
		}
	}
	var zero Options
	if !zero.statusOK(299) || zero.statusOK(300) {
		t.Errorf("the default status set is not 200-299")
	}
	for _, bad := range []string{"", "abc", "99", "600", "300-200", "200-"} {
		if _, err := ParseStatus(bad); !errors.Is(err, ErrParse) {
			t.Errorf("ParseStatus(%q) = %v, want ErrParse", bad, err)
		}
	}
}

// FuzzParseMasks checks that no string Parse returns, target or error,
// shows the password of the URL.
func FuzzParseMasks(f *testing.F) {
	for _, s := range []string{"postgres", "mysql", "redis", "amqp", "nats", "http", "kafka", "grpc", "ftp"} {
		f.Add(s, "host:1234/db?x=1")
	}
	f.Fuzz(func(t *testing.T, scheme, rest string) {
		const pw = "Zq9PASSWORDq9Z"
		checkMasks(t, scheme+"://user:"+pw+"@"+rest, pw)
	})
}

// checkMasks fails t if any string Parse returns for in, target or error,
// or an error quoting in, shows one of secrets.
func checkMasks(t *testing.T, in string, secrets ...string) {
	t.Helper()
	shows := func(s string) bool {
		return slices.ContainsFunc(secrets, func(sec string) bool { return strings.Contains(s, sec) })
	}
	tg, err := Parse(in, nil)
	if err != nil {
		if shows(err.Error()) {
			t.Fatalf("Parse(%q) error %q shows the password", in, err)
		}
		return
	}
	if shows(tg.String()) {
		t.Fatalf("Parse(%q).String() = %q shows the password", in, tg)
	}
	if e := tg.fail(false, "", errors.New("dial "+in)); shows(e.Error()) {
		t.Fatalf("an error quoting %q shows the password: %q", in, e)
	}
}

// FuzzParseMasksEscaped is FuzzParseMasks with the password written with
// escapes of its own choosing (esc's bits pick which characters are
// written %XX, and in which case), as a person may type them: neither the
// password nor the way it was written may show.
func FuzzParseMasksEscaped(f *testing.F) {
	f.Add("postgres", uint32(1), "db:5432/app")
	f.Add("redis", uint32(0x8001), "cache:6379/0")
	f.Add("postgres", uint32(0), "%000!@")
	f.Fuzz(func(t *testing.T, scheme string, esc uint32, rest string) {
		const pw = "Zq9PASSWORDq9Z"
		written := escapePassword(pw, esc)
		checkMasks(t, scheme+"://user:"+written+"@"+rest, pw, written)
	})
}

// escapePassword writes character i of pw as %XX when bit i of esc is
// set, in lower case when bit 16+i is too.
func escapePassword(pw string, esc uint32) string {
	var b strings.Builder
	for i := range len(pw) {
		if i >= 16 || esc&(1<<i) == 0 {
			b.WriteByte(pw[i])
			continue
		}
		x := fmt.Sprintf("%%%02X", pw[i])
		if esc&(1<<(16+i)) != 0 {
			x = strings.ToLower(x)
		}
		b.WriteString(x)
	}
	return b.String()
}

// TestParseMasksTheWrittenSecret: a password or a secret query value is
// hidden however the target escapes it. Only the forms Go itself writes
// were hidden before (Z as %5A, a / as %2f and a query's password showed
// in every line about the target).
func TestParseMasksTheWrittenSecret(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://user:%5Aq9PASSWORD@db:5432/app", "postgres://user:xxxxx@db:5432/app"},
		{"postgres://user:p%2fssword1@db:5432/app", "postgres://user:xxxxx@db:5432/app"},
		{"redis://:%5Aq9PASSWORD@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		{"postgres://db:5432/app?password=%5Aq9PASSWORD&sslmode=disable", "postgres://db:5432/app?password=xxxxx&sslmode=disable"},
		{"postgres://db:5432/app?pass%77ord=Zq9PASSWORD", "postgres://db:5432/app?pass%77ord=xxxxx"},
	} {
		tg, err := Parse(tt.in, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := tg.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
	_, err := Parse("postgres://user:Zq9PASSWORDq9Z@%000!@", nil)
	if err == nil || strings.Contains(err.Error(), "PASSWORD") {
		t.Errorf("a password url unescapes to a NUL: error %v; want one that hides it", err)
	}
}

// TestErrorOneLine checks that a failure's text is one line, as the
// command's output needs it, even when the driver's spans several (pgx
// lists each address it tried on a line of its own).
func TestErrorOneLine(t *testing.T) {
	tg, err := Parse("postgres://app:pw@db/app", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := tg.fail(false, "connection refused", errors.New("failed to connect to `user=app database=app`:\n\t[::1]:5432: refused\n\t127.0.0.1:5432: refused"))
	want := "connection refused: failed to connect to `user=app database=app`: [::1]:5432: refused; 127.0.0.1:5432: refused"
	if e.Error() != want {
		t.Errorf("fail(...) = %q, want %q", e.Error(), want)
	}
}

// TestMaskShortSecrets checks that a short password is masked where it
// stands as a token, leaves the words around it alone, and that a password
// inside the Mask itself ("x") cannot make a line grow: it once turned one
// error line into thousands of x's.
func TestMaskShortSecrets(t *testing.T) {
	tests := []struct {
		target, text, want string
	}{
		{"postgres://u:x@db/app", "connection refused: dial tcp db:5432", "connection refused: dial tcp db:5432"},
		{"postgres://u:x@db/app", "password x rejected", "password xxxxx rejected"},
		{"postgres://u:e@db/app", "failed to connect to `user=u database=app`", "failed to connect to `user=u database=app`"},
		{"postgres://u:pw@db/app?password=pw", "auth failed for 'pw' (pw)", "auth failed for 'xxxxx' (xxxxx)"},
		{"postgres://u:Zq9longsecret@db/app", "xZq9longsecretx", "xxxxxxx"},
	}
	for _, tt := range tests {
		tg, err := Parse(tt.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.mask(tt.text); got != tt.want {
			t.Errorf("Parse(%q).mask(%q) = %q, want %q", tt.target, tt.text, got, tt.want)
		}
	}
	for _, in := range []string{"postgres://u:x@db/app?password=x", "postgres://u:e@db/app"} {
		tg, err := Parse(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(tg.String(), "postgrxxxxx") || len(tg.String()) > len(in)+2*len(Mask) {
			t.Errorf("Parse(%q).String() = %q: garbled or grown", in, tg)
		}
	}
}

// TestParseMySQLDSN checks that go-sql-driver's DSN form (wait4x's)
// reaches the driver as the URL form does: the address, the user, a
// password with an @ in it, the database and the TLS mode.
func TestParseMySQLDSN(t *testing.T) {
	dsn, err := Parse("mysql://app:p@ss@tcp(db:3307)/app?tls=skip-verify", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := dsn.my
	if c.Addr != "db:3307" || c.User != "app" || c.Passwd != "p@ss" || c.DBName != "app" || c.TLSConfig != "skip-verify" {
		t.Errorf("Parse(DSN form) = addr %q user %q password %q db %q tls %q, want db:3307 app p@ss app skip-verify",
			c.Addr, c.User, c.Passwd, c.DBName, c.TLSConfig)
	}
	if def, err := Parse("mysql://app@tcp(db)/app", nil); err != nil || def.my.Addr != "db:3306" {
		t.Errorf("Parse(DSN form without a port) = %v, want db:3306", err)
	}
}

// TestEverySchemeHasItsForm checks that a malformed TARGET of any scheme
// is answered with the accepted form for that scheme.
func TestEverySchemeHasItsForm(t *testing.T) {
	for _, s := range Schemes() {
		if w := want(s); !strings.Contains(w, "://") {
			t.Errorf("want(%q) = %q, want the scheme's accepted form", s, w)
		}
		_, err := Parse(s+"://u:topsecret@[bad", nil)
		if err == nil || !strings.Contains(err.Error(), "(want ") || strings.Contains(err.Error(), "topsecret") {
			t.Errorf("Parse(%s://u:topsecret@[bad) = %v, want an error naming the accepted form, without the password", s, err)
		}
	}
}
