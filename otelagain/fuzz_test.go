package otelagain

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzRedactedURL checks url.full's redaction on any URL: no password
// and no query value survives, and the query keeps its keys in order.
func FuzzRedactedURL(f *testing.F) {
	for _, s := range []string{"https://u:p@example.com/a?token=s3cr3t&x=1", "http://h/?s3cr3t", "http://h:8080/p?a=&b=c=d#frag", "http://h/?a=1&&b", "//:p@?:p@=", "http://u:p@h/x:p@y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		got := redactedURL(&http.Request{URL: u})
		// The user information is replaced whole: what follows the host
		// (a path or a query key) may hold the same characters as the
		// password without being it ("//:p@?:p@=").
		if u.User != nil {
			if want := u.Scheme + "://REDACTED:REDACTED@" + u.Host; !strings.HasPrefix(got, want) {
				t.Fatalf("%q: %q does not start with %q", raw, got, want)
			}
		}
		_, query, _ := strings.Cut(got, "?")
		items := strings.Split(u.RawQuery, "&")
		if u.RawQuery == "" {
			items = nil
		}
		out := strings.Split(query, "&")
		if query == "" && !strings.Contains(got, "?") {
			out = nil
		}
		if len(out) != len(items) {
			t.Fatalf("%q: %d query items, %q has %d", raw, len(items), got, len(out))
		}
		for i, item := range items {
			k, _, hasValue := strings.Cut(item, "=")
			want := k + "=REDACTED"
			if !hasValue {
				want = "REDACTED"
				if item == "" {
					want = ""
				}
			}
			if out[i] != want {
				t.Fatalf("%q: query item %d is %q in %q, want %q", raw, i, out[i], got, want)
			}
		}
	})
}
