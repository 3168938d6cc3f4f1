package breaker

import (
	"context"
	"testing"
)

// The closed state's success path: no clock, no lock, no allocation.
func BenchmarkClosedSuccess(b *testing.B) {
	ctx := context.Background()
	var br Breaker
	op := func(context.Context) error { return nil }
	b.Run("Do", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = br.Do(ctx, op)
		}
	})
	b.Run("Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Call(ctx, &br, func(context.Context) (int, error) { return 1, nil })
		}
	})
	b.Run("Allow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t, _ := br.Allow(ctx)
			t.Done(nil)
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = br.Do(ctx, op)
			}
		})
	})
}

// Rejections while open: the path a retry storm would hit.
func BenchmarkOpenRejection(b *testing.B) {
	ctx := context.Background()
	var br Breaker
	br.Isolate()
	op := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		_ = br.Do(ctx, op)
	}
}
