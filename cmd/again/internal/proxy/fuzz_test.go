package proxy

import (
	"errors"
	"testing"

	"github.com/again-go/again/fault"
)

// Whatever the flags say, Faults returns valid faults or an ErrSpec.
func FuzzFlags(f *testing.F) {
	for _, s := range [][2]string{{"0.2:503", "lognormal:5ms,1.2"}, {"1", "50ms"}, {"x", "pareto"}, {"0.5:42", "-1s"}, {"0.2:101", "1h"}, {"0.2:600", "1ms"}, {"1:599", "2s"}} {
		f.Add(s[0], s[1], "mid-body:0.05", "20s@10s", "100/s", "path=/api/", "2s")
	}
	f.Fuzz(func(t *testing.T, fail, latency, reset, outage, rate, match, retryAfter string) {
		fl := Flags{Fail: []string{fail}, Latency: []string{latency}, Reset: []string{reset}, Outage: []string{outage}, Rate: []string{rate}, Match: []string{match}, RetryAfter: retryAfter}
		faults, err := fl.Faults()
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("Faults() error %v does not match ErrSpec", err)
			}
			return
		}
		if err := (&fault.Injector{Faults: faults}).Validate(); err != nil {
			t.Fatalf("Faults() = %+v, which Validate rejects: %v", faults, err)
		}
	})
}

// Whatever the file holds, ParseScenario returns valid faults or an
// ErrSpec.
func FuzzScenario(f *testing.F) {
	f.Add([]byte(`{"seed": 1, "faults": [{"kind": "status", "rate": 0.2, "retry_after": "2s"}, {"kind": "outage", "duration": "1s"}]}`))
	f.Add([]byte(`{"faults": [{"kind": "latency", "dist": "pareto:1ms,2", "match": {"header": "x-a"}}]}`))
	f.Add([]byte(`{"faults": [{"kind": "status", "status": 101}, {"kind": "rate-limit", "status": 600}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, faults, err := ParseScenario(data)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("ParseScenario error %v does not match ErrSpec", err)
			}
			return
		}
		if err := (&fault.Injector{Faults: faults}).Validate(); err != nil {
			t.Fatalf("ParseScenario = %+v, which Validate rejects: %v", faults, err)
		}
	})
}
