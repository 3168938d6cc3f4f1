package cmdutil

import (
	"testing"

	"github.com/again-go/again/cmd/again/internal/printable"
)

func TestMessageOnePrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{"retry: retries exhausted after 2 attempts in 1s: retryhttp: attempt timed out after 10ms",
			"retries exhausted after 2 attempts in 1s: attempt timed out after 10ms"},
		{"cannot write (retryhttp: GetBody: x)", "cannot write (GetBody: x)"},
		{"two\nlines\r\n", "two; lines"},
		{"a retry: is kept inside a clause: noretry: x", "a retry: is kept inside a clause: noretry: x"},
		{"permanent error after 1 attempt: net/http: connection broken", "permanent error after 1 attempt: connection broken"},
	}
	for _, tt := range tests {
		if got := Message(tt.in); got != tt.want {
			t.Errorf("Message(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzMessage checks that Message leaves nothing a terminal acts on,
// line breaks included: what it returns, printable.String keeps as it is.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;t\x07", "a\xffb", "\u009b\u202e", "x\ny\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out := Message(s); printable.String(out) != out {
			t.Fatalf("Message(%q) = %q, which holds what a terminal acts on", s, out)
		}
	})
}
