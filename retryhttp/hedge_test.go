package retryhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retryhttp"
)

// hedgeServer is a loopback server whose handler answers the n-th request
// (from 0) as answer says; it records the bodies it received, the requests
// whose client went away, and the connections it accepted. A request for
// warmUpPath is answered at once and not counted: it opens a connection.
type hedgeServer struct {
	*httptest.Server
	n        atomic.Int32
	conns    atomic.Int32
	closed   atomic.Int32
	canceled atomic.Int32
	mu       sync.Mutex
	bodies   []string
	keys     []string // the Idempotency-Key of each request, in order
	// warmUp, if set before the first request, runs in the handler of
	// each warm-up request.
	warmUp func()
}

func newHedgeServer(t *testing.T, http2 bool, answer func(n int, w http.ResponseWriter, r *http.Request)) *hedgeServer {
	t.Helper()
	s := &hedgeServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == warmUpPath {
			if s.warmUp != nil {
				s.warmUp()
			}
			return
		}
		n := int(s.n.Add(1) - 1)
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
		s.mu.Unlock()
		answer(n, w, r)
		if r.Context().Err() != nil {
			s.canceled.Add(1)
		}
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
		case http.StateClosed:
			s.closed.Add(1)
		}
	}
	if http2 {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

const warmUpPath = "/warm-up"

// pooledHedgeClient is hedgeClient for the tests that count closed
// connections (a loser's that was not drained is closed): tr's base pool
// keeps every connection, so that none is closed for lack of room, and
// starts with two, so that no copy dials (a copy that dials can reach the
// server after its hedge and take its part). At the end the pool is
// closed and waited for.
func pooledHedgeClient(t *testing.T, s *hedgeServer, tr *retryhttp.Transport) *http.Client {
	base := s.Client().Transport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 100
	tr.Base = base
	client := hedgeClient(s, tr)
	openConns(s, base, 2)
	t.Cleanup(func() {
		client.CloseIdleConnections()
		waitFor(t, "the idle connections to close", func() bool { return s.closed.Load() == s.conns.Load() })
	})
	return client
}

// openConns puts n connections to s in base's pool, by n warm-up requests
// that s holds until all are in (base must keep n idle connections). It
// must be called before the test's own requests.
func openConns(s *hedgeServer, base *http.Transport, n int) {
	var arrived, warmed sync.WaitGroup
	arrived.Add(n)
	s.warmUp = func() { arrived.Done(); arrived.Wait() }
	for range n {
		warmed.Go(func() {
			resp, err := (&http.Client{Transport: base}).Get(s.URL + warmUpPath)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	warmed.Wait()
}

// stallFirst answers every request at once with its number, except the
// first, which waits until its client goes away (or 10 s).
func stallFirst(n int, w http.ResponseWriter, r *http.Request) {
	if n == 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
	fmt.Fprintf(w, "answer %d", n)
}

// hedgeClient returns a client whose Transport hedges after 20 ms, over a
// base transport of its own that trusts s.
func hedgeClient(s *hedgeServer, tr *retryhttp.Transport) *http.Client {
	base := s.Client().Transport.(*http.Transport).Clone()
	if tr.Base == nil {
		tr.Base = base
	}
	if tr.Hedge == nil {
		tr.Hedge = &hedge.Hedger{After: 20 * time.Millisecond}
	}
	return &http.Client{Transport: tr}
}

func readAll(t *testing.T, resp *http.Response, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond until it holds or 5 s pass: the server's side of a
// cancellation arrives a moment after the client's.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestHedgeWinsAndTheFirstIsCanceled(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("http2=%v", h2), func(t *testing.T) {
			s := newHedgeServer(t, h2, stallFirst)
			var won retryhttp.Event
			tr := &retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}, OnSuccess: func(e retryhttp.Event) { won = e }}
			client := hedgeClient(s, tr)
			if h2 {
				// The connection is opened first, through the base
				// transport, never hedged: on a loaded machine the TLS
				// handshake can outlast the hedge delay, and a hedge that
				// finds no connection ready yet dials one of its own.
				resp, err := (&http.Client{Transport: tr.Base}).Get(s.URL + warmUpPath)
				readAll(t, resp, err)
			}
			resp, err := client.Get(s.URL)
			if got := readAll(t, resp, err); got != "answer 1" {
				t.Fatalf("body %q; want the hedge's, answer 1", got)
			}
			if won.Hedge != 1 || won.Attempt != 1 {
				t.Errorf("OnSuccess: hedge %d, attempt %d; want hedge 1 of attempt 1", won.Hedge, won.Attempt)
			}
			waitFor(t, "the first copy's cancellation to reach the server", func() bool { return s.canceled.Load() == 1 })
			if h2 && s.conns.Load() != 1 {
				t.Errorf("HTTP/2: %d connections; want 1, the hedge a stream beside the stalled one", s.conns.Load())
			}
		})
	}
}

