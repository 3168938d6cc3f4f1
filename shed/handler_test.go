package shed

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestHandlerRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var shed []string
		s, f := newTest(t, Config{Limit: 1, MaxQueue: -1, Rand: fixedRand(0.5),
			Quota: func(r *http.Request) (time.Duration, bool) {
				return 2500 * time.Millisecond, r.Header.Get("Client") != "greedy"
			},
			OnShed: func(c Criticality, r Reason) { shed = append(shed, c.String()+" "+r.String()) },
		})
		hold := make(chan struct{})
		h := s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hold }))
		go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		synctest.Wait()
		for _, tt := range []struct {
			name       string
			header     http.Header
			status     int
			retryAfter string
		}{
			{"at the limit", nil, 503, "2"}, // 1s × 1.5 rounded up
			{"sheddable at the limit", http.Header{HeaderCriticality: {"sheddable"}}, 503, "2"},
			{"over quota", http.Header{"Client": {"greedy"}}, 429, "3"},
		} {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/", nil)
			for k, v := range tt.header {
				r.Header[k] = v
			}
			h.ServeHTTP(rec, r)
			if rec.Code != tt.status || rec.Header().Get("Retry-After") != tt.retryAfter {
				t.Errorf("%s: status %d, Retry-After %q; want %d, %q", tt.name, rec.Code, rec.Header().Get("Retry-After"), tt.status, tt.retryAfter)
			}
		}
		want := []string{"CRITICAL queue_full", "SHEDDABLE queue_full", "CRITICAL quota"}
		if len(shed) != len(want) || shed[0] != want[0] || shed[1] != want[1] || shed[2] != want[2] {
			t.Errorf("OnShed calls %q, want %q", shed, want)
		}
		close(hold)
		synctest.Wait()
		if n := f.InFlight(); n != 0 {
			t.Errorf("permits out at the end = %d, want 0", n)
		}
	})
}

func TestHandlerRetryAfterIsJittered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTest(t, Config{Limit: 1, MaxQueue: -1})
		hold := make(chan struct{})
		h := s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hold }))
		go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		synctest.Wait()
		seen := map[string]int{}
		for range 200 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			seen[rec.Header().Get("Retry-After")]++
		}
		close(hold)
		synctest.Wait()
		// At rest: 1s to 2s, in whole seconds.
		if len(seen) != 2 || seen["1"] == 0 || seen["2"] == 0 {
			t.Errorf("Retry-After values over 200 refusals at rest = %v, want both 1 and 2", seen)
		}
	})
}

func TestHandlerReadsHeaders(t *testing.T) {
	s, _ := newTest(t, Config{Classify: func(r *http.Request) Criticality {
		if r.URL.Path == "/batch" {
			return Sheddable
		}
		return Unspecified
	}})
	for _, tt := range []struct {
		path   string
		header http.Header
		want   Request
	}{
		{"/", nil, Request{Criticality: Critical}},
		{"/", http.Header{HeaderCriticality: {"CRITICAL_PLUS"}, HeaderAttempt: {"3"}}, Request{Criticality: CriticalPlus, Attempt: 3}},
		{"/", http.Header{HeaderCriticality: {"bogus"}}, Request{Criticality: Unknown}},
		{"/batch", http.Header{HeaderCriticality: {"CRITICAL_PLUS"}}, Request{Criticality: Sheddable}},
		{"/", http.Header{HeaderAttempt: {"x"}}, Request{Criticality: Critical, Attempt: 1}},
	} {
		r := httptest.NewRequest("GET", tt.path, nil)
		for k, v := range tt.header {
			r.Header[k] = v
		}
		if got := s.request(r); got != tt.want {
			t.Errorf("request(%s %v) = %+v, want %+v", tt.path, tt.header, got, tt.want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	for v, want := range map[string]time.Duration{"1500": 1500 * time.Millisecond, "0": 1, "-1": 0, "": 0} {
		r.Header.Set(HeaderTimeout, v)
		if got := s.request(r).Timeout; got != want {
			t.Errorf("request with %s: %q: Timeout %v, want %v", HeaderTimeout, v, got, want)
		}
	}
	r.Header.Set(HeaderTimeout, "1500")
	s2, _ := newTest(t, Config{IgnoreTimeout: true})
	if d := s2.request(r).Timeout; d != 0 {
		t.Errorf("request with IgnoreTimeout: Timeout %v, want none", d)
	}
}

// TestHandlerNeverLeaksAPermit runs handlers that panic, stream, hijack
// and outlive their canceled request on a loopback server, and checks
// that every permit came back.
func TestHandlerNeverLeaksAPermit(t *testing.T) {
	f := NewFixed(2)
	s, err := New(Config{Adaptive: f})
	if err != nil {
		t.Fatal(err)
	}
	outlived := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			_, _ = io.WriteString(w, strconv.Itoa(i))
			http.NewResponseController(w).Flush()
		}
	})
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		_ = buf.Flush()
		_ = c.Close()
	})
	mux.HandleFunc("/outlive", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		<-outlived // goes on after the client left
	})
	// served counts the requests out of the Shedder's handler: Close does
	// not wait for a handler that hijacked its connection to return.
	var served sync.WaitGroup
	h := s.Wrap(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		defer served.Done()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	get := func(ctx context.Context, path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if _, err := get(context.Background(), "/panic"); err == nil {
		t.Errorf("GET /panic: no error, want the connection aborted")
	}
	if body, err := get(context.Background(), "/stream"); err != nil || body != "012" {
		t.Errorf("GET /stream = %q, %v; want \"012\", nil", body, err)
	}
	if body, err := get(context.Background(), "/hijack"); err != nil || body != "ok" {
		t.Errorf("GET /hijack = %q, %v; want \"ok\", nil", body, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := get(ctx, "/outlive"); done <- err }()
	for f.InFlight() == 0 { // the handler started
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("GET /outlive canceled: %v, want context.Canceled", err)
	}
	if n := f.InFlight(); n != 1 {
		t.Errorf("permits out while the handler outlives its request = %d, want 1", n)
	}
	close(outlived)
	srv.Close()
	served.Wait()
	if n := f.InFlight(); n != 0 {
		t.Errorf("permits out after panic, stream, hijack and outlive = %d, want 0", n)
	}
}
