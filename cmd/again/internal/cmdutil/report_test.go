package cmdutil

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"tab\tnul\x00del\x7f", `tab\x09nul\x00del\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

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

// FuzzPrintable checks that printable leaves nothing a terminal acts on,
// keeps printable text as it is, and that message keeps to one line.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;t\x07", "a\xffb", "\u009b\u202e", "x\ny\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Printable(s), Message(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("Printable(%q) = %q, not UTF-8", s, out)
			}
			for _, r := range out {
				if r != ' ' && !unicode.IsPrint(r) {
					t.Fatalf("Printable(%q) = %q holds %U", s, out, r)
				}
			}
		}
		if Printable(s) == s && strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) {
			t.Fatalf("Printable(%q) left it as it was", s)
		}
	})
}