// nonReplayable is a body without GetBody.
type nonReplayable struct{ io.Reader }

func (nonReplayable) Close() error { return nil }

func TestHedgeOnlyWhatMayBeRepeated(t *testing.T) {
	payload := func() io.Reader { return strings.NewReader("payload") }
	tests := []struct {
		name     string
		method   string
		body     func() io.Reader
		header   http.Header // set on the request
		generate bool        // GenerateIdempotencyKey
		requests int32
	}{
		{"GET", "GET", nil, nil, false, 2},
		{"HEAD", "HEAD", nil, nil, false, 2},
		{"OPTIONS", "OPTIONS", nil, nil, false, 2},
		{"QUERY with GetBody: safe, each copy its own body", "QUERY", payload, nil, false, 2},
		// Idempotent but not safe: a hedge would run beside a copy that
		// may have succeeded already.
		{"PUT without a key: never hedged", "PUT", payload, nil, false, 1},
		{"DELETE without a key: never hedged", "DELETE", nil, nil, false, 1},
		{"PUT with Idempotency-Key: each copy its own body", "PUT", payload, http.Header{"Idempotency-Key": {"k1"}}, false, 2},
		{"DELETE with X-Idempotency-Key", "DELETE", nil, http.Header{"X-Idempotency-Key": {"k1"}}, false, 2},
		{"PUT with a blank key: never hedged", "PUT", payload, http.Header{"Idempotency-Key": {" "}}, false, 1},
		{"PUT given a generated key", "PUT", payload, nil, true, 2},
		{"DELETE given a generated key", "DELETE", nil, nil, true, 2},
		{"PATCH given a generated key", "PATCH", payload, nil, true, 2},
		{"PUT with a key, without GetBody: never hedged", "PUT", func() io.Reader { return nonReplayable{strings.NewReader("payload")} }, http.Header{"Idempotency-Key": {"k1"}}, false, 1},
		{"POST: never hedged", "POST", payload, nil, false, 1},
		{"POST with Idempotency-Key", "POST", payload, http.Header{"Idempotency-Key": {"k1"}}, false, 2},
		// A key with no value, or a blank one, identifies nothing.
		{"POST with an Idempotency-Key of no value: never hedged", "POST", payload, http.Header{"Idempotency-Key": nil}, false, 1},
		{"POST with a blank X-Idempotency-Key: never hedged", "POST", payload, http.Header{"X-Idempotency-Key": {"  "}}, false, 1},
		{"POST with a blank key given a generated one", "POST", payload, http.Header{"Idempotency-Key": {""}}, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The first request answers when a hedge arrives, or after
			// 500 ms if none does: long past the hedge delay, short enough
			// for a request that is not hedged.
			hedged := make(chan struct{})
			s := newHedgeServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
				switch n {
				case 0:
					select {
					case <-r.Context().Done():
						return
					case <-hedged:
					case <-time.After(500 * time.Millisecond):
					}
				case 1:
					close(hedged)
				}
				fmt.Fprintf(w, "answer %d", n)
			})
			client := hedgeClient(s, &retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}, GenerateIdempotencyKey: tt.generate})
			var body io.Reader
			if tt.body != nil {
				body = tt.body()
			}
			req, _ := http.NewRequest(tt.method, s.URL, body)
			maps.Copy(req.Header, tt.header)
			resp, err := client.Do(req)
			readAll(t, resp, err)
			if got := s.n.Load(); got != tt.requests {
				t.Errorf("server got %d requests; want %d", got, tt.requests)
			}
			if tt.generate {
				s.mu.Lock()
				for i, k := range s.keys {
					if !uuidV4.MatchString(k) || k != s.keys[0] {
						t.Errorf("copy %d sent Idempotency-Key %q; want the generated key, the same on every copy (%q)", i, k, s.keys)
					}
				}
				s.mu.Unlock()
			}
			if tt.body != nil {
				s.mu.Lock()
				for i, b := range s.bodies {
					if b != "payload" && !(i == 0 && tt.requests == 2) {
						t.Errorf("copy %d sent body %q; want the whole payload", i, b)
					}
				}
				s.mu.Unlock()
			}
		})
	}
}

