// Package proxy is the model of `again proxy`: a reverse proxy that injects
// faults.
//
// Built on net/http/httputil, it applies package fault's faults to real
// traffic on its way to one upstream, counts what it did, and prints it.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/fault"
	"github.com/again-go/again/shed"
)

// Config configures a Proxy. To is required; zero fields mean no faults,
// seed 0, no cap and no header control.
type Config struct {
	// To is the upstream: every request goes to its scheme and host,
	// whatever the request's own Host or URL say.
	To *url.URL
	// Faults, Seed and MaxActive are the fault.Injector's. MaxActive also
	// caps the faults asked for by headers.
	Faults    []fault.Fault
	Seed      uint64
	MaxActive int
	// HeaderControl lets requests ask for faults with Envoy's fault
	// headers (see ControlHeaders); off, those headers have no effect.
	// They never reach the upstream either way.
	HeaderControl bool
	// Transport sends the requests upstream; nil means a transport that,
	// unlike http.DefaultTransport, ignores HTTP_PROXY and friends: the
	// proxy never forwards to a host other than To.
	Transport http.RoundTripper
	// Now is the clock of the faults' timeline; nil means time.Now.
	Now func() time.Time
	// Shed, if not nil, protects the upstream with a shed.Shedder of this
	// configuration (again proxy --shed): the requests the faults let
	// through are forwarded under its concurrency limit, queued by
	// priority under CoDel, or shed with a 503 and a Retry-After. What it
	// sheds is counted in Stats.Shed, by reason.
	Shed *shed.Config
}

// The request headers of header control, Envoy's names (HTTP fault
// filter): an abort with a status, a delay in milliseconds, each with an
// optional percentage of the requests that carry it [100]; and a reset at
// a stage, an again extension.
const (
	HeaderAbort           = "X-Envoy-Fault-Abort-Request"
	HeaderAbortPercentage = "X-Envoy-Fault-Abort-Request-Percentage"
	HeaderDelay           = "X-Envoy-Fault-Delay-Request"
	HeaderDelayPercentage = "X-Envoy-Fault-Delay-Request-Percentage"
	HeaderReset           = "X-Again-Fault-Reset"
)

// ControlHeaders returns the header-control headers, in order. Each call
// returns a new slice.
func ControlHeaders() []string {
	return []string{HeaderAbort, HeaderAbortPercentage, HeaderDelay, HeaderDelayPercentage, HeaderReset}
}

// Proxy is an http.Handler that forwards to Config.To through the faults.
// Make one with New; it is safe for concurrent use.
type Proxy struct {
	cfg     Config
	in      *fault.Injector
	handler http.Handler
	rp      *httputil.ReverseProxy

	requests, upstreamErrors, refused, headerFaults atomic.Int64
	headerActive, headerSeq                         atomic.Int64
	shed                                            [shed.Quota + 1]atomic.Int64 // by shed.Reason
}

// New returns a Proxy for cfg, or an error for an invalid one (no To, an
// invalid fault).
func New(cfg Config) (*Proxy, error) {
	if cfg.To == nil || cfg.To.Host == "" || (cfg.To.Scheme != "http" && cfg.To.Scheme != "https") {
		return nil, &SpecError{"--to", fmt.Sprint(cfg.To), "an http or https URL with a host"}
	}
	p := &Proxy{cfg: cfg}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	// The timeline (--outage START) begins now, when the proxy starts.
	p.in = &fault.Injector{Faults: cfg.Faults, Seed: cfg.Seed, MaxActive: cfg.MaxActive, Now: cfg.Now, Epoch: now()}
	if err := p.in.Validate(); err != nil {
		return nil, err
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		// What the client asked, the upstream answers: without this,
		// a request without Accept-Encoding would go out asking for
		// gzip and come back decompressed, another body than the
		// upstream's, of unknown length.
		t.DisableCompression = true
		tr = t
	}
	to := cfg.To
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.SetXForwarded()
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				p.upstreamErrors.Add(1)
			}
			delete(w.Header(), "Date") // the proxy's own answer: dated
			http.Error(w, "again proxy: upstream: "+err.Error(), http.StatusBadGateway)
		},
		ErrorLog:   discardLog,
		BufferPool: &bufferPool{},
	}
	var fwd http.Handler = http.HandlerFunc(p.forward)
	if cfg.Shed != nil {
		sc := *cfg.Shed
		prev := sc.OnShed
		sc.OnShed = func(c shed.Criticality, r shed.Reason) {
			if int(r) < len(p.shed) {
				p.shed[r].Add(1)
			}
			if prev != nil {
				prev(c, r)
			}
		}
		s, err := shed.New(sc)
		if err != nil {
			return nil, err
		}
		fwd = s.Wrap(fwd)
	}
	p.handler = &fault.Handler{Injector: p.in, Next: fwd}
	return p, nil
}

