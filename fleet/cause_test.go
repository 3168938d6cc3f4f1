package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/fleet/fleettest"
)

// password is in the URLs of TestCauses: no log line may show it.
const password = "hunter2-s3cret"

// TestCauses: when Redis cannot be used, the Budget's one log line names
// why, in words an operator acts on, never with the password; decisions
// are then local and cautious (one retry from a bucket it never saw), and
// no decision waits longer than the connect timeout.
func TestCauses(t *testing.T) {
	tests := []struct {
		name  string
		url   func(t *testing.T) string
		cause string
	}{
		{"refused", func(t *testing.T) string {
			return "redis://:" + password + "@" + fleettest.ClosedAddr(t) + "/0?key=k"
		}, "connection refused"},
		{"silent", func(t *testing.T) string {
			return "redis://" + fleettest.Silent(t) + "/0?key=k"
		}, "timeout: no answer within 300ms"},
		{"wrong password", func(t *testing.T) string {
			s := fleettest.Start(t, "--requirepass", "right-one")
			return "redis://:" + password + "@" + s.Addr() + "/0?key=k"
		}, "wrong password"},
		{"no password", func(t *testing.T) string {
			s := fleettest.Start(t, "--requirepass", "right-one")
			return s.URL("key=k")
		}, "password required"},
		{"ACL denied", func(t *testing.T) string {
			s := fleettest.Start(t)
			// A user that may connect and read, but run no script.
			if err := s.Do("ACL", "SETUSER", "reader", "on", ">"+password, "~*", "+@read", "+@connection", "-@scripting"); err != nil {
				t.Fatal(err)
			}
			return "redis://reader:" + password + "@" + s.Addr() + "/0?key=k"
		}, "ACL denied"},
		{"out of memory", func(t *testing.T) string {
			s := fleettest.Start(t)
			s.Fill()
			return s.URL("key=k")
		}, "out of memory"},
		{"read-only replica", func(t *testing.T) string {
			primary := fleettest.Start(t)
			host, port, _ := strings.Cut(primary.Addr(), ":")
			replica := fleettest.Start(t, "--replicaof", host, port)
			return replica.URL("key=k")
		}, "read-only replica"},
		{"wrong key type", func(t *testing.T) string {
			s := fleettest.Start(t)
			if err := s.Do("HSET", "again:{k}:budget", "field", "1"); err != nil {
				t.Fatal(err)
			}
			return s.URL("key=k")
		}, "wrong key type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log logBuffer
			u := tt.url(t) + "&connect_timeout=300ms&timeout=300ms&flush=1h"
			b, err := OpenBudget(u, log.logger())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			start := time.Now()
			first, second := b.Failure(), b.Failure()
			if d := time.Since(start); d > 300*time.Millisecond+3*slack {
				t.Errorf("two decisions took %v, want at most the connect timeout, 300ms", d)
			}
			if !first || second {
				t.Errorf("decisions with Redis unusable: %v, %v; want one retry allowed, then none", first, second)
			}
			// The line may be written by the Budget's own goroutine a moment
			// after the decisions went local; Close waits for it.
			b.Close()
			want := lostLine + " (" + tt.cause
			if got := log.String(); strings.Count(got, want) != 1 || strings.Count(got, "\n") != 1 || strings.Contains(got, password) {
				t.Errorf("log:\n%swant one line containing %q, without the password", got, want)
			}
		})
	}
}

