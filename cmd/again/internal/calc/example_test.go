package calc_test

import (
	"fmt"

	"github.com/again-go/again/cmd/again/internal/calc"
)

// A preset is a policy to start from: its Values are the calculator's
// fields, to change before parsing, as `again calc --preset aws --retries
// 4` does.
func ExamplePresetByName() {
	p, err := calc.PresetByName("aws")
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Values[calc.FieldRetries] = "4"
	in, err := calc.Parse(p.Values)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Command())
	fmt.Println(in.Policy.Initial, in.Policy.Retries)
	_, err = calc.PresetByName("azure")
	fmt.Println(err)
	// Output:
	// --initial 50ms --multiplier 2 --max 20s --retries 4 --jitter full
	// 50ms 4
	// calc: --preset "azure": want one of example, again, aws, aws-throttle, grpc-retry, grpc-conn, gcloud, polly, cenkalti, urllib3 or curl
}
