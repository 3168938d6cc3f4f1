package storm

import (
	"slices"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

func TestSimStorm(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Multiplier: 2, Max: 30 * time.Second, Retries: 4, Jitter: backoff.NoJitter}
	got, err := Run(Config{Policy: p, Clients: 100, Bucket: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Without jitter every client attempts at 0, 1, 3, 7 and 15 s.
	want := make([]int, 16)
	for _, s := range []int{0, 1, 3, 7, 15} {
		want[s] = 100
	}
	if len(got) != len(want) {
		t.Fatalf("Run without jitter = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Run without jitter = %v, want %v", got, want)
		}
	}
	// Full jitter spreads the same 500 attempts: no later second sees
	// anything like the waves of 100.
	p.Jitter = backoff.FullJitter
	got, err = Run(Config{Policy: p, Clients: 100, Bucket: time.Second, Seed: 1})
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
		t.Errorf("Run with full jitter = %v: %d attempts, %d at 0, peak %d after; want 500, >= 100, < 80", got, total, got[0], peak)
	}
	again, _ := Run(Config{Policy: p, Clients: 100, Bucket: time.Second, Seed: 1})
	for i := range got {
		if again[i] != got[i] {
			t.Fatalf("Run is not deterministic: %v, then %v", got, again)
		}
	}
}

func TestSimStormRejects(t *testing.T) {
	uncapped := backoff.Policy{Initial: time.Second, Multiplier: 10, Max: backoff.NoCap, Retries: 30}
	for _, c := range []Config{
		{Policy: backoff.Policy{Multiplier: 0.5}},
		{Clients: -1},
		{Bucket: -time.Second},
		{Policy: uncapped}, // too many buckets
		{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 100_000}, Clients: 1000}, // too many attempts
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("Run(%+v) returned no error", c)
		}
	}
}

func TestSimStormTable(t *testing.T) {
	p := backoff.Default() // 500 ms, ×2, cap 10 s, 3 retries, full jitter
	c := Config{Policy: p, Clients: 50, Bucket: 500 * time.Millisecond, Seed: 2}
	rows, err := Table(c)
	if err != nil {
		t.Fatal(err)
	}
	jittered, _ := Run(c)
	c.Policy.Jitter = backoff.NoJitter
	flat, _ := Run(c)
	// Without jitter: attempts at 0, 0.5, 1.5 and 3.5 s, all 50 clients.
	if len(flat) != 8 || flat[0] != 50 || flat[1] != 50 || flat[3] != 50 || flat[7] != 50 {
		t.Fatalf("Run without jitter = %v, want 50 at buckets 0, 1, 3 and 7", flat)
	}
	if len(rows) != max(len(jittered), len(flat)) {
		t.Fatalf("Table has %d rows, want %d", len(rows), max(len(jittered), len(flat)))
	}
	sumA, sumN := 0, 0
	for i, r := range rows {
		if r.StartMS != float64(500*i) {
			t.Errorf("row %d starts at %v ms, want %d", i, r.StartMS, 500*i)
		}
		if i < len(jittered) && r.Attempts != jittered[i] || i < len(flat) && r.NoJitter != flat[i] {
			t.Errorf("row %d = %+v; Run gives %v and %v", i, r, jittered, flat)
		}
		sumA += r.Attempts
		sumN += r.NoJitter
	}
	if sumA != 200 || sumN != 200 {
		t.Errorf("Table counts %d and %d attempts, want 200 each (50 clients × 4)", sumA, sumN)
	}
}

// FuzzSimStorm checks Run's invariants for any policy: no panic; every
// client's attempts are counted once, all of them at t = 0 first.
func FuzzSimStorm(f *testing.F) {
	f.Add(int64(time.Second), 2.0, int64(30*time.Second), 3, 0, 0.0, 10, int64(time.Second), uint64(1))
	f.Add(int64(-1), 3.0, int64(-1), 50, 4, 0.0, 7, int64(time.Millisecond), uint64(2))
	f.Add(int64(0), 0.0, int64(0), 0, 3, 0.5, 1, int64(0), uint64(3))
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries, jitter int, factor float64, clients int, bucket int64, seed uint64) {
		p := backoff.Policy{Initial: time.Duration(initial), Multiplier: mult, Max: time.Duration(maxd), Retries: retries % 1000, Jitter: backoff.Jitter(jitter), JitterFactor: factor}
		c := Config{Policy: p, Clients: clients % 200, Bucket: time.Duration(bucket), Seed: seed}
		got, err := Run(c)
		if err != nil {
			return
		}
		if c.Clients == 0 {
			c.Clients = 100
		}
		total := 0
		for _, n := range got {
			total += n
		}
		if want := c.Clients * p.MaxAttempts(); total != want || got[0] < c.Clients {
			t.Fatalf("Run(%+v): %d attempts, %d in the first bucket; want %d, >= %d", c, total, got[0], want, c.Clients)
		}
		// The peaks count retries only, and without jitter a whole wave
		// starts at one instant.
		pk, perr := Peaks(c, 0)
		all := c.Clients * (p.MaxAttempts() - 1)
		if perr != nil || pk.Window <= 0 || pk.Retries > all || pk.NoJitter > all || all > 0 && (pk.Retries < 1 || pk.NoJitter < c.Clients) {
			t.Fatalf("Peaks(%+v) = %+v, %v; want positive peaks of at most %d retries, at least a wave without jitter", c, pk, perr, all)
		}
	})
}

