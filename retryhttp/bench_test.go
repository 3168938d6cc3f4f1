package retryhttp_test

import (
	"net/http"
	"testing"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retryhttp"
)

// The success path of RoundTrip over a base that answers at once: the
// Transport's own cost per request.
func BenchmarkRoundTrip(b *testing.B) {
	ok := fixedRT{&http.Response{StatusCode: 200, Body: http.NoBody}}
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	for _, bb := range []struct {
		name string
		tr   *retryhttp.Transport
	}{
		{"zero", &retryhttp.Transport{Base: ok}},
		{"breaker", &retryhttp.Transport{Base: ok, Breakers: &breaker.Group{}}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := bb.tr.RoundTrip(get)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
