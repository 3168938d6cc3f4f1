package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/redis/go-redis/v9"
)

// Every process that opens the same URL retries on one budget. The
// examples that connect need a Redis server, so they are compiled but not
// run; ParseURL's runs.
func ExampleOpenBudget() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	budget, err := fleet.OpenBudget("redis://localhost:6379/0?key=payments", logger)
	if err != nil {
		logger.Error("budget", "error", err) // a malformed URL; an unreachable server is not an error
		return
	}
	defer budget.Close()

	err = retry.Run(context.Background(), backoff.Default(), func(ctx context.Context) error {
		return errors.New("connection refused")
	}, retry.WithBudget(budget))
	logger.Info("done", "error", err)
}

// The same budget throttles an HTTP client's retries.
func ExampleOpenBudget_http() {
	budget, err := fleet.OpenBudget("redis://localhost:6379/0?key=search-api&timeout=20ms", nil)
	if err != nil {
		return
	}
	defer budget.Close()
	client := &http.Client{Transport: &retryhttp.Transport{Budget: budget}}
	_ = client
}

// With a client of your own: it must have ContextTimeoutEnabled, so that
// Timeout bounds every round trip.
func ExampleNewBudget() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	budget, err := fleet.NewBudget(fleet.BudgetConfig{Client: client, Key: "payments", MaxTokens: 20})
	if err != nil {
		return
	}
	defer budget.Close()
	_ = retry.WithBudget(budget)
}

// One breaker state for the fleet: when one process trips it, the others
// reject calls too until the same moment, and one probe runs for all.
func ExampleNewBreakerStore() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	store, err := fleet.NewBreakerStore(fleet.BreakerStoreConfig{Client: client, Key: "payments"})
	if err != nil {
		return
	}
	b, err := breaker.New(breaker.Config{Shared: store})
	if err != nil {
		return
	}
	err = b.Do(context.Background(), func(ctx context.Context) error {
		return nil // the call to the dependency
	})
	_ = err
}

// A breaker per host, each shared by the fleet through one Redis client:
// what again fetch --breaker-store does.
func ExampleOpenBreakerStore() {
	store, err := fleet.OpenBreakerStore("redis://localhost:6379/0?key=api&timeout=20ms", nil)
	if err != nil {
		return // a malformed URL; an unreachable server is not an error
	}
	defer store.Close()
	client := &http.Client{Transport: &retryhttp.Transport{
		Breakers: &breaker.Group{
			Config: breaker.Config{ConsecutiveFailures: 3},
			Shared: func(host string) breaker.Shared { return store.Named(host) },
		},
	}}
	_ = client
}

// ParseURL reads a budget's URL without connecting, as OpenBudget does
// before it connects; errors name the part at fault, never the password.
func ExampleParseURL() {
	cfg, opts, err := fleet.ParseURL("redis://app:s3cret@localhost:6379/2?key=payments&timeout=20ms")
	fmt.Println(cfg.Key, opts.Addr, opts.DB, opts.Username, err)
	_, _, err = fleet.ParseURL("redis://app:s3cret@localhost:6379/2?timeout=20ms")
	fmt.Println(errors.Is(err, fleet.ErrInvalid), strings.Contains(err.Error(), "s3cret"))
	// Output:
	// payments localhost:6379 2 app <nil>
	// true false
}
