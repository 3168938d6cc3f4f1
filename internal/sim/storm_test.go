package sim

import (
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

func TestStorm(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Multiplier: 2, Max: 30 * time.Second, Retries: 4, Jitter: backoff.NoJitter}
	got, err := Storm(StormConfig{Policy: p, Clients: 100, Bucket: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Without jitter every client attempts at 0, 1, 3, 7 and 15 s.
	want := make([]int, 16)
	for _, s := range []int{0, 1, 3, 7, 15} {
		want[s] = 100
	}
	if len(got) != len(want) {
		t.Fatalf("Storm without jitter = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Storm without jitter = %v, want %v", got, want)
		}
	}
	// Full jitter spreads the same 500 attempts: no later second sees
	// anything like the waves of 100.
	p.Jitter = backoff.FullJitter
	got, err = Storm(StormConfig{Policy: p, Clients: 100, Bucket: time.Second, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	total, peak := 0, 0
	for i, n := range got {
		total += n
		if i > 0 {
			peak = max(peak, n)
		}
	}
	if total != 500 || got[0] < 100 || peak >= 80 {
		t.Errorf("Storm with full jitter = %v: %d attempts, %d at 0, peak %d after; want 500, >= 100, < 80", got, total, got[0], peak)
	}
	again, _ := Storm(StormConfig{Policy: p, Clients: 100, Bucket: time.Second, Seed: 1})
	for i := range got {
		if again[i] != got[i] {
			t.Fatalf("Storm is not deterministic: %v, then %v", got, again)
		}
	}
}

func TestStormRejects(t *testing.T) {
	uncapped := backoff.Policy{Initial: time.Second, Multiplier: 10, Max: backoff.NoCap, Retries: 30}
	for _, c := range []StormConfig{
		{Policy: backoff.Policy{Multiplier: 0.5}},
		{Clients: -1},
		{Bucket: -time.Second},
		{Policy: uncapped}, // too many buckets
		{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 100_000}, Clients: 1000}, // too many attempts
	} {
		if _, err := Storm(c); err == nil {
			t.Errorf("Storm(%+v) returned no error", c)
		}
	}
}

func TestStormTable(t *testing.T) {
	p := backoff.Default() // 500 ms, ×2, cap 10 s, 3 retries, full jitter
	c := StormConfig{Policy: p, Clients: 50, Bucket: 500 * time.Millisecond, Seed: 2}
	rows, err := StormTable(c)
	if err != nil {
		t.Fatal(err)
	}
	jittered, _ := Storm(c)
	c.Policy.Jitter = backoff.NoJitter
	flat, _ := Storm(c)
	// Without jitter: attempts at 0, 0.5, 1.5 and 3.5 s, all 50 clients.
	if len(flat) != 8 || flat[0] != 50 || flat[1] != 50 || flat[3] != 50 || flat[7] != 50 {
		t.Fatalf("Storm without jitter = %v, want 50 at buckets 0, 1, 3 and 7", flat)
	}
	if len(rows) != max(len(jittered), len(flat)) {
		t.Fatalf("StormTable has %d rows, want %d", len(rows), max(len(jittered), len(flat)))
	}
	sumA, sumN := 0, 0
	for i, r := range rows {
		if r.StartMS != float64(500*i) {
			t.Errorf("row %d starts at %v ms, want %d", i, r.StartMS, 500*i)
		}
		if i < len(jittered) && r.Attempts != jittered[i] || i < len(flat) && r.NoJitter != flat[i] {
			t.Errorf("row %d = %+v; Storm gives %v and %v", i, r, jittered, flat)
		}
		sumA += r.Attempts
		sumN += r.NoJitter
	}
	if sumA != 200 || sumN != 200 {
		t.Errorf("StormTable counts %d and %d attempts, want 200 each (50 clients × 4)", sumA, sumN)
	}
}
