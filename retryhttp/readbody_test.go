package retryhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// copyBody is a ReadBody that keeps the body of the latest call only, as
// ReadBody must: what it read of a failed attempt is stale.
func copyBody(buf *bytes.Buffer, statuses *[]int) func(*http.Response) error {
	return func(resp *http.Response) error {
		*statuses = append(*statuses, resp.StatusCode)
		buf.Reset()
		_, err := io.Copy(buf, resp.Body)
		return err
	}
}

// A body cut off mid-way is a network failure of its attempt: with
// ReadBody it is retried, and the caller gets the whole body of the
// attempt that succeeded. Hedged, the same: a hedged attempt reads the
// winner's body alone, and a winner whose body is cut fails its attempt,
// which is retried; it does not become a failed copy that a hedge, sent
// at once, replaces within the attempt.
func TestReadBodyRetriesCutBody(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		t.Run(fmt.Sprintf("hedged=%v", hedged), func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {{body: "partial", cut: true}, status(503), {body: "whole body"}}})
			var buf bytes.Buffer
			var statuses []int
			var events []retryhttp.Event
			tr := &retryhttp.Transport{Base: base, Policy: noWait, ReadBody: copyBody(&buf, &statuses),
				OnRetry: func(e retryhttp.Event) { events = append(events, e) }}
			if hedged {
				// Long enough that only a failure could send a hedge.
				tr.Hedge = &hedge.Hedger{After: time.Minute}
			}
			req, _ := http.NewRequest("GET", srv.url("/"), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			if rest := readBody(t, resp); rest != "" {
				t.Errorf("returned body %q, want it consumed by ReadBody", rest)
			}
			if buf.String() != "whole body" || len(srv.requests("/")) != 3 {
				t.Errorf("ReadBody kept %q after %d attempts, want %q after 3", buf.String(), len(srv.requests("/")), "whole body")
			}
			// The 503 is retried before any body is read: ReadBody sees only the
			// responses that would end the call.
			if len(statuses) != 2 || statuses[0] != 200 || statuses[1] != 200 {
				t.Errorf("ReadBody called for statuses %v, want [200 200]", statuses)
			}
			if len(events) != 2 || !errors.Is(events[0].Err, io.ErrUnexpectedEOF) || events[0].Response != nil {
				t.Errorf("OnRetry events %+v, want the cut body's io.ErrUnexpectedEOF first", events)
			}
		})
	}
}

// With ReadBody, AttemptTimeout bounds the whole attempt: a body that
// stalls after its headers times out and is retried. Hedged, the winner's
// AttemptTimeout bounds its body: the winner is not replaced by a hedge
// while its body stalls (the attempt was decided when its headers came).
func TestReadBodyWithinAttemptTimeout(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		t.Run(fmt.Sprintf("hedged=%v", hedged), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {{body: "x", stall: true}, {body: "done"}}})
				var buf bytes.Buffer
				var statuses []int
				var events []retryhttp.Event
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, AttemptTimeout: time.Second,
					ReadBody: copyBody(&buf, &statuses), OnRetry: func(e retryhttp.Event) { events = append(events, e) }}
				if hedged {
					tr.Hedge = &hedge.Hedger{After: 100 * time.Millisecond}
				}
				start := time.Now()
				req, _ := http.NewRequest("GET", "http://example.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				readBody(t, resp)
				if took := time.Since(start); took != time.Second || buf.String() != "done" {
					t.Errorf("took %v with body %q, want 1s (the stalled attempt's limit) and %q", took, buf.String(), "done")
				}
				if len(events) != 1 || !errors.Is(events[0].Err, retryhttp.ErrAttemptTimeout) {
					t.Errorf("OnRetry events %+v, want one for ErrAttemptTimeout", events)
				}
				if len(s.requests("/")) != 2 {
					t.Errorf("%d requests, want 2: the stalled one and its retry", len(s.requests("/")))
				}
			})
		})
	}
}

// An error of ReadBody's own (writing what it read) is not retried.
func TestReadBodyOwnErrorIsPermanent(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{body: "hello"}}})
	diskFull := errors.New("disk full")
	tr := &retryhttp.Transport{Base: base, Policy: noWait, ReadBody: func(resp *http.Response) error {
		_, _ = io.ReadAll(resp.Body)
		return diskFull
	}}
	req, _ := http.NewRequest("GET", srv.url("/"), nil)
	resp, err := tr.RoundTrip(req)
	if resp != nil || !errors.Is(err, diskFull) || !errors.Is(err, retry.ErrPermanent) {
		t.Errorf("RoundTrip = %v, %v; want no response and a permanent error wrapping ReadBody's", resp, err)
	}
	if n := len(srv.requests("/")); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

// A cut body is retried only when the request may be repeated.
func TestReadBodyCutPOSTNotRetried(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{body: "partial", cut: true}, {body: "whole"}}})
	var buf bytes.Buffer
	var statuses []int
	tr := &retryhttp.Transport{Base: base, Policy: noWait, ReadBody: copyBody(&buf, &statuses)}
	req, _ := http.NewRequest("POST", srv.url("/"), strings.NewReader("order"))
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, retryhttp.ErrNotReplayable) || !errors.Is(err, io.ErrUnexpectedEOF) || len(srv.requests("/")) != 1 {
		t.Errorf("RoundTrip error %v after %d attempts, want ErrNotReplayable and io.ErrUnexpectedEOF after 1", err, len(srv.requests("/")))
	}
}
