package limit

import (
	"reflect"
	"strings"
	"testing"
)

const csvHeader = "limiter,time_s,offered_ratio,limit,goodput_ratio,success_p50_ms,success_p99_ms,refused,timed_out\n"

// The bench writes this header by hand (bench/limit_test.go cannot import
// this package): it must stay Row's JSON names.
func TestCSVColumnsAreTheBenchsHeader(t *testing.T) {
	if got := strings.Join(csvColumns(), ",") + "\n"; got != csvHeader {
		t.Errorf("csvColumns() = %q, want the bench's header %q", got, csvHeader)
	}
}

func TestReadCSV(t *testing.T) {
	rows, err := ReadCSV(strings.NewReader(csvHeader +
		"\"again, fixed 8\",2.000,1.5000,8.00,0.8800,13.7,166.0,11,0\n" +
		"none,4,0.5,0,0,0,0,0,3398\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Limiter: "again, fixed 8", TimeS: 2, OfferedRatio: 1.5, Limit: 8, GoodputRatio: 0.88, SuccessP50MS: 13.7, SuccessP99MS: 166, Refused: 11},
		{Limiter: "none", TimeS: 4, OfferedRatio: 0.5, TimedOut: 3398},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("ReadCSV = %+v, want %+v", rows, want)
	}
}

func TestReadCSVRefuses(t *testing.T) {
	for _, tt := range []struct{ in, say string }{
		{"", "want a header of limiter,time_s,"},
		{"a,b\n1,2\n", "want a header"},
		{csvHeader, "at least one row"},
		{csvHeader + "none,1,x,0,0,0,0,0,0\n", `line 2: offered_ratio "x" is not a number of 0 or more`},
		{csvHeader + "none,1,-1,0,0,0,0,0,0\n", `offered_ratio "-1" is not a number of 0 or more`},
		{csvHeader + "none,1,NaN,0,0,0,0,0,0\n", `offered_ratio "NaN"`},
		{csvHeader + "none,1,+Inf,0,0,0,0,0,0\n", `offered_ratio "+Inf"`},
		{csvHeader + "none,1,0.5,0,0,0,0,1.5,0\n", `refused "1.5" is not a whole number of 0 or more`},
		{csvHeader + "none,1,0.5,0,0,0,0,0,1e300\n", `timed_out "1e300" is not a whole number`},
		{csvHeader + "none,1,0.5,0,0\n", "wrong number of fields"},
	} {
		if _, err := ReadCSV(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("ReadCSV(%q) = %v, want an error saying %q", tt.in, err, tt.say)
		}
	}
}

func TestChart(t *testing.T) {
	f := Chart([]Row{
		{Limiter: "none", TimeS: 1, OfferedRatio: 0.5, GoodputRatio: 0.5, SuccessP50MS: 20, SuccessP99MS: 100},
		{Limiter: "none", TimeS: 2, OfferedRatio: 1.5, TimedOut: 90},
		{Limiter: "fixed", TimeS: 1, OfferedRatio: 0.7, Limit: 8, GoodputRatio: 0.5, SuccessP50MS: 20, SuccessP99MS: 100},
		{Limiter: "fixed", TimeS: 2, OfferedRatio: 2.5, Limit: 8, GoodputRatio: 1, SuccessP50MS: 30, SuccessP99MS: 200, Refused: 50},
	}, "the title", "the note")
	if f.Title != "the title" || f.Note != "the note" || len(f.Panels) != 3 {
		t.Fatalf("Chart: title %q, note %q, %d panels; want the caller's title and note, 3 panels", f.Title, f.Note, len(f.Panels))
	}
	lim, good, p99 := f.Panels[0], f.Panels[1], f.Panels[2]
	if n := len(lim.Series[0].X); n != 0 {
		t.Errorf("limit of none has %d points, want 0: it has no limit", n)
	}
	if got := lim.Series[1].Y; len(got) != 2 || got[1] != 8 {
		t.Errorf("limit of fixed = %v, want [8 8]", got)
	}
	if n := len(p99.Series[0].X); n != 1 {
		t.Errorf("p99 of none has %d points, want 1: a window without a success has none", n)
	}
	off := good.Series[len(good.Series)-1]
	if off.Name != "load offered (mean)" || len(off.Y) != 2 || off.Y[0] != 0.6 || off.Y[1] != 2 {
		t.Errorf("offered %q = %v, want load offered (mean) = [0.6 2]", off.Name, off.Y)
	}
}
