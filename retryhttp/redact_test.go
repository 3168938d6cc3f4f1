package retryhttp_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/again-go/again/retryhttp"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/items", "https://example.com/items"},
		{"https://example.com/items?i=42", "https://example.com/items?i=…"},
		{"https://example.com/items?token=s3cr3t&page=2", "https://example.com/items?token=…&page=…"},
		{"https://example.com/items?s3cr3t", "https://example.com/items?…"},
		{"https://example.com/items?a=1&&s3cr3t", "https://example.com/items?a=…&&…"},
		{"https://example.com/items?", "https://example.com/items?"},
		{"https://user:s3cr3t@example.com:8443/x", "https://user:…@example.com:8443/x"},
		{"https://user:@example.com/x", "https://user:…@example.com/x"},
		{"https://ghp_s3cr3t@example.com/x", "https://…@example.com/x"},
		{"https://us%20er:s3cr3t@example.com/", "https://us%20er:…@example.com/"},
		{"https://example.com/a%2Fb#s3cr3t", "https://example.com/a%2Fb"},
		{"/items?key=s3cr3t", "/items?key=…"},
		{"mailto:s3cr3t@example.com", "mailto:…"},
		{"", ""},
		// What url.Parse refuses is scrubbed as a string.
		{"http://user:s3cr3t@exa mple.com/?k=s3cr3t", "http://…@exa mple.com/?…"},
		{"http://user:s3/cr3t@host:port/p", "http://…@host:port/p"},
		{"http://us@er:s3cr3t@host:x/p", "http://…@host:x/p"},
		{"http://host:x/p?token=s3cr3t", "http://host:x/p?…"},
		{"http://host:x/\x1b]0;s3cr3t\x07#s3cr3t", "http://host:x/%1B]0;s3cr3t%07?…"},
		{"%zz:s3cr3t@host", "…@host"},
	}
	for _, tt := range tests {
		if got := retryhttp.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedactURL checks that no password, user name without a password or
// query value survives, and that no control character is printed.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h:1/x?k=v&w#f", "http://h/?", "http://u@h/", "h?x", "http://a b@c?d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := retryhttp.RedactURL(s)
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("RedactURL(%q) = %q holds a control character", s, got)
		}
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		if u.Opaque != "" {
			if want := u.Scheme + ":…"; got != want {
				t.Fatalf("RedactURL(%q) = %q, want %q", s, got, want)
			}
			return
		}
		head, query, _ := strings.Cut(got, "?")
		if u.RawQuery != "" {
			keys := strings.Split(u.RawQuery, "&")
			items := strings.Split(query, "&")
			if len(items) != len(keys) {
				t.Fatalf("RedactURL(%q) = %q, want %d query items", s, got, len(keys))
			}
			for i, kv := range keys {
				want := "…"
				if k, _, ok := strings.Cut(kv, "="); ok {
					want = k + "=…"
				} else if kv == "" {
					want = ""
				}
				if items[i] != want {
					t.Fatalf("RedactURL(%q) = %q, query item %d is %q, want %q", s, got, i, items[i], want)
				}
			}
		}
		if u.User == nil {
			return
		}
		secret, ok := u.User.Password()
		if !ok {
			secret = u.User.Username()
		}
		// A secret that is also part of what is kept cannot be told apart.
		if kept := u.Scheme + u.Host + u.EscapedPath() + url.User(u.User.Username()).String(); len(secret) >= 4 && !strings.Contains(kept, secret) && strings.Contains(head, secret) {
			t.Fatalf("RedactURL(%q) = %q reveals %q", s, got, secret)
		}
	})
}
