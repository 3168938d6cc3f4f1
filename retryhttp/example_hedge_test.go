package retryhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// A server whose first answer is stuck: the hedge, sent after 100 ms,
// answers instead, and the stuck request is canceled. (A delay that long
// leaves the first copy time to dial, even on a busy machine, so that it
// is the one the server sees first.)
func ExampleTransport_hedge() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // stuck until the client gives up on it
			return
		}
		fmt.Fprintln(w, "hello from the hedge")
	}))
	defer srv.Close()

	client := &http.Client{Transport: &retryhttp.Transport{
		Policy: backoff.Policy{Retries: backoff.NoRetries},
		Hedge: &hedge.Hedger{
			After:  100 * time.Millisecond, // or Quantile: 0.95, the host's observed p95
			Budget: &retry.TokenBucket{TokenRatio: 0.1},
		},
		OnSuccess: func(e retryhttp.Event) { fmt.Printf("attempt %d answered by copy %d\n", e.Attempt, e.Hedge) },
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// attempt 1 answered by copy 1
	// hello from the hedge
}
