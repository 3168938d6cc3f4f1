package printable

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"\x1b]0;PWNED\a\x1b[2J", `\x1b]0;PWNED\x07\x1b[2J`},
		{"two\nlines\r", `two\x0alines\x0d`},
		{"tab\tnul\x00del\x7f", `tab\x09nul\x00del\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"line\u2028paragraph\u2029", `line\u2028paragraph\u2029`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{`back\slash`, `back\slash`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzString checks that String leaves nothing a terminal acts on and
// keeps printable text as it is.
func FuzzString(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;t\x07", "a\xffb", "\u009b\u202e", "x\ny\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q, not UTF-8", s, out)
		}
		for _, r := range out {
			if r != ' ' && !unicode.IsPrint(r) {
				t.Fatalf("String(%q) = %q holds %U", s, out, r)
			}
		}
		unsafe := strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) || !utf8.ValidString(s)
		if (out == s) == unsafe {
			t.Fatalf("String(%q) = %q: want s itself exactly when it is printable", s, out)
		}
	})
}
