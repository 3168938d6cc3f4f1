package shed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/again-go/again/limiter"
	"github.com/again-go/again/shed"
)

// The one line: a handler behind a Shedder with the defaults.
func ExampleHandler() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })
	srv := httptest.NewServer(shed.Handler(mux))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello
}

// An adaptive limit: package limiter's Gradient2 learns the handler's
// latency, from the time each request spent in it, and lowers the limit
// when that latency grows beyond its baseline (see the limiter package).
// A request beyond the limit is queued and shed as with a fixed one.
func ExampleConfig_adaptive() {
	l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Min: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := shed.New(shed.Config{Adaptive: l})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	})))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// One request in flight teaches a limit of 20 nothing: the server,
	// not the handler, limited it.
	fmt.Println("limit", l.Limit(), "in flight", l.Snapshot().InFlight)
	// Output:
	// 200 hello
	// limit 20 in flight 0
}

// A server at its limit sheds what it cannot queue: 503 and when to come
// back.
func ExampleShedder_Wrap() {
	s, err := shed.New(shed.Config{Limit: 1, MaxQueue: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	busy, release := make(chan struct{}), make(chan struct{})
	h := s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(busy)
			<-release
		}
	}))
	done := make(chan struct{})
	go func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/slow", nil)); close(done) }()
	<-busy

	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set(shed.HeaderCriticality, "SHEDDABLE")
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After") != "", rec.Body.String())
	close(release)
	<-done
	// Output: 503 true shed: queue_full
}

// Any transport can use the Shedder: admit, serve, give the permit back.
func ExampleShedder_Admit() {
	s, err := shed.New(shed.Config{Limit: 1, MaxQueue: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := s.Admit(context.Background(), shed.Request{Criticality: shed.Critical})
	fmt.Println(err)
	_, err = s.Admit(context.Background(), shed.Request{Criticality: shed.Sheddable, Attempt: 2})
	var se *shed.ShedError
	fmt.Println(errors.Is(err, shed.ErrShed), errors.As(err, &se) && se.Reason == shed.QueueFull)
	p.Done()
	// Output:
	// <nil>
	// true true
}

// Invalid configuration is refused with the field and what is accepted.
func ExampleConfig_Validate() {
	err := shed.Config{Target: 0, Interval: 0, Default: shed.Unknown}.Validate()
	fmt.Println(errors.Is(err, shed.ErrInvalid), err)
	// Output: true shed: Config.Default must be SHEDDABLE, SHEDDABLE_PLUS, CRITICAL or CRITICAL_PLUS (zero means CRITICAL), got UNKNOWN
}

// A Core decides on explicit times, as a simulator's events call it: one
// permit, two requests waiting, the first of them whose client leaves,
// then the permit back.
func ExampleCore() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	names := []string{"a", "b", "c"}
	c, err := shed.NewCore(shed.Config{Limit: 1}, start, func(w *shed.Waiter, r shed.Reason) {
		fmt.Println(names[w.Tag], r)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ws := []*shed.Waiter{{Tag: 0}, {Tag: 1}, {Tag: 2}}
	for i := range ws {
		queued, r := c.Arrive(at(i), shed.Request{}, ws[i])
		fmt.Println(names[i], "queued:", queued, r)
	}
	c.Leave(ws[1], shed.Canceled) // b's client goes away
	c.Done(at(20), 20*time.Millisecond)
	fmt.Printf("%+v\n", c.Snapshot(at(20)))
	// Output:
	// a queued: false admitted
	// b queued: true admitted
	// c queued: true admitted
	// b canceled
	// c admitted
	// {InFlight:1 Queued:0 Overloaded:false Load:1}
}
