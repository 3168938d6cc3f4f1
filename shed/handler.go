package shed

import (
	"net/http"
	"strconv"
	"time"
)

// Handler wraps next in a Shedder with the zero Config's defaults: the
// one line that protects a server.
//
//	http.ListenAndServe("localhost:8080", shed.Handler(mux))
func Handler(next http.Handler) http.Handler {
	s, _ := New(Config{}) // the zero Config is valid
	return s.Wrap(next)
}

// Wrap returns next behind s: each request is admitted, queued or shed
// (HTTP 503 with a Retry-After in whole seconds, rounded; 429 if Config.Quota
// refused it) before next sees it. Its permit goes back when next
// returns, whatever next did: panicked (the panic goes on), hijacked the
// connection, streamed, or went on after the client went away.
func (s *Shedder) Wrap(next http.Handler) http.Handler {
	return &handler{s: s, next: next}
}

type handler struct {
	s    *Shedder
	next http.Handler
}

// ServeHTTP admits, queues or sheds r.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	req := s.request(r)
	if s.cfg.Quota != nil {
		if wait, ok := s.cfg.Quota(r); !ok {
			if wait == 0 {
				wait = s.cfg.RetryAfter
			}
			if wait == 0 {
				wait = DefaultRetryAfter
			}
			s.refuse(w, http.StatusTooManyRequests, req.Criticality, Quota, wait)
			return
		}
	}
	p, why := s.admit(r.Context(), req)
	if why != Admitted {
		s.refuse(w, http.StatusServiceUnavailable, req.Criticality, why, s.RetryAfter())
		return
	}
	served := false
	defer func() {
		switch {
		case r.Context().Err() != nil:
			p.Abandon() // the client went away: a drop if its deadline passed
		case served:
			p.Done()
		default:
			p.Release() // a panic: no sample
		}
	}()
	h.next.ServeHTTP(w, r)
	served = true
}

// request reads r's class, attempt number and deadline from its headers
// (and Config.Classify).
func (s *Shedder) request(r *http.Request) Request {
	var req Request
	if s.cfg.Classify != nil {
		req.Criticality = s.cfg.Classify(r)
	}
	if req.Criticality == Unspecified {
		req.Criticality = ParseCriticality(first(r.Header, HeaderCriticality))
	}
	req.Criticality = s.core.Class(req.Criticality)
	if v := first(r.Header, HeaderAttempt); v != "" {
		req.Attempt = ParseAttempt(v)
	}
	if !s.cfg.IgnoreTimeout {
		if d, ok := ParseTimeout(first(r.Header, HeaderTimeout)); ok {
			req.Timeout = max(d, 1) // "0": no time left
		}
	}
	return req
}

// first returns h's first value of the canonical key k, without the
// canonicalization of Header.Get.
func first(h http.Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// refuse answers a shed request: status, a Retry-After of wait in whole
// seconds (RetryAfterSeconds), a one-line body.
func (s *Shedder) refuse(w http.ResponseWriter, status int, c Criticality, why Reason, wait time.Duration) {
	secs := RetryAfterSeconds(wait)
	h := w.Header()
	h["Retry-After"] = []string{strconv.FormatInt(secs, 10)}
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	w.WriteHeader(status)
	_, _ = w.Write([]byte("shed: " + why.String() + "\n"))
	if s.cfg.OnShed != nil {
		s.cfg.OnShed(c, why)
	}
}
