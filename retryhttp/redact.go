package retryhttp

import (
	"net/url"
	"strings"
)

// redacted is what RedactURL prints in place of a secret: a password, a
// user name given without a password, a query value, a bare query item.
const redacted = "…"

// RedactURL returns u fit for a log line or an error message: the scheme,
// host and path as given, with every secret replaced by "…".
//
//   - A password is replaced, the user name kept: user:…@host. A user name
//     without a password (https://TOKEN@host, as git and many APIs take a
//     token) is all secret as far as one can tell: …@host.
//   - Each query value is replaced and its key kept, since keys tell which
//     call it was while values often carry tokens: /items?id=…&sig=…. A
//     bare item without "=" (?s3cr3t) is replaced whole: /items?….
//   - The fragment, which is never sent to the server, is dropped.
//
// A string that does not parse as a URL is still redacted, conservatively:
// everything from the first '?' or '#' on becomes ?…, everything between
// the scheme and the last '@' before it becomes …, and control characters
// are percent-encoded, so that a URL that a user mistyped can be echoed in
// an error without its password. The Transport's log lines and the again
// command's messages use this function, so one URL reads the same in both.
//
// It is safe for concurrent use.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return scrubURL(u)
	}
	var b strings.Builder
	if p.Scheme != "" {
		b.WriteString(p.Scheme)
		b.WriteByte(':')
	}
	if p.Opaque != "" {
		// mailto:user@example.com and the like: no authority to keep.
		b.WriteString(redacted)
		return b.String()
	}
	if p.Scheme != "" || p.Host != "" || p.User != nil {
		b.WriteString("//")
	}
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			b.WriteString(url.User(p.User.Username()).String())
			b.WriteByte(':')
		}
		b.WriteString(redacted)
		b.WriteByte('@')
	}
	b.WriteString(p.Host)
	b.WriteString(p.EscapedPath())
	if p.RawQuery != "" || p.ForceQuery {
		b.WriteByte('?')
		writeRedactedQuery(&b, p.RawQuery)
	}
	return b.String()
}

// writeRedactedQuery writes the query q with its values replaced.
func writeRedactedQuery(b *strings.Builder, q string) {
	for i, kv := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		switch k, _, ok := strings.Cut(kv, "="); {
		case ok:
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(redacted)
		case kv != "":
			b.WriteString(redacted)
		}
	}
}

// scrubURL redacts a string that url.Parse refused, without trusting any
// structure in it but the first "?" or "#" and the last "@" before it.
func scrubURL(s string) string {
	rest := ""
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s, rest = s[:i], "?"+redacted
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		start := 0
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			start = i + len("://")
		}
		s = s[:start] + redacted + s[at:]
	}
	return escapeControls(s) + rest
}

// escapeControls percent-encodes the ASCII control characters of s, which
// no URL may hold and no terminal should receive from one.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
