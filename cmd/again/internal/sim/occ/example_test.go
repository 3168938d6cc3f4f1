package occ_test

import (
	"fmt"

	"github.com/again-go/again/cmd/again/internal/sim/occ"
)

// Ten clients contending for one row: without jitter they take several
// times longer to all write than with full jitter.
func ExampleRun() {
	rows, err := occ.Run(occ.Config{
		Clients:    []int{10},
		Algorithms: []occ.Algorithm{occ.Exponential, occ.FullJitter},
		Runs:       50,
		Seed:       1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%-11s %3.0f writes, all done after %4.0f ms\n", r.Algorithm, r.Calls, r.TimeMS)
	}
	// Output:
	// exponential  50 writes, all done after 3380 ms
	// full         39 writes, all done after  445 ms
}
