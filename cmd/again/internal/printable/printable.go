// Package printable makes text from outside safe to print on a terminal.
//
// Such text is a server's reason phrase and headers, an error's text, a
// collector's answer, a value the user gave. It is its own package so that
// the models (otelenv) and the commands' shared package (cmdutil) escape
// alike.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with what a terminal would act on written out instead:
// ASCII control characters as \x1b, other non-printing characters (C1
// controls, bidirectional overrides, line and paragraph separators) as
// \u009b, and bytes that are not UTF-8 as \xff. No escape sequence can
// then retitle the window or clear the screen, nor a line break split one
// of again's lines in two. Printable text, backslashes included, is left
// as it is, and s itself is returned when nothing needs escaping.
func String(s string) string {
	if !strings.ContainsFunc(s, needsEscape) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1, r < utf8.RuneSelf && needsEscape(r):
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// needsEscape reports whether a terminal could act on r, or r stands for
// bytes that are not UTF-8.
func needsEscape(r rune) bool {
	return r != ' ' && !unicode.IsPrint(r) || r == utf8.RuneError
}
