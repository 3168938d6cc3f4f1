package fetch

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// jsonSummary is what a script reads of --repeat --format json.
type jsonSummary struct {
	Requests       int            `json:"requests"`
	Failed         int            `json:"failed"`
	Errors         int            `json:"errors"`
	Statuses       map[string]int `json:"statuses"`
	P50MS          *float64       `json:"latency_p50_ms"`
	P90MS          *float64       `json:"latency_p90_ms"`
	P99MS          *float64       `json:"latency_p99_ms"`
	MaxMS          *float64       `json:"latency_max_ms"`
	HedgesLaunched int            `json:"hedges_launched"`
	HedgesWon      int            `json:"hedges_won"`
	HedgesDenied   *int64         `json:"hedges_denied"`
	Throttle       []struct {
		Host     string  `json:"host"`
		Rejected int64   `json:"rejected"`
		Attempts int64   `json:"attempts"`
		P        float64 `json:"p"`
	} `json:"throttle"`
	Limit []struct {
		Host    string `json:"host"`
		Refused int64  `json:"refused"`
		Queued  int64  `json:"queued"`
		Limit   int    `json:"limit"`
	} `json:"limit"`
}

// decodeSummary parses stdout as exactly one JSON object with the
// documented fields, no more and no fewer.
func decodeSummary(t *testing.T, stdout string) jsonSummary {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "}\n") {
		t.Fatalf("stdout %q, want one JSON object on one line", stdout)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(stdout), &fields); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	want := []string{"errors", "failed", "hedges_denied", "hedges_launched", "hedges_won", "latency_max_ms", "latency_p50_ms",
		"latency_p90_ms", "latency_p99_ms", "limit", "requests", "statuses", "throttle"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Errorf("JSON fields %q, want %q", got, want)
	}
	var s jsonSummary
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return s
}

// --repeat --format json counts every request by its final status, and
// its latencies are those of the successful ones, in order.
func TestFetchRepeatJSON(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusNotFound)
		case 2:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	r := run(t, "fetch", "--repeat", "8", "--format", "json", srv.URL)
	if r.Code != 1 || !strings.Contains(r.Stderr, "2 of 8 requests failed (the last: server answered 404 Not Found)") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the failures on stderr", r.Code, r.Stderr)
	}
	s := decodeSummary(t, r.Stdout)
	if s.Requests != 8 || s.Failed != 2 || s.Errors != 0 {
		t.Errorf("requests %d, failed %d, errors %d; want 8, 2, 0", s.Requests, s.Failed, s.Errors)
	}
	if want := map[string]int{"200": 4, "202": 2, "404": 2}; !maps.Equal(s.Statuses, want) {
		t.Errorf("statuses %v, want %v", s.Statuses, want)
	}
	if s.P50MS == nil || s.P90MS == nil || s.P99MS == nil || s.MaxMS == nil {
		t.Fatalf("latencies %v %v %v %v, want four numbers", s.P50MS, s.P90MS, s.P99MS, s.MaxMS)
	}
	if !(*s.P50MS > 0 && *s.P50MS <= *s.P90MS && *s.P90MS <= *s.P99MS && *s.P99MS <= *s.MaxMS) {
		t.Errorf("latencies p50 %v, p90 %v, p99 %v, max %v ms; want 0 < p50 <= p90 <= p99 <= max", *s.P50MS, *s.P90MS, *s.P99MS, *s.MaxMS)
	}
	if s.HedgesLaunched != 0 || s.HedgesWon != 0 || s.HedgesDenied != nil || s.Throttle == nil || len(s.Throttle) != 0 || s.Limit == nil || len(s.Limit) != 0 {
		t.Errorf("hedges %d launched, %d won, denied %v, throttle %v, limit %v; want 0, 0, null, [] and [] without those flags",
			s.HedgesLaunched, s.HedgesWon, s.HedgesDenied, s.Throttle, s.Limit)
	}
}

// A request with no response counts as an error; with no success, the
// latencies are null rather than 0.
func TestFetchRepeatJSONNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := run(t, "fetch", "--repeat", "3", "--retries", "0", "--format", "json", url)
	if r.Code != 1 {
		t.Errorf("exit %d, stderr %q; want 1", r.Code, r.Stderr)
	}
	s := decodeSummary(t, r.Stdout)
	if s.Requests != 3 || s.Failed != 3 || s.Errors != 3 || len(s.Statuses) != 0 {
		t.Errorf("requests %d, failed %d, errors %d, statuses %v; want 3, 3, 3, none", s.Requests, s.Failed, s.Errors, s.Statuses)
	}
	if s.P50MS != nil || s.P90MS != nil || s.P99MS != nil || s.MaxMS != nil {
		t.Errorf("latencies %v %v %v %v, want null with no success", s.P50MS, s.P90MS, s.P99MS, s.MaxMS)
	}
}

// The throttle's, the limit's and the hedge budget's figures are in the
// JSON per host, as in the text summary.
func TestFetchRepeatJSONPerHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	r := run(t, "fetch", "--repeat", "4", "--limit", "3", "--throttle", "--hedge-after", "10s", "--format", "json", srv.URL)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q; want 0", r.Code, r.Stderr)
	}
	s := decodeSummary(t, r.Stdout)
	if s.Requests != 4 || s.Failed != 0 || s.Statuses["200"] != 4 {
		t.Errorf("requests %d, failed %d, statuses %v; want 4, 0, 200: 4", s.Requests, s.Failed, s.Statuses)
	}
	if len(s.Limit) != 1 || s.Limit[0].Host != host || s.Limit[0].Limit != 3 || s.Limit[0].Refused != 0 || s.Limit[0].Queued != 0 {
		t.Errorf("limit %+v, want one host %s, limit 3, none refused or queued", s.Limit, host)
	}
	if len(s.Throttle) != 1 || s.Throttle[0].Host != host || s.Throttle[0].Rejected != 0 || s.Throttle[0].Attempts != 4 {
		t.Errorf("throttle %+v, want one host %s, 4 attempts, none rejected", s.Throttle, host)
	}
	if s.HedgesDenied == nil || *s.HedgesDenied != 0 {
		t.Errorf("hedges_denied %v, want 0 with the default --hedge-budget", s.HedgesDenied)
	}
}

func TestFetchFormatUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--format", "json"}, `again fetch: --format needs --repeat: it is the summary's format, and a single fetch writes the response body as it came`},
		{[]string{"--format", "text"}, `again fetch: --format needs --repeat: it is the summary's format, and a single fetch writes the response body as it came`},
		{[]string{"--repeat", "2", "--format", "csv"}, `again fetch: --format "csv": want one of text or json`},
		{[]string{"--repeat", "2", "--format", "svg"}, `again fetch: --format "svg": want one of text or json`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, append(append([]string{"fetch"}, tt.args...), "http://a/")...), tt.want)
		})
	}
}
