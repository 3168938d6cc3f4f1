package storm_test

import (
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
)

// A hundred clients fail at once and retry on 1 s, ×2, four retries: without
// jitter they come back in waves of 100 at 1, 3, 7 and 15 s; full jitter
// spreads the same 400 retries (the first attempts are all at 0).
func ExampleTable() {
	rows, err := storm.Table(storm.Config{
		Policy:  backoff.Policy{Initial: time.Second, Multiplier: 2, Max: time.Minute, Retries: 4, Jitter: backoff.FullJitter},
		Clients: 100,
		Bucket:  time.Second,
		Seed:    1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("second  full  none")
	for _, r := range rows {
		fmt.Printf("%6.0f  %4d  %4d\n", r.StartMS/1000, r.Attempts, r.NoJitter)
	}
	// Output:
	// second  full  none
	//      0   231   100
	//      1    59   100
	//      2    58     0
	//      3    28   100
	//      4    29     0
	//      5    22     0
	//      6    14     0
	//      7    10   100
	//      8    10     0
	//      9    18     0
	//     10     9     0
	//     11     5     0
	//     12     6     0
	//     13     1     0
	//     14     0     0
	//     15     0   100
}

// The busiest moment of the same storm's retries: without jitter each
// wave is 100 retries at one instant; full jitter spreads them so that no
// 100 ms (a tenth of the first delay) holds more than a fraction of that.
func ExamplePeaks() {
	pk, err := storm.Peaks(storm.Config{
		Policy:  backoff.Policy{Initial: time.Second, Multiplier: 2, Max: time.Minute, Retries: 4, Jitter: backoff.FullJitter},
		Clients: 100,
		Seed:    1,
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("within %v: %d retries without jitter, %d with full jitter\n", pk.Window, pk.NoJitter, pk.Retries)
	// Output:
	// within 100ms: 100 retries without jitter, 20 with full jitter
}
