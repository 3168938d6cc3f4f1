package throttle

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// A server that sheds keeps serving its capacity at ten times it, its
// queue delay near CoDel's target; the load it receives is still what the
// clients' throttling lets through, and what it sheds is the rest of it.
func TestSimThrottleShed(t *testing.T) {
	c := Config{Demands: []float64{10}, Seed: 1, Capacity: 50, Duration: 200 * time.Second, Warmup: 100 * time.Second,
		Throttlings: []Throttling{None, Budget, SRE}, Shed: simshed.Config{Limit: 1}}
	rows, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		// The SRE throttle's local rejections leave the server idle now
		// and then: a little less goodput, for far less load.
		least := 0.95
		if r.Throttler == SRE {
			least = 0.85
		}
		if r.GoodputRatio < least || r.QueueDelayMS > 30 {
			t.Errorf("%s at 10x with --shed 1: goodput %.3f, queue delay %.1f ms; want at least %v, at most 30 ms", r.Throttler, r.GoodputRatio, r.QueueDelayMS, least)
		}
		// Every attempt received is served or shed: shed ≈ load − goodput.
		if d := r.BackendLoadRatio - r.GoodputRatio - r.ShedRatio; d > 0.05 || d < -0.05 {
			t.Errorf("%s: load %.3f, goodput %.3f, shed %.3f: load − goodput − shed = %.3f, want about 0", r.Throttler, r.BackendLoadRatio, r.GoodputRatio, r.ShedRatio, d)
		}
	}
	if sre, none := rows[2], rows[0]; sre.ShedRatio > none.ShedRatio/5 {
		t.Errorf("sre-k2 makes the server shed %.3f, none %.3f: want far less", sre.ShedRatio, none.ShedRatio)
	}
	if _, err := Run(Config{Shed: simshed.Config{Limit: simshed.MaxLimit + 1}}); err == nil || !strings.Contains(err.Error(), "Shed.Limit") {
		t.Errorf("Run with Shed.Limit %d = %v, want an error naming Shed.Limit", simshed.MaxLimit+1, err)
	}
}

func TestSimThrottleShedGolden(t *testing.T) {
	var b strings.Builder
	for _, sh := range []simshed.Config{{Limit: 2}, {Adaptive: cmdutil.ShedAdaptiveLimit()}} {
		c := Config{Demands: []float64{1, 10}, Seed: 1, Capacity: 50, Duration: 100 * time.Second, Warmup: 50 * time.Second, Shed: sh}
		serial, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		c.Runner = simtest.Parallel
		if par, _ := Run(c); !reflect.DeepEqual(par, serial) {
			t.Errorf("%+v: the parallel run differs from the serial one", sh)
		}
		name := "adaptive"
		if sh.Adaptive == nil {
			name = fmt.Sprint(sh.Limit)
		}
		for _, r := range serial {
			fmt.Fprintf(&b, "--shed %s demand=%g %s p_reject=%.4f load=%.4f goodput=%.4f p50=%.1f p99=%.1f shed=%.4f queue_delay_ms=%.3f\n",
				name, r.DemandRatio, r.Throttler, r.PReject, r.BackendLoadRatio, r.GoodputRatio, r.LatencyP50MS, r.LatencyP99MS, r.ShedRatio, r.QueueDelayMS)
		}
	}
	simtest.Golden(t, "throttle-shed-seed-1.txt", b.String())
}