// A 503 is pushback: no hedge follows it, though it failed fast.
func TestHedgeStopsOnPushback(t *testing.T) {
	s := newHedgeServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	// A delay long enough that only a fast failure could send a hedge.
	client := hedgeClient(s, &retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}, Hedge: &hedge.Hedger{After: time.Second, MaxHedges: 3}})
	resp, err := client.Get(s.URL)
	readAll(t, resp, err)
	if resp.StatusCode != 503 || s.n.Load() != 1 {
		t.Errorf("status %d after %d requests; want the 503, and no hedge", resp.StatusCode, s.n.Load())
	}
}

// A copy that answers after another did is drained and closed at once,
// its context still alive: its connection goes back to the pool, so that
// racing copies do not cost a connection each time. The race is made
// certain: the first copy's response arrives first (the hedge's is not
// written before it has), but CheckRetry holds it until the hedge has won.
func TestHedgeLoserConnectionReused(t *testing.T) {
	var mu sync.Mutex
	gates := map[int]chan struct{}{}
	gate := func(pair int) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[pair] == nil {
			gates[pair] = make(chan struct{})
		}
		return gates[pair]
	}
	// held has a value when CheckRetry holds the first copy's response.
	held := make(chan struct{}, 1)
	// Requests come in pairs, the first copy and its hedge: the first
	// answers when the hedge arrives, the hedge once the first copy's
	// response is held. Were both written at once, the hedge's could be
	// read first, and the first copy, still waiting for its headers, would
	// rightly be canceled rather than drained.
	s := newHedgeServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Copy", fmt.Sprint(n%2))
		if n%2 == 0 {
			select {
			case <-gate(n / 2):
			case <-r.Context().Done():
				return
			}
		} else {
			close(gate(n / 2))
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, "ok")
	})
	won := make(chan struct{}, 1)
	tr := &retryhttp.Transport{
		Policy: backoff.Policy{Retries: backoff.NoRetries},
		Hedge: &hedge.Hedger{After: 20 * time.Millisecond, OnHedge: func(e hedge.Event) {
			if e.Won {
				won <- struct{}{}
			}
		}},
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if resp != nil && resp.Header.Get("X-Copy") == "0" {
				held <- struct{}{}
				// The first copy's response waits until the hedge has won
				// (or a while, should a dial have let the hedge arrive
				// first and taken the first copy's part).
				select {
				case <-won:
				case <-time.After(time.Second):
				}
			}
			return retryhttp.DefaultCheckRetry(ctx, resp, err)
		},
	}
	client := pooledHedgeClient(t, s, tr)
	const requests = 10
	for range requests {
		select {
		case <-won: // a signal nobody waited for
		default:
		}
		resp, err := client.Get(s.URL)
		readAll(t, resp, err)
	}
	// Each pair needs two connections at once. A loser that is drained
	// returns its connection to the pool; one that is not is closed, one
	// connection lost per request. (How many connections were opened is
	// no measure: net/http returns a drained connection to its pool a
	// moment after the body's end, so the next request may dial first.)
	if got := s.closed.Load(); got != 0 {
		t.Errorf("%d of %d connections closed during %d hedged requests whose copies both answered; want every loser's drained and kept", got, s.conns.Load(), requests)
	}
}

// With HTTP/2, Go's Transport sends the hedge as a second stream on the
// same connection; HedgeBase gives hedges a connection of their own.
func TestHedgeBaseSeparateConnection(t *testing.T) {
	s := newHedgeServer(t, true, stallFirst)
	hedgeBase := s.Client().Transport.(*http.Transport).Clone()
	client := hedgeClient(s, &retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}, HedgeBase: hedgeBase})
	resp, err := client.Get(s.URL)
	if got := readAll(t, resp, err); got != "answer 1" {
		t.Fatalf("body %q; want the hedge's", got)
	}
	if got := s.conns.Load(); got != 2 {
		t.Errorf("%d connections; want 2, the hedge's its own", got)
	}
	hedgeBase.CloseIdleConnections()
}

// The winner's body is the caller's: closing it ends the winning copy's
// context, and no goroutine is left (goleak checks the package).
func TestHedgeWinnerBodyReleases(t *testing.T) {
	s := newHedgeServer(t, false, stallFirst)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := hedgeClient(s, &retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}})
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The body is still readable after RoundTrip returned: the winner's
	// context is alive until Close.
	if got := readAll(t, resp, nil); got != "answer 1" {
		t.Errorf("body %q; want answer 1", got)
	}
	client.CloseIdleConnections()
}

