package retryhttp_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retryhttp"
)

// At most 2 requests in flight per host: a response holds its permit until
// its body is closed (or read to the end), and a third request meanwhile
// is refused at once, never sent.
func ExampleTransport_limits() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	limits := &limiter.Group{Config: limiter.Config{Limit: 2}}
	client := &http.Client{Transport: &retryhttp.Transport{Limits: limits}}
	a, _ := client.Get(srv.URL)
	b, _ := client.Get(srv.URL)
	_, err := client.Get(srv.URL)
	fmt.Println(errors.Is(err, limiter.ErrLimited))
	a.Body.Close()
	io.ReadAll(b.Body) // read to the end: its permit is back too
	c, err := client.Get(srv.URL)
	fmt.Println(err)
	c.Body.Close()
	b.Body.Close()
	// Output:
	// true
	// <nil>
}
