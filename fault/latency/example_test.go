package latency_test

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/again-go/again/fault/latency"
)

func Example() {
	d, err := latency.Parse("pareto:5ms,2")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rand.New(rand.NewPCG(1, 2))
	fmt.Println(d, d.Quantile(0.75), d.Sample(r) >= d.Scale)
	_, err = latency.Parse("lognormal:5ms,9")
	fmt.Println(err, errors.Is(err, latency.ErrInvalid))
	// Output:
	// pareto:5ms,2 10ms true
	// latency: Sigma must be a number above 0 and up to 5, got 9 true
}