// BenchmarkHedgedRoundTrip is a GET that answers before the hedge delay,
// with Hedge set: the cost of being ready to hedge. The requests' context
// is context.Background, or one that can be canceled (a deadline): a kept
// winner's context then registers with it.
func BenchmarkHedgedRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	deadline, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), deadline} {
		for _, h := range []*hedge.Hedger{nil, {After: time.Hour}} {
			name := "no Hedge"
			if h != nil {
				name = "Hedge armed"
			}
			if ctx != context.Background() {
				name += ", deadline"
			}
			b.Run(name, func(b *testing.B) {
				base := &http.Transport{}
				defer base.CloseIdleConnections()
				client := &http.Client{Transport: &retryhttp.Transport{Base: base, Hedge: h}}
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
				b.ReportAllocs()
				for b.Loop() {
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	}
}

// stallProxy forwards loopback TCP connections to target; once frozen, it
// stops delivering the server's bytes on the connections it had accepted,
// as a network path that stops delivering does.
type stallProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen bool
	conns  []chan struct{} // closed to freeze each accepted connection
	open   []net.Conn      // both ends of every connection, closed at the end
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln}
	var wg sync.WaitGroup
	// At the end every connection is closed before waiting: a copy loop
	// blocked in Read on an idle connection would otherwise never return.
	t.Cleanup(func() {
		ln.Close()
		p.freeze()
		p.mu.Lock()
		for _, c := range p.open {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			stop := make(chan struct{})
			p.mu.Lock()
			p.conns = append(p.conns, stop)
			p.open = append(p.open, c, s)
			p.mu.Unlock()
			wg.Go(func() { io.Copy(s, c); s.Close() })
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := s.Read(buf)
					select {
					case <-stop:
						// Frozen: hold the bytes until the test ends.
						<-t.Context().Done()
						c.Close()
						return
					default:
					}
					if n > 0 {
						c.Write(buf[:n])
					}
					if err != nil {
						c.Close()
						return
					}
				}
			})
		}
	})
	return p
}

// freeze stalls every connection accepted so far.
func (p *stallProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		for _, c := range p.conns {
			close(c)
		}
	}
}

// The measurement behind HedgeBase: when an HTTP/2 connection stalls (its
// server's bytes stop arriving), Go's Transport sends the hedge as another
// stream of the same connection, and it stalls too; through HedgeBase the
// hedge dials a connection of its own and answers.
func TestHedgeHTTP2ConnectionStall(t *testing.T) {
	for _, separate := range []bool{false, true} {
		t.Run(fmt.Sprintf("HedgeBase=%v", separate), func(t *testing.T) {
			s := newHedgeServer(t, true, func(n int, w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "answer %d", n) })
			p := newStallProxy(t, s.Listener.Addr().String())
			viaProxy := func() *http.Transport {
				tr := s.Client().Transport.(*http.Transport).Clone()
				tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "tcp", p.ln.Addr().String())
				}
				return tr
			}
			base, hedgeBase := viaProxy(), viaProxy()
			defer base.CloseIdleConnections()
			defer hedgeBase.CloseIdleConnections()
			tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries},
				Hedge: &hedge.Hedger{After: 20 * time.Millisecond}}
			if separate {
				tr.HedgeBase = hedgeBase
			}
			client := &http.Client{Transport: tr}
			// A first request opens base's connection; then it stalls. It
			// goes through base itself, never hedged: on a loaded machine a
			// hedge would open HedgeBase's connection before the stall, and
			// the stall would then hold it too.
			resp, err := (&http.Client{Transport: base}).Get(s.URL)
			readAll(t, resp, err)
			p.freeze()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			resp, err = client.Do(req)
			if separate {
				if got := readAll(t, resp, err); !strings.HasPrefix(got, "answer") {
					t.Errorf("body %q; want the hedge's answer over its own connection", got)
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("the hedge answered over the stalled connection; want it stalled too (status %d)", resp.StatusCode)
			}
			if s.conns.Load() != 1 {
				t.Errorf("%d connections; want 1: the hedge shared the stalled one", s.conns.Load())
			}
		})
	}
}

