package otelagain_test

import (
	"context"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
)

func succeed(context.Context) (int, error) { return 1, nil }

func nothing(context.Context) error { return nil }

// TestAllocs checks that the instrumented success paths allocate nothing,
// with the real SDK recording: a first-try success of retry.Do (with a
// budget), and a closed breaker's call.
func TestAllocs(t *testing.T) {
	s := newSDK(t)
	ctx := context.Background()
	opt := s.tel.Retry("db")
	budget := retry.WithBudget(s.tel.Budget("db", &retry.TokenBucket{}))
	b, err := s.tel.Breaker("db", breaker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		run  func() error
	}{
		{"retry.Do first try", func() error { _, err := retry.Do(ctx, backoff.Default(), succeed, opt, budget); return err }},
		{"closed breaker", func() error { return b.Do(ctx, nothing) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var failed error
			got := testing.AllocsPerRun(200, func() {
				if err := tt.run(); err != nil {
					failed = err
				}
			})
			if failed != nil {
				t.Fatal(failed)
			}
			if got != 0 {
				t.Errorf("allocations = %v, want 0", got)
			}
		})
	}
	if got := show(s.points(t, "again.retry.calls")); got != "{again.retry.name=db,again.retry.reason=success}=201" {
		t.Errorf("again.retry.calls = %s: the runs measured were not all recorded", got)
	}
	if got := show(s.points(t, "again.retry.attempts")); got != "{again.retry.name=db,again.retry.reason=success}=201/201" {
		t.Errorf("again.retry.attempts = %s, want the 201 calls of one attempt recorded", got)
	}
}

// BenchmarkDo compares retry.Do's first-try success without and with
// metrics recorded by the SDK.
func BenchmarkDo(b *testing.B) {
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = retry.Do(ctx, backoff.Default(), succeed)
		}
	})
	b.Run("metrics", func(b *testing.B) {
		s := newSDK(b)
		opt := s.tel.Retry("db")
		b.ReportAllocs()
		for b.Loop() {
			_, _ = retry.Do(ctx, backoff.Default(), succeed, opt)
		}
	})
}

// BenchmarkRetryOnce compares a call that fails once, then succeeds at
// once (no wait), without and with metrics: the path that records in the
// SDK's histograms.
func BenchmarkRetryOnce(b *testing.B) {
	ctx := context.Background()
	p := backoff.Policy{Initial: -1, Retries: 1}
	run := func(b *testing.B, opts ...retry.Option) {
		n := 0
		op := func(context.Context) (int, error) {
			if n++; n%2 == 1 {
				return 0, errFlaky
			}
			return n, nil
		}
		b.ReportAllocs()
		for b.Loop() {
			_, _ = retry.Do(ctx, p, op, opts...)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b) })
	b.Run("metrics", func(b *testing.B) { run(b, newSDK(b).tel.Retry("db")) })
}

// BenchmarkBreaker compares a closed breaker's call without and with
// metrics.
func BenchmarkBreaker(b *testing.B) {
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		br, _ := breaker.New(breaker.Config{})
		b.ReportAllocs()
		for b.Loop() {
			_ = br.Do(ctx, nothing)
		}
	})
	b.Run("metrics", func(b *testing.B) {
		s := newSDK(b)
		br, _ := s.tel.Breaker("db", breaker.Config{})
		b.ReportAllocs()
		for b.Loop() {
			_ = br.Do(ctx, nothing)
		}
	})
}