// forward sends r upstream and passes its answer back as it came, headers
// and bytes. The server would add a Date and a sniffed Content-Type to an
// answer without them: nil values suppress both, and the upstream's own,
// if it sent them, are added to the nil by ReverseProxy's copy.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Date"], h["Content-Type"] = nil, nil
	p.rp.ServeHTTP(w, r)
}

// bufferPool reuses ReverseProxy's 32 KiB copy buffers, which it would
// otherwise allocate per request.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// Injector returns the injector of the flags' and the file's faults, for
// its counters.
func (p *Proxy) Injector() *fault.Injector { return p.in }

// ServeHTTP forwards r upstream through the faults. It refuses Upgrade
// and CONNECT requests (501): a tunnel would carry bytes no fault can
// touch, and CONNECT names a host other than To.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	if r.Header.Get("Upgrade") != "" || r.Method == http.MethodConnect {
		p.refused.Add(1)
		what := "Upgrade"
		if r.Method == http.MethodConnect {
			what = "CONNECT"
		}
		http.Error(w, "again proxy: "+what+" is not supported", http.StatusNotImplemented)
		return
	}
	var h http.Handler = p.handler
	if ctrl := p.control(r); ctrl != nil {
		active := p.headerActive.Add(1)
		if p.cfg.MaxActive > 0 && int64(p.in.Active())+active > int64(p.cfg.MaxActive) {
			p.headerActive.Add(-1) // over the cap: no fault
		} else {
			defer p.headerActive.Add(-1)
			p.headerFaults.Add(1)
			h = ctrl
		}
	}
	for _, k := range ControlHeaders() {
		r.Header.Del(k)
	}
	h.ServeHTTP(w, r)
}

// control returns the handler of the faults r's headers ask for, or nil.
func (p *Proxy) control(r *http.Request) http.Handler {
	if !p.cfg.HeaderControl {
		return nil
	}
	pick := func(pctHeader string) bool {
		pct := 100.0
		if v := r.Header.Get(pctHeader); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return false
			}
			pct = min(f, 100)
		}
		n := uint64(p.headerSeq.Add(1))
		return rand.New(rand.NewPCG(p.cfg.Seed, n)).Float64()*100 < pct
	}
	var faults []fault.Fault
	if v := r.Header.Get(HeaderDelay); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 && ms <= 3_600_000 && pick(HeaderDelayPercentage) {
			faults = append(faults, fault.Fault{Kind: fault.Latency, Delay: time.Duration(ms) * time.Millisecond})
		}
	}
	if v := r.Header.Get(HeaderAbort); v != "" {
		if st, err := strconv.Atoi(v); err == nil && fault.ValidStatus(st) && pick(HeaderAbortPercentage) {
			faults = append(faults, fault.Fault{Status: st})
		}
	}
	if v := r.Header.Get(HeaderReset); v != "" {
		if st, err := fault.ParseStage(v); err == nil {
			faults = append(faults, fault.Fault{Kind: fault.Reset, Stage: st})
		}
	}
	if len(faults) == 0 {
		return nil
	}
	// Each fault its own layer, outermost first: a delay, then an abort.
	// Each request's injectors see one request, their first: a seed of
	// its own draws the bytes a mid-body reset lets through.
	seed := rand.New(rand.NewPCG(p.cfg.Seed, uint64(p.headerSeq.Add(1)))).Uint64()
	var h http.Handler = p.handler
	for i := len(faults) - 1; i >= 0; i-- {
		h = &fault.Handler{Injector: &fault.Injector{Faults: faults[i : i+1], Seed: seed}, Next: h}
	}
	return h
}