// A hedge that fails with a retryable status while the first copy goes on
// to win leaves a response that the Transport drains only once the
// attempt is over: its context must still be alive then, or its
// connection is closed rather than reused.
func TestHedgeFailedLoserConnectionReused(t *testing.T) {
	hedgeDone := make(chan struct{}, 1)
	s := newHedgeServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n%2 == 1 {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "try again")
			return
		}
		select {
		case <-hedgeDone:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "ok")
	})
	tr := &retryhttp.Transport{
		Policy: backoff.Policy{Retries: backoff.NoRetries},
		Hedge:  &hedge.Hedger{After: 20 * time.Millisecond},
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if resp != nil && resp.StatusCode == http.StatusBadGateway {
				// The first copy answers only once the hedge's 502 is in.
				defer func() { hedgeDone <- struct{}{} }()
			}
			return retryhttp.DefaultCheckRetry(ctx, resp, err)
		},
	}
	client := pooledHedgeClient(t, s, tr)
	const requests = 5
	for range requests {
		resp, err := client.Get(s.URL)
		if got := readAll(t, resp, err); got != "ok" {
			t.Fatalf("body %q; want the first copy's ok", got)
		}
	}
	if got := s.closed.Load(); got != 0 {
		t.Errorf("%d connections closed during %d requests whose hedge failed with a 502; want the 502s drained and their connections kept", got, requests)
	}
}

// A hedge whose body cannot be had (GetBody fails: a file changed under
// the request, say) is not sent, and the first copy, which would succeed,
// is neither canceled nor failed: its response is the call's.
func TestHedgeGetBodyFails(t *testing.T) {
	s := newHedgeServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // past the hedge delay
		fmt.Fprintf(w, "answer %d", n)
	})
	client := hedgeClient(s, &retryhttp.Transport{Policy: backoff.Policy{Retries: 2}})
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader("payload"))
	req.Header.Set("Idempotency-Key", "k1")
	var gets atomic.Int32
	req.GetBody = func() (io.ReadCloser, error) {
		gets.Add(1)
		return nil, errors.New("the file changed")
	}
	resp, err := client.Do(req)
	if got := readAll(t, resp, err); got != "answer 0" {
		t.Errorf("body %q; want the first copy's, answer 0", got)
	}
	if s.n.Load() != 1 || s.canceled.Load() != 0 || gets.Load() != 1 {
		t.Errorf("%d requests, %d canceled, GetBody called %d times; want the first copy alone, not canceled, and one GetBody (hedging stops)",
			s.n.Load(), s.canceled.Load(), gets.Load())
	}
}

// A PUT or DELETE without a key is not hedged, but it is still retried
// when Hedge is set, as without it: a retry follows a failed copy.
func TestHedgeUnsafeMethodsStillRetried(t *testing.T) {
	for _, method := range []string{"PUT", "DELETE"} {
		t.Run(method, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {status(503), {body: "done"}}})
			tr := &retryhttp.Transport{Base: base, Policy: noWait, Hedge: &hedge.Hedger{After: time.Millisecond}}
			req, _ := http.NewRequest(method, srv.url("/"), strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if body := readBody(t, resp); body != "done" || len(srv.requests("/")) != 2 {
				t.Errorf("body %q after %d requests; want the retry's, done, after 2", body, len(srv.requests("/")))
			}
		})
	}
}

// Pushback stops the hedging of the whole request, not only of the
// attempt that met it: the retry after a 503 or a 429 goes out one copy
// at a time, though it is slow enough to be hedged, while a retry after a
// 502 (a failure, not pushback) is hedged as usual.
func TestHedgeStopsForTheRequestOnPushback(t *testing.T) {
	slow := status(200)
	slow.delay = 50 * time.Millisecond // ten times the hedge delay
	for _, c := range []struct {
		name  string
		steps []step
		want  int // requests sent
	}{
		// The 503's attempt sends no hedge; nor does the retry.
		{"503", []step{status(503), slow, status(200)}, 2},
		{"429 with Retry-After", []step{retryAfter(429, "0"), slow, status(200)}, 2},
		// The 502 sends its hedge at once, which fails too; the retry is
		// hedged after 5 ms, and the hedge wins.
		{"502", []step{status(502), status(502), slow, status(200)}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": c.steps})
				tr := &retryhttp.Transport{
					Base:   memRT{s},
					Policy: backoff.Policy{Initial: time.Millisecond, Retries: 1, Jitter: backoff.NoJitter},
					Hedge:  &hedge.Hedger{After: 5 * time.Millisecond, MaxHedges: 1},
				}
				req, _ := http.NewRequest("GET", "http://example.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if n := len(s.requests("/")); resp.StatusCode != 200 || n != c.want {
					t.Errorf("status %d after %d requests; want 200 after %d", resp.StatusCode, n, c.want)
				}
			})
		})
	}
}