// TestRedactor: a password is cut from any error text logged.
func TestRedactor(t *testing.T) {
	r := redactor{password}
	if got := r.text(errorString("ERR AUTH " + password + " failed")); got != "ERR AUTH [password] failed" {
		t.Errorf("redacted text = %q", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestBreakerStoreCause: a BreakerStore's line names the cause too.
func TestBreakerStoreCause(t *testing.T) {
	s := fleettest.Start(t, "--requirepass", "right-one")
	var log logBuffer
	st, err := OpenBreakerStore("redis://:"+password+"@"+s.Addr()+"/0?key=k&connect_timeout=300ms", log.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Load(context.Background()); err == nil {
		t.Fatal("Load with a wrong password succeeded")
	}
	if got := log.String(); !strings.Contains(got, lostLine+" (wrong password); the breaker decides alone") || strings.Contains(got, password) {
		t.Errorf("log:\n%swant the wrong password named, without the password", got)
	}
	var _ breaker.Shared = st.Named("host")
}

// longPassword is 200 letters and digits, too long for a server
// that cuts what it echoes at 128 to show it whole.
func longPassword() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	for i := range 200 {
		b.WriteByte(alphabet[(i*7+i/len(alphabet))%len(alphabet)])
	}
	return b.String()
}

// leaked returns the first run of 8 characters of pw found in text, or "".
func leaked(text, pw string) string {
	for i := 0; i+8 <= len(pw); i++ {
		if strings.Contains(text, pw[i:i+8]) {
			return pw[i : i+8]
		}
	}
	return ""
}

// TestRedactorRuns: the text of an error has no run of 8 characters of a
// password, wherever a server cut it, and no argument that a server
// echoed; a password shorter than 8 is masked where it is whole.
func TestRedactorRuns(t *testing.T) {
	pw := longPassword()
	tests := []struct {
		name, text, want string
		secrets          redactor
	}{
		{"whole", "ERR AUTH " + pw + " failed", "ERR AUTH [password] failed", redactor{pw}},
		{"cut at the end", "proxy: bad token " + pw[:120], "proxy: bad token [password]", redactor{pw}},
		{"a piece inside", "x" + pw[50:58] + "y", "x[password]y", redactor{pw}},
		{"7 characters only", "x" + pw[50:57] + "y", "x" + pw[50:57] + "y", redactor{pw}},
		{"echoed", "ERR unknown command 'AUTH', with args beginning with: '" + pw[:128] + "' ",
			"ERR unknown command 'AUTH', with arguments not shown", redactor{pw}},
		{"short password", "ERR hunter2 or hunter", "ERR [password] or hunter", redactor{"hunter2"}},
		{"no password", "ERR unknown command 'AUTH', with args beginning with: 'x' ",
			"ERR unknown command 'AUTH', with args beginning with: 'x' ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.secrets.text(errorString(tt.text)); got != tt.want {
				t.Errorf("text(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// FuzzRedactor: whatever surrounds it, no run of 8 characters of the
// password survives.
func FuzzRedactor(f *testing.F) {
	f.Add("ERR ", 0, 128, " tail")
	f.Add("", 190, 200, "")
	pw := longPassword()
	f.Fuzz(func(t *testing.T, before string, from, to int, after string) {
		from, to = min(max(from, 0), len(pw)), min(max(to, 0), len(pw))
		if from > to {
			from, to = to, from
		}
		got := redactor{pw}.text(errorString(before + pw[from:to] + after))
		if l := leaked(got, pw); l != "" && !strings.Contains(before+after, l) {
			t.Fatalf("text leaks %q of the password: %q", l, got)
		}
	})
}

// TestEchoedPassword: a server that does not know AUTH (nor HELLO)
// echoes the password, cut at 128 characters; neither the Budget's nor the
// BreakerStore's log line, nor the errors they return, shows any run of 8
// characters of it. The server is a stand-in on loopback that echoes as
// Redis does, and redis-server itself with AUTH and HELLO renamed away.
func TestEchoedPassword(t *testing.T) {
	pw := longPassword()
	servers := []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"stand-in", func(t *testing.T) string { return fleettest.Echoing(t) }},
		{"redis-server", func(t *testing.T) string {
			return fleettest.Start(t, "--rename-command", "AUTH", "", "--rename-command", "HELLO", "").Addr()
		}},
	}
	for _, srv := range servers {
		t.Run(srv.name+"/budget", func(t *testing.T) {
			var log logBuffer
			b, err := OpenBudget("redis://:"+pw+"@"+srv.addr(t)+"/0?key=k&connect_timeout=2s&timeout=2s&flush=1h", log.logger())
			if err != nil {
				t.Fatal(err)
			}
			b.Failure()
			_, tokensErr := b.SharedTokens(context.Background())
			b.Close()
			if tokensErr == nil {
				t.Fatal("SharedTokens succeeded on a server that refuses every command")
			}
			got := log.String() + tokensErr.Error()
			if !strings.Contains(got, lostLine+" (error reply)") {
				t.Errorf("log:\n%swant the line that says Redis cannot be used", got)
			}
			if l := leaked(got, pw); l != "" {
				t.Errorf("log and error show %q of the password:\n%s", l, got)
			}
		})
		t.Run(srv.name+"/breaker store", func(t *testing.T) {
			var log logBuffer
			st, err := OpenBreakerStore("redis://:"+pw+"@"+srv.addr(t)+"/0?key=k&connect_timeout=2s&timeout=2s", log.logger())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.Load(context.Background())
			if err == nil {
				t.Fatal("Load succeeded on a server that refuses every command")
			}
			got := log.String() + err.Error()
			if !strings.Contains(got, lostLine+" (error reply); the breaker decides alone") {
				t.Errorf("log:\n%swant the line that says Redis cannot be used", got)
			}
			if l := leaked(got, pw); l != "" {
				t.Errorf("log and error show %q of the password:\n%s", l, got)
			}
		})
	}
}