func TestWindow(t *testing.T) {
	tests := []struct {
		initial time.Duration
		want    time.Duration
	}{
		{500 * time.Millisecond, 50 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{300 * time.Millisecond, 20 * time.Millisecond},
		{90 * time.Millisecond, 5 * time.Millisecond},
		{-1, time.Microsecond}, // no wait: every retry at t = 0
		{3 * time.Microsecond, time.Microsecond},
	}
	for _, tt := range tests {
		if got := Window(backoff.Policy{Initial: tt.initial, Multiplier: 2, Max: time.Hour}); got != tt.want {
			t.Errorf("Window(initial %v) = %v, want %v", tt.initial, got, tt.want)
		}
	}
}

// TestPeaks checks the comparison the page's storm view states: over
// a window narrow enough that a wave is one instant, the waves without
// jitter hold every client, and jitter flattens them.
func TestPeaks(t *testing.T) {
	p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 10 * time.Second, Retries: 3, Jitter: backoff.FullJitter}
	got, err := Peaks(Config{Policy: p, Clients: 100, Seed: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Window != 50*time.Millisecond || got.NoJitter != 100 || got.Retries >= 50 || got.Retries < 10 {
		t.Errorf("Peaks(backoff.Default()) = %+v; want a 50ms window, waves of 100 without jitter and fewer than 50 with full jitter", got)
	}
	// Waves that meet within a window add up; no wait at all puts every
	// retry at t = 0, where jitter has nothing to spread.
	for _, tt := range []struct {
		p      backoff.Policy
		window time.Duration
		want   int
	}{
		{backoff.Policy{Initial: time.Millisecond, Multiplier: 1, Retries: 3, Jitter: backoff.NoJitter}, 10 * time.Millisecond, 300},
		{backoff.Policy{Initial: time.Millisecond, Multiplier: 1, Retries: 3, Jitter: backoff.NoJitter}, time.Millisecond, 100},
		{backoff.Policy{Initial: -1, Retries: 3, Jitter: backoff.FullJitter}, 0, 300},
	} {
		got, err := Peaks(Config{Policy: tt.p, Clients: 100}, tt.window)
		if err != nil || got.NoJitter != tt.want || got.Retries != tt.want {
			t.Errorf("Peaks(%+v, %v) = %+v, %v; want %d both", tt.p, tt.window, got, err, tt.want)
		}
	}
	if _, err := Peaks(Config{Policy: p}, -time.Second); err == nil {
		t.Error("Peaks with a negative window returned no error")
	}
	if _, err := Peaks(Config{Policy: p, Clients: -1}, 0); err == nil {
		t.Error("Peaks with -1 clients returned no error")
	}
}

// TestPeaksSameRun checks that Peaks counts Run's clients
// and draws: a bucket is one of the windows it slides over, so no bucket
// of Run holds more retries than its peak over windows that wide.
func TestPeaksSameRun(t *testing.T) {
	p := backoff.Policy{Initial: 200 * time.Millisecond, Multiplier: 3, Max: 5 * time.Second, Retries: 5, Jitter: backoff.EqualJitter}
	c := Config{Policy: p, Clients: 80, Bucket: 100 * time.Millisecond, Seed: 3}
	buckets, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	buckets[0] -= c.Clients // the first attempts, which Peaks leaves out
	got, err := Peaks(c, c.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	busiest := slices.Max(buckets)
	if got.Retries < busiest || got.Retries > 2*busiest {
		t.Errorf("Peaks over %v = %d retries; Run's busiest bucket has %d, want between that and twice that", c.Bucket, got.Retries, busiest)
	}
}
