package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/again-go/again/fault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// upstream is a loopback server that records what it received.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	hosts   []string
	calls   atomic.Int64
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.hosts = append(u.hosts, r.Host)
		u.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		io.WriteString(w, "upstream")
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) last() http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.headers[len(u.headers)-1]
}

// start runs a Proxy for cfg in front of u on a loopback server.
func start(t *testing.T, u *upstream, cfg Config) (*Proxy, *httptest.Server, *http.Client) {
	t.Helper()
	cfg.To, _ = url.Parse(u.URL)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tr := &http.Transport{}
	t.Cleanup(func() { tr.CloseIdleConnections(); srv.Close() })
	return p, srv, &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, http.Header, string, error) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		fl   Flags
		want []fault.Fault
	}{
		{"fail", Flags{Fail: []string{"0.2:503"}, RetryAfter: "2s"}, []fault.Fault{{Kind: fault.Status, Rate: 0.2, Status: 503, RetryAfter: 2 * time.Second}}},
		{"fail, default status", Flags{Fail: []string{"0.5"}}, []fault.Fault{{Kind: fault.Status, Rate: 0.5, Status: 503}}},
		{"retry-after date", Flags{Fail: []string{"1:429"}, RetryAfter: "date:3s"}, []fault.Fault{{Kind: fault.Status, Rate: 1, Status: 429, RetryAfter: 3 * time.Second, RetryAfterDate: true}}},
		{"latency, a distribution", Flags{Latency: []string{"lognormal:5ms,1.2"}}, []fault.Fault{{Kind: fault.Latency, Dist: fault.Distribution{Name: fault.Lognormal, Median: 5 * time.Millisecond, Sigma: 1.2, Scale: 5 * time.Millisecond, Alpha: 1.5}}}},
		{"latency, fixed", Flags{Latency: []string{"50ms"}}, []fault.Fault{{Kind: fault.Latency, Delay: 50 * time.Millisecond}}},
		{"reset", Flags{Reset: []string{"mid-body:0.05"}}, []fault.Fault{{Kind: fault.Reset, Stage: fault.MidBody, Rate: 0.05}}},
		{"outage", Flags{Outage: []string{"20s@10s"}}, []fault.Fault{{Kind: fault.Outage, Start: 10 * time.Second, Duration: 20 * time.Second}}},
		{"rate", Flags{Rate: []string{"100/s"}}, []fault.Fault{{Kind: fault.RateLimit, Limit: 100, Window: time.Second}}},
		{"rate per minute", Flags{Rate: []string{"600/m"}}, []fault.Fault{{Kind: fault.RateLimit, Limit: 600, Window: time.Minute}}},
		{"rate per 100ms", Flags{Rate: []string{"10/100ms"}}, []fault.Fault{{Kind: fault.RateLimit, Limit: 10, Window: 100 * time.Millisecond}}},
		{"rate per 1m30s", Flags{Rate: []string{"3/1m30s"}}, []fault.Fault{{Kind: fault.RateLimit, Limit: 3, Window: 90 * time.Second}}},
		{"rate 1e3 per hour", Flags{Rate: []string{"1e3/h"}}, []fault.Fault{{Kind: fault.RateLimit, Limit: 1000, Window: time.Hour}}},
		{"match applies to all, outage first", Flags{Fail: []string{"1"}, Outage: []string{"1s@0s"}, Match: []string{"path=/api/", "method=get", "header=x-fault:on"}},
			[]fault.Fault{
				{Kind: fault.Outage, Duration: time.Second, Match: fault.Match{Path: "/api/", Method: "GET", Header: "X-Fault", Value: "on"}},
				{Kind: fault.Status, Rate: 1, Status: 503, Match: fault.Match{Path: "/api/", Method: "GET", Header: "X-Fault", Value: "on"}},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.fl.Faults()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Faults() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	for _, fl := range []Flags{
		{Fail: []string{"2:503"}}, {Fail: []string{"0.2:50"}}, {Fail: []string{"x"}},
		{Latency: []string{"uniform:5ms"}}, {Reset: []string{"middle"}}, {Reset: []string{"mid-body:0"}},
		{Outage: []string{"20s"}}, {Outage: []string{"x@1s"}}, {Rate: []string{"100"}}, {Rate: []string{"0/s"}}, {Rate: []string{"0.5/s"}}, {Rate: []string{"1/100us"}}, {Rate: []string{"+5/s"}}, {Rate: []string{"1e10/s"}},
		{Match: []string{"query=x"}}, {RetryAfter: "soon"}, {Cut: []string{"1.5"}},
		// Statuses HTTP does not allow as an answer: an interim 1xx
		// (a client reads on after a 100, hangs after a 101), 600 on.
		{Fail: []string{"0.2:100"}}, {Fail: []string{"0.2:101"}}, {Fail: []string{"0.2:199"}}, {Fail: []string{"0.2:600"}},
	} {
		if _, err := fl.Faults(); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: Faults() = %v, want an error matching ErrSpec", fl, err)
		}
	}
}

func TestScenario(t *testing.T) {
	sc, faults, err := ParseScenario([]byte(`{"seed": 7, "max_active": 3, "faults": [
		{"kind": "status", "rate": 0.2, "status": 503, "retry_after": "2s", "match": {"path": "/api/", "header": "x-fault"}},
		{"kind": "reset", "stage": "mid-body", "times": 2},
		{"kind": "latency", "dist": "lognormal:5ms,1.2"},
		{"kind": "outage", "start": "10s", "duration": "20s"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Seed != 7 || sc.MaxActive != 3 || len(faults) != 4 {
		t.Fatalf("seed %d, max_active %d, %d faults; want 7, 3, 4", sc.Seed, sc.MaxActive, len(faults))
	}
	if f := faults[0]; f.RetryAfter != 2*time.Second || f.Match.Header != "X-Fault" || f.Rate != 0.2 {
		t.Errorf("faults[0] = %+v", f)
	}
	if f := faults[1]; f.Kind != fault.Reset || f.Stage != fault.MidBody || f.Times != 2 {
		t.Errorf("faults[1] = %+v", f)
	}
	if f := faults[3]; f.Start != 10*time.Second || f.Duration != 20*time.Second {
		t.Errorf("faults[3] = %+v", f)
	}
	for _, st := range []int{fault.MinStatus, fault.MaxStatus} {
		if _, err := (&Flags{Fail: []string{fmt.Sprint("1:", st)}}).Faults(); err != nil {
			t.Errorf("--fail 1:%d: %v, want it accepted", st, err)
		}
	}
	for _, st := range []string{"100", "101", "600"} {
		_, _, err := ParseScenario([]byte(`{"faults": [{"kind": "status", "status": ` + st + `}]}`))
		var se *SpecError
		if !errors.As(err, &se) || se.Flag != "faults[0].status" || se.Value != st || se.Want != fault.StatusAccepted {
			t.Errorf("a scenario's status %s: %v, want a SpecError naming faults[0].status and %q", st, err, fault.StatusAccepted)
		}
	}
	for _, bad := range []string{`{"max_active": -1}`, `{"faults": [{"kind": "explode"}]}`, `{"faults": [{"kynd": "status"}]}`, `{"faults": [{"rate": 3}]}`, `{"faults": [{"delay": "soon"}]}`, `[`} {
		if _, _, err := ParseScenario([]byte(bad)); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseScenario(%s) = %v, want an error matching ErrSpec", bad, err)
		}
	}
}

// Validate names a fault.Fault's field; the error names it as a scenario
// file spells it, so that the user finds it there.
func TestScenarioField(t *testing.T) {
	tags := map[string]bool{}
	st := reflect.TypeFor[ScenarioFault]()
	for i := range st.NumField() {
		tags["faults[3]."+st.Field(i).Tag.Get("json")] = true
	}
	ft := reflect.TypeFor[fault.Fault]()
	for i := range ft.NumField() {
		if got := scenarioField("Faults[3]." + ft.Field(i).Name); !tags[got] {
			t.Errorf("scenarioField(Faults[3].%s) = %q, not a field of a scenario file", ft.Field(i).Name, got)
		}
	}
	if got := scenarioField("Faults[0].Dist.Sigma"); got != "faults[0].dist" {
		t.Errorf("scenarioField(Faults[0].Dist.Sigma) = %q, want faults[0].dist", got)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{"8080": "127.0.0.1:8080", ":8080": "127.0.0.1:8080", "127.0.0.1:0": "127.0.0.1:0", "0.0.0.0:80": "0.0.0.0:80", "[::1]:9": "[::1]:9"} {
		if got, err := ListenAddr(in); got != want || err != nil {
			t.Errorf("ListenAddr(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"host:", "127.0.0.1:99999", "65536", "127.0.0.1:-1", "127.0.0.1:http", "a:b:c"} {
		if _, err := ListenAddr(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ListenAddr(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

func TestForwardsOnlyToTo(t *testing.T) {
	u := newUpstream(t, nil)
	other := newUpstream(t, nil)
	_, srv, c := start(t, u, Config{})

	// A Host header naming another server.
	req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
	req.Host = strings.TrimPrefix(other.URL, "http://")
	if code, _, body, err := do(t, c, req); code != 200 || body != "upstream" || err != nil {
		t.Fatalf("via the proxy: %d %q %v", code, body, err)
	}
	// An absolute URI naming another server, as to a forward proxy.
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s/y HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", other.URL, strings.TrimPrefix(other.URL, "http://"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	conn.Close()
	if other.calls.Load() != 0 || u.calls.Load() != 2 {
		t.Errorf("the other server got %d requests, --to %d; want 0 and 2", other.calls.Load(), u.calls.Load())
	}
}

// A --to that redirects elsewhere: the proxy hands the redirect to the
// client and never follows it.
func TestRedirectNotFollowed(t *testing.T) {
	other := newUpstream(t, nil)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stolen", http.StatusFound)
	})
	_, srv, c := start(t, u, Config{})
	req, _ := http.NewRequest("GET", srv.URL, nil)
	code, h, _, _ := do(t, c, req)
	if code != 302 || h.Get("Location") != other.URL+"/stolen" || other.calls.Load() != 0 {
		t.Errorf("got %d Location %q, the other server %d requests; want 302 to it and none", code, h.Get("Location"), other.calls.Load())
	}
}

func TestHopByHopAndUpgrade(t *testing.T) {
	u := newUpstream(t, nil)
	p, srv, c := start(t, u, Config{})
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Connection", "X-Secret")
	req.Header.Set("X-Secret", "hop")
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	req.Header.Set("Keep-Alive", "timeout=5")
	req.Header.Set("X-Kept", "end-to-end")
	if code, _, _, err := do(t, c, req); code != 200 || err != nil {
		t.Fatalf("%d %v", code, err)
	}
	h := u.last()
	for _, k := range []string{"X-Secret", "Proxy-Authorization", "Keep-Alive"} {
		if h.Get(k) != "" {
			t.Errorf("upstream got hop-by-hop %s: %q", k, h.Get(k))
		}
	}
	if h.Get("X-Kept") != "end-to-end" || h.Get("X-Forwarded-For") == "" {
		t.Errorf("upstream got X-Kept %q, X-Forwarded-For %q; want both", h.Get("X-Kept"), h.Get("X-Forwarded-For"))
	}
	req, _ = http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	if code, _, _, _ := do(t, c, req); code != 501 || u.calls.Load() != 1 || p.Stats().Refused != 1 {
		t.Errorf("Upgrade: %d, upstream %d requests, %d refused; want 501, 1, 1", code, u.calls.Load(), p.Stats().Refused)
	}
	// CONNECT: a tunnel too, to a host of the client's choosing.
	req, _ = http.NewRequest("CONNECT", srv.URL, nil)
	req.Host = "elsewhere.test:443"
	if code, _, _, _ := do(t, c, req); code != 501 || u.calls.Load() != 1 || p.Stats().Refused != 2 {
		t.Errorf("CONNECT: %d, upstream %d requests, %d refused; want 501, 1, 2", code, u.calls.Load(), p.Stats().Refused)
	}
}

func TestHeaderControl(t *testing.T) {
	u := newUpstream(t, nil)
	abort := func(c *http.Client, url string, pct string) int {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set(HeaderAbort, "503")
		if pct != "" {
			req.Header.Set(HeaderAbortPercentage, pct)
		}
		code, _, _, err := do(t, c, req)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	t.Run("off by default", func(t *testing.T) {
		p, srv, c := start(t, u, Config{})
		if code := abort(c, srv.URL, ""); code != 200 || u.last().Get(HeaderAbort) != "" || p.Stats().HeaderFaults != 0 {
			t.Errorf("got %d, upstream saw %q; want 200 and the header removed", code, u.last().Get(HeaderAbort))
		}
	})
	t.Run("on", func(t *testing.T) {
		p, srv, c := start(t, u, Config{HeaderControl: true})
		if code := abort(c, srv.URL, ""); code != 503 || p.Stats().HeaderFaults != 1 {
			t.Errorf("abort 503: got %d, %d header faults", code, p.Stats().HeaderFaults)
		}
		if code := abort(c, srv.URL, "0"); code != 200 {
			t.Errorf("abort 503 at 0 %%: got %d, want 200", code)
		}
		// The statuses the flags and files refuse, headers cannot ask.
		for _, st := range []string{"100", "101", "199", "600"} {
			req, _ := http.NewRequest("GET", srv.URL, nil)
			req.Header.Set(HeaderAbort, st)
			if code, _, _, _ := do(t, c, req); code != 200 {
				t.Errorf("abort %s: got %d, want 200, no fault", st, code)
			}
		}
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set(HeaderDelay, "50")
		start := time.Now()
		if code, _, _, _ := do(t, c, req); code != 200 || time.Since(start) < 50*time.Millisecond {
			t.Errorf("delay 50 ms: %d after %v", code, time.Since(start))
		}
		req, _ = http.NewRequest("GET", srv.URL, nil)
		req.Header.Set(HeaderReset, "before-headers")
		if _, err := c.Do(req); err == nil {
			t.Error("reset before headers: a response, want an error")
		}
	})
	t.Run("mid-body reset of a chunked body", func(t *testing.T) {
		chunked := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			for range 10 {
				io.WriteString(w, strings.Repeat("z", 10<<10))
				http.NewResponseController(w).Flush()
			}
		})
		_, srv, c := start(t, chunked, Config{HeaderControl: true})
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set(HeaderReset, "mid-body")
		if code, h, body, err := do(t, c, req); code != 200 || h.Get("Content-Length") != "" || len(body) < 1 || len(body) > fault.MaxDrawnBytes || err == nil {
			t.Errorf("got %d, Content-Length %q, %d bytes, %v; want 200, none, 1 to %d bytes of 100 KiB, an error", code, h.Get("Content-Length"), len(body), err, fault.MaxDrawnBytes)
		}
	})
}

// MaxActive caps the faults in progress: while one request stalls, the
// next gets no fault.
func TestMaxActive(t *testing.T) {
	u := newUpstream(t, nil)
	p, srv, c := start(t, u, Config{MaxActive: 1, HeaderControl: true, Faults: []fault.Fault{{Kind: fault.Stall, Match: fault.Match{Path: "/stall"}}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/stall", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); p.Injector().Active() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stall never started")
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/stall", nil)
	req.Header.Set(HeaderAbort, "500")
	if code, _, _, err := do(t, c, req); code != 200 || err != nil {
		t.Errorf("a second request while one stalls: %d, %v; want 200, no fault (neither the flag's stall nor the header's abort)", code, err)
	}
}

func TestFaultsThroughTheProxy(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "8")
		io.WriteString(w, "upstream")
	})
	faults, err := (&Flags{Fail: []string{"1:503"}, RetryAfter: "2s", Match: []string{"path=/fail"}, Reset: []string{"mid-body"}}).Faults()
	if err != nil {
		t.Fatal(err)
	}
	// The reset only where the failure does not match.
	faults[1].Match = fault.Match{Path: "/reset"}
	p, srv, c := start(t, u, Config{Faults: faults})
	req, _ := http.NewRequest("GET", srv.URL+"/fail", nil)
	if code, h, _, _ := do(t, c, req); code != 503 || h.Get("Retry-After") != "2" {
		t.Errorf("--fail 1:503 --retry-after 2s: %d, Retry-After %q", code, h.Get("Retry-After"))
	}
	req, _ = http.NewRequest("GET", srv.URL+"/reset", nil)
	if code, _, body, err := do(t, c, req); code != 200 || body != "upst" || err == nil {
		t.Errorf("--reset mid-body: %d %q %v; want 200, half the body, an error", code, body, err)
	}
	s := p.Stats()
	if s.Requests != 2 || s.Faults["status"] != 1 || s.Faults["reset"] != 1 || u.calls.Load() != 1 {
		t.Errorf("stats %+v, upstream %d calls; want 2 requests, 1 status, 1 reset, 1 call", s, u.calls.Load())
	}
	if line := s.Line(); line != "2 requests, 1 status, 1 reset, 0 upstream errors" {
		t.Errorf("Line() = %q", line)
	}
	b, _ := json.Marshal(s)
	if string(b) != `{"requests":2,"faults":{"reset":1,"status":1},"header_faults":0,"upstream_errors":0,"refused":0}` {
		t.Errorf("JSON %s", b)
	}
}

func TestUpstreamErrorsCounted(t *testing.T) {
	u := newUpstream(t, nil)
	p, srv, c := start(t, u, Config{})
	u.Close() // nothing listens there now
	req, _ := http.NewRequest("GET", srv.URL, nil)
	if code, _, _, _ := do(t, c, req); code != 502 || p.Stats().UpstreamErrors != 1 {
		t.Errorf("upstream down: %d, %d upstream errors; want 502, 1", code, p.Stats().UpstreamErrors)
	}
}

// A huge body each way, streamed: the proxy's heap stays far below the
// body's size.
func TestHugeBodiesInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 × 256 MiB")
	}
	const size = 256 << 20
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if n != size {
			http.Error(w, fmt.Sprint("got ", n), 400)
			return
		}
		io.Copy(w, io.LimitReader(zeros{}, size))
	})
	_, srv, c := start(t, u, Config{})
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	req, _ := http.NewRequest("POST", srv.URL, io.LimitReader(zeros{}, size))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(stop)
	<-sampled
	if resp.StatusCode != 200 || n != size || err != nil {
		t.Fatalf("got %d, %d bytes, %v; want 200 and %d", resp.StatusCode, n, err, size)
	}
	if p := peak.Load(); p > 64<<20 {
		t.Errorf("heap in use peaked at %d MiB while streaming 256 MiB each way; want under 64", p>>20)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A client that stops reading: the proxy does not read the upstream's
// body ahead into memory, so the upstream is held back too.
func TestSlowClientHoldsTheUpstreamBack(t *testing.T) {
	var written atomic.Int64
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 32<<10)
		for written.Load() < 1<<30 {
			n, err := w.Write(buf)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	_, srv, c := start(t, u, Config{})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Wait for the upstream to block: its count stops growing.
	last := int64(-1)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		n := written.Load()
		if n == last {
			break
		}
		last = n
	}
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the upstream wrote %d MiB to a client that read nothing; want it held back by the buffers (under 64 MiB)", n>>20)
	}
}

func TestServeShutsDown(t *testing.T) {
	u := newUpstream(t, nil)
	to, _ := url.Parse(u.URL)
	p, err := New(Config{To: to})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lines := make(chan string, 100)
	done := make(chan error)
	go func() { done <- Serve(ctx, ln, p, func(s Stats) { lines <- s.Line() }, time.Millisecond, time.Second) }()
	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	for l := range lines {
		if strings.HasPrefix(l, "1 requests") {
			break
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
}

func BenchmarkProxy(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	to, _ := url.Parse(up.URL)
	p, _ := New(Config{To: to, Faults: []fault.Fault{{Match: fault.Match{Path: "/never"}}}})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"ReverseProxy", &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(to); pr.SetXForwarded() }}}, {"again-proxy", p}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := httptest.NewServer(bc.h)
			defer srv.Close()
			c := &http.Client{Transport: &http.Transport{}}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// okTransport answers every request at once, in memory: the benchmarks
// then measure the proxies' own cost, not the loopback network's.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// The proxy with faults that match nothing against httputil.ReverseProxy
// alone, both over an in-memory upstream.
func BenchmarkProxyInMemory(b *testing.B) {
	to, _ := url.Parse("http://upstream.test")
	p, _ := New(Config{To: to, Transport: okTransport{}, Faults: []fault.Fault{{Match: fault.Match{Path: "/never"}}, {Kind: fault.Reset, Match: fault.Match{Method: "POST"}}}})
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(to); pr.SetXForwarded() }, Transport: okTransport{}}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"ReverseProxy", rp}, {"again-proxy", p}} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "http://proxy.test/items", nil)
			req.RemoteAddr = "127.0.0.1:1234"
			b.ReportAllocs()
			for b.Loop() {
				bc.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

// --outage 20s@10s: the timeline starts with the proxy, not with its
// first request.
func TestOutageFromTheStart(t *testing.T) {
	u := newUpstream(t, nil)
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	faults, err := (&Flags{Outage: []string{"20s@10s"}}).Faults()
	if err != nil {
		t.Fatal(err)
	}
	_, srv, c := start(t, u, Config{Faults: faults, Now: clock})
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{5 * time.Second, 200}, {5 * time.Second, 503}, {19 * time.Second, 503}, {time.Second, 200}} {
		advance(step.advance)
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if code, _, _, _ := do(t, c, req); code != step.want {
			t.Errorf("at %v: %d, want %d", clock().Sub(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)), code, step.want)
		}
	}
}
