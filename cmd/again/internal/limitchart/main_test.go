package main

import (
	"strings"
	"testing"
)

const header = "limiter,time_s,offered_ratio,limit,goodput_ratio,success_p50_ms,success_p99_ms,refused,timed_out\n"

func TestDraw(t *testing.T) {
	in := header +
		"none,1,0.5,0,0.5,20,100,0,0\n" +
		"none,2,1.5,0,0,0,0,0,90\n" +
		"fixed,1,0.7,8,0.5,20,100,0,0\n" +
		"fixed,2,2.5,8,1,30,200,50,0\n"
	f, err := draw(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Title, "over 2 s") {
		t.Errorf("title %q, want the ramp's length, 2 s", f.Title)
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

func TestDrawRefuses(t *testing.T) {
	for _, in := range []string{
		"",
		"a,b\n1,2\n",
		header,
		header + "none,1,x,0,0,0,0,0,0\n",
		header + "none,1,-1,0,0,0,0,0,0\n",
		header + "none,1,0.5,0,0\n",
	} {
		if _, err := draw(strings.NewReader(in), ""); err == nil {
			t.Errorf("draw(%q) = nil error, want one", in)
		}
	}
}
