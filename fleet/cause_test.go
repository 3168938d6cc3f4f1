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
