package web

import (
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=0.001", true},
		{"*", true},
		{"*;q=0", false},
		{"br;q=1, identity", false},
		{"x-gzip", false},
	} {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestETagMatches(t *testing.T) {
	const etag = `"abc"`
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`*`, true},
		{`"abcd"`, false},
		{``, false},
	} {
		if got := etagMatches(tc.header, etag); got != tc.want {
			t.Errorf("etagMatches(%q, %s) = %v, want %v", tc.header, etag, got, tc.want)
		}
	}
}

// FuzzAcceptsGzip checks that any Accept-Encoding header is handled without
// a panic and that gzip is never chosen unless the header mentions it (or *).
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "br, *;q=0.1", ";;,,", "gzip;q="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		if acceptsGzip(header) && !strings.Contains(strings.ToLower(header), "gzip") && !strings.Contains(header, "*") {
			t.Errorf("acceptsGzip(%q) = true without gzip or * in the header", header)
		}
		etagMatches(header, `"x"`)
	})
}
