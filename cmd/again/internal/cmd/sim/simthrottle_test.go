package sim

import (
	"math"
	"testing"
)

// TestSimThrottleSRE: the command's own rows show the SRE counting holding
// the backend at 2 × its capacity at 10 × the demand, where failsafe-go's
// counting lets more through.
func TestSimThrottleSRE(t *testing.T) {
	rows := simJSON(t, "sim", "throttle", "--demand", "10", "--capacity", "20/s", "--strategy", "sre-k2,sent-only", "--seed", "1")
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	sre, sentOnly := rows[0], rows[1]
	if sre["throttler"] != "sre-k2" || sentOnly["throttler"] != "sent-only" || sre["demand_ratio"] != 10.0 {
		t.Fatalf("rows %v, want sre-k2 then sent-only at demand 10", rows)
	}
	if load := sre["backend_load_ratio"].(float64); math.Abs(load-2) > 0.2 {
		t.Errorf("sre-k2: backend_load_ratio %v, want 2 ± 10 %%", load)
	}
	if load := sentOnly["backend_load_ratio"].(float64); load < 3 {
		t.Errorf("sent-only: backend_load_ratio %v, want well above the SRE counting's 2", load)
	}
	if p := sre["p_reject"].(float64); p < 0.8 || p > 1 {
		t.Errorf("sre-k2: p_reject %v, want most attempts rejected locally at 10 × capacity", p)
	}
}
