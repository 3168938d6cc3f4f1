package shed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkAdmitted is the path of a request that is not overloaded: a
// permit free, nobody waiting, through Wrap with the headers
// retryhttp.Transport sends.
func BenchmarkAdmitted(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set(HeaderCriticality, "CRITICAL")
	r.Header.Set(HeaderAttempt, "1")
	r.Header.Set(HeaderTimeout, "900")
	var w nopWriter
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.ServeHTTP(w, r)
		}
	})
}

// BenchmarkAdmit is Admit and Done alone.
func BenchmarkAdmit(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, _ := s.admit(ctx, Request{})
		p.Done()
	}
}

type nopWriter struct{}

func (nopWriter) Header() http.Header         { return nil }
func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) WriteHeader(int)             {}
