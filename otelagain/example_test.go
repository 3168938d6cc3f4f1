package otelagain_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/otelagain"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The one line of an instrumented HTTP client. Without WithMeterProvider,
// New uses the global providers that the program's OpenTelemetry setup
// installs.
func ExampleTelemetry_Transport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	reader := sdkmetric.NewManualReader()
	tel := otelagain.New(otelagain.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))

	client := &http.Client{Transport: tel.Transport("api", &retryhttp.Transport{Policy: backoff.Default()})}

	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "again.retry.calls" {
			p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			reason, _ := p.Attributes.Value(otelagain.RetryReasonKey)
			fmt.Printf("%s{%s} %d\n", m.Name, reason.AsString(), p.Value)
		}
	}
	// Output: again.retry.calls{success} 1
}

// Retry is the option that makes a retry.Do call report its metrics.
func ExampleTelemetry_Retry() {
	reader := sdkmetric.NewManualReader()
	tel := otelagain.New(otelagain.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	dbRetry := tel.Retry("db") // made once, used by every call

	failures := 2
	_, err := retry.Do(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) (int, error) {
		if failures > 0 {
			failures--
			return 0, errors.New("connection refused")
		}
		return 42, nil
	}, dbRetry)
	fmt.Println("error:", err)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "again.retry.attempts" {
			p := m.Data.(metricdata.Histogram[int64]).DataPoints[0]
			fmt.Printf("%s: %d call, %d attempts\n", m.Name, p.Count, p.Sum)
		}
	}
	// Output:
	// error: <nil>
	// again.retry.attempts: 1 call, 3 attempts
}
