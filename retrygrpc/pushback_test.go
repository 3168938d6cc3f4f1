package retrygrpc_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/retrygrpc"
)

func TestParsePushback(t *testing.T) {
	max := time.Duration(math.MaxInt64)
	tests := []struct {
		values []string
		want   retrygrpc.Pushback
	}{
		{nil, retrygrpc.Pushback{}},
		{[]string{}, retrygrpc.Pushback{}},
		{[]string{"0"}, retrygrpc.Pushback{Present: true, Retry: true}},
		{[]string{"250"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 250 * time.Millisecond}},
		{[]string{"007"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 7 * time.Millisecond}},
		{[]string{"250", "-1"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 250 * time.Millisecond}},
		{[]string{"-1", "250"}, retrygrpc.Pushback{Present: true}},
		{[]string{"-0"}, retrygrpc.Pushback{Present: true}},
		{[]string{""}, retrygrpc.Pushback{Present: true}},
		{[]string{"+3"}, retrygrpc.Pushback{Present: true}},
		{[]string{" 3"}, retrygrpc.Pushback{Present: true}},
		{[]string{"1.5"}, retrygrpc.Pushback{Present: true}},
		{[]string{"10ms"}, retrygrpc.Pushback{Present: true}},
		{[]string{"99999999999999999999999"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: max}},
		{[]string{"9223372036854"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 9223372036854 * time.Millisecond}},
		{[]string{"9223372036855"}, retrygrpc.Pushback{Present: true, Retry: true, Wait: max}},
		{[]string{"99999999999999999999999x"}, retrygrpc.Pushback{Present: true}},
	}
	for _, tt := range tests {
		if got := retrygrpc.ParsePushback(tt.values); got != tt.want {
			t.Errorf("ParsePushback(%q) = %+v, want %+v", tt.values, got, tt.want)
		}
	}
}

// FuzzParsePushback checks ParsePushback against strconv: a value is a
// wait exactly when it is a string of decimal digits, and the wait is its
// number of milliseconds, saturated.
func FuzzParsePushback(f *testing.F) {
	for _, s := range []string{"0", "250", "-1", "", "+3", "1.5", "99999999999999999999999", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := retrygrpc.ParsePushback([]string{s})
		if !got.Present {
			t.Fatalf("ParsePushback(%q) says no trailer was sent", s)
		}
		digits := s != ""
		for _, c := range []byte(s) {
			digits = digits && c >= '0' && c <= '9'
		}
		if got.Retry != digits {
			t.Fatalf("ParsePushback(%q).Retry = %v, want %v", s, got.Retry, digits)
		}
		if !digits {
			if got.Wait != 0 {
				t.Fatalf("ParsePushback(%q).Wait = %v for a value that asks not to retry", s, got.Wait)
			}
			return
		}
		want := time.Duration(math.MaxInt64)
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms <= math.MaxInt64/int64(time.Millisecond) {
			want = time.Duration(ms) * time.Millisecond
		}
		if got.Wait != want {
			t.Fatalf("ParsePushback(%q).Wait = %v, want %v", s, got.Wait, want)
		}
	})
}

func TestSplitMethod(t *testing.T) {
	tests := []struct{ full, service, method string }{
		{"/grpctest.Test/Unary", "grpctest.Test", "Unary"},
		{"/a.b.C/D", "a.b.C", "D"},
		{"Unary", "", "Unary"},
		{"/", "", "/"},
		{"/svc/", "", "/svc/"},
	}
	for _, tt := range tests {
		if s, m := retrygrpc.SplitMethod(tt.full); s != tt.service || m != tt.method {
			t.Errorf("SplitMethod(%q) = %q, %q, want %q, %q", tt.full, s, m, tt.service, tt.method)
		}
	}
}

// FuzzSplitMethod checks that SplitMethod loses nothing: a split name is
// the service and method joined again, and an unsplit one is returned
// whole.
func FuzzSplitMethod(f *testing.F) {
	for _, s := range []string{"/grpctest.Test/Unary", "Unary", "/", "//", "/a/b/c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, full string) {
		service, method := retrygrpc.SplitMethod(full)
		if service == "" {
			if method != full {
				t.Fatalf("SplitMethod(%q) = %q, %q: an unsplit name must be returned whole", full, service, method)
			}
			return
		}
		if method == "" || strings.Contains(method, "/") {
			t.Fatalf("SplitMethod(%q) = %q, %q: the method must be one non-empty segment", full, service, method)
		}
		if joined := service + "/" + method; joined != full && "/"+joined != full {
			t.Fatalf("SplitMethod(%q) = %q, %q, which do not join back", full, service, method)
		}
	})
}