// Stats is what a Proxy did. Its JSON form is `again proxy --format
// json`'s.
type Stats struct {
	Requests int64 `json:"requests"`
	// Faults counts the injected faults by kind (fault.Kind's names), of
	// the flags and the file; HeaderFaults the requests that got faults
	// by header control.
	Faults       map[string]int64 `json:"faults"`
	HeaderFaults int64            `json:"header_faults"`
	// UpstreamErrors counts the requests the upstream did not answer (a
	// 502 to the client); Refused the Upgrade and CONNECT requests
	// refused.
	UpstreamErrors int64 `json:"upstream_errors"`
	Refused        int64 `json:"refused"`
	// Shed counts the requests the load shedder (Config.Shed) refused, by
	// shed.Reason's names (queue_full, overload, deadline, timeout,
	// canceled); absent without --shed.
	Shed map[string]int64 `json:"shed,omitempty"`
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	s := Stats{Requests: p.requests.Load(), HeaderFaults: p.headerFaults.Load(), UpstreamErrors: p.upstreamErrors.Load(), Refused: p.refused.Load(), Faults: map[string]int64{}}
	for _, k := range fault.Kinds() {
		if n := p.in.Injected(k); n > 0 {
			s.Faults[k.String()] = n
		}
	}
	if p.cfg.Shed != nil {
		s.Shed = map[string]int64{}
		for r := range p.shed {
			if n := p.shed[r].Load(); n > 0 {
				s.Shed[shed.Reason(r).String()] = n
			}
		}
	}
	return s
}

// Line returns s as the live one-line summary.
func (s Stats) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests, ", s.Requests)
	n := 0
	for _, k := range fault.Kinds() {
		if v := s.Faults[k.String()]; v > 0 {
			fmt.Fprintf(&b, "%d %s, ", v, k)
			n++
		}
	}
	if n == 0 {
		b.WriteString("no faults, ")
	}
	if s.HeaderFaults > 0 {
		fmt.Fprintf(&b, "%d by header, ", s.HeaderFaults)
	}
	fmt.Fprintf(&b, "%d upstream errors", s.UpstreamErrors)
	if s.Shed != nil {
		fmt.Fprintf(&b, ", %d shed", s.shedTotal())
	}
	return b.String()
}

// shedTotal returns the requests shed, whatever the reason.
func (s Stats) shedTotal() int64 {
	var n int64
	for _, v := range s.Shed {
		n += v
	}
	return n
}

// Table returns s as the final table, one row per count.
func (s Stats) Table() string {
	var b strings.Builder
	row := func(name string, v int64) { fmt.Fprintf(&b, "%-20s %d\n", name, v) }
	row("requests", s.Requests)
	for _, k := range fault.Kinds() {
		if v := s.Faults[k.String()]; v > 0 {
			row("fault "+k.String(), v)
		}
	}
	row("faults by header", s.HeaderFaults)
	if s.Shed != nil {
		row("shed", s.shedTotal())
		for r := shed.QueueFull; r <= shed.Quota; r++ {
			if v := s.Shed[r.String()]; v > 0 {
				row("shed "+r.String(), v)
			}
		}
	}
	row("upstream errors", s.UpstreamErrors)
	row("tunnels refused", s.Refused)
	return b.String()
}

// ListenSyntax is what --listen accepts.
const ListenSyntax = "host:port or port, port from 0 to 65535, such as 127.0.0.1:8080"

// ListenAddr returns the address to listen on for addr: a host-less
// address (":8080", "8080") is loopback, 127.0.0.1; any other host is as
// given, so that listening beyond loopback takes an explicit host such as
// 0.0.0.0. The port is a number (0: any free port).
func ListenAddr(addr string) (string, error) {
	given := addr
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return "", &SpecError{"--listen", given, ListenSyntax}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Serve serves p on ln until ctx ends, then shuts down, giving the
// requests in progress up to grace to end. If live is not nil, it gets
// p's Line every tick, each over the last ("\r" and a clear to the end of
// the line), for a terminal.
func Serve(ctx context.Context, ln net.Listener, p *Proxy, live func(Stats), tick, grace time.Duration) error {
	srv := &http.Server{
		Handler: p,
		// A client that sends its headers slowly holds a connection
		// and nothing else: bound it (slowloris). Bodies and answers
		// have no bound: faults stall them on purpose.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          discardLog,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var ticks <-chan time.Time
	if live != nil && tick > 0 {
		t := time.NewTicker(tick)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case err := <-errc:
			return err
		case <-ticks:
			live(p.Stats())
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			err := srv.Shutdown(sctx)
			if errors.Is(err, context.DeadlineExceeded) {
				err = srv.Close()
			}
			<-errc
			return err
		}
	}
}
