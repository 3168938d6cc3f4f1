package sim

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim/limit"
)

// TestSimLimit: the command's own rows show, at the end of the ramp, the
// unlimited client collapsed and Gradient2 settled near the 8 workers.
func TestSimLimit(t *testing.T) {
	rows := simJSON(t, "sim", "limit", "--strategy", "none,gradient2", "--seed", "1")
	if len(rows) != 32 {
		t.Fatalf("%d rows, want 16 windows × 2 limiters", len(rows))
	}
	none, g2 := rows[15], rows[31]
	if none["limiter"] != "none" || g2["limiter"] != "gradient2" || g2["time_s"] != 160.0 {
		t.Fatalf("rows %v and %v, want none then gradient2, each ending at 160 s", none, g2)
	}
	if good := none["goodput_ratio"].(float64); good > 0.1 {
		t.Errorf("none at 3 × capacity: goodput_ratio %v, want a collapse", good)
	}
	if l := g2["limit"].(float64); l < 6 || l > 10 {
		t.Errorf("gradient2 at 3 × capacity: limit %v, want within 25 %% of 8", l)
	}
}

func TestSimLimitUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, `again sim limit: --workers "0": want a whole number from 1 to 1000`},
		{[]string{"--to", "200"}, `again sim limit: --to "200": want a ratio above 0 and up to 100`},
		{[]string{"--strategy", "x"}, ""},
		{[]string{"--attempt-timeout", "1"}, ""},
		{[]string{"--timeout", "1"}, ""}, // the old spelling, warned of
	} {
		r := run(t, append([]string{"sim", "limit"}, tt.args...)...)
		if r.Code != 2 || (tt.want != "" && r.Stderr != tt.want+"\n") {
			t.Errorf("sim limit %v: exit %d, stderr %q; want 2 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
	}
}

// chart/svg -limit reads the command's CSV back with limit.ReadCSV: what the
// command writes, the reader takes, to the same rows.
func TestSimLimitCSVReadsBack(t *testing.T) {
	rows := []limit.Row{
		{Limiter: limit.None, TimeS: 10, OfferedRatio: 0.5839, GoodputRatio: 0.583, SuccessP50MS: 13.7, SuccessP99MS: 150.52},
		{Limiter: limit.Gradient2, TimeS: 160, OfferedRatio: 2.889, Limit: 8.0335, GoodputRatio: 0.939, SuccessP50MS: 13.3, SuccessP99MS: 149.8, Refused: 6923, TimedOut: 2},
	}
	var b bytes.Buffer
	if err := writeRows(&b, "csv", rows); err != nil {
		t.Fatal(err)
	}
	got, err := limit.ReadCSV(&b)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("limit.ReadCSV(the CSV of %+v) = %+v, %v; want the same rows", rows, got, err)
	}
}
