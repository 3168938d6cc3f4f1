package admission

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg   Config
		field string // "" for valid
	}{
		{Config{}, ""},
		{Config{Limit: 8, MaxQueue: -1, Target: time.Millisecond, Interval: 50 * time.Millisecond, Default: Sheddable}, ""},
		{Config{Limit: -1}, "Config.Limit"},
		{Config{MaxWait: -time.Second}, "Config.MaxWait"},
		{Config{Target: -1}, "Config.Target"},
		{Config{Interval: -1}, "Config.Interval"},
		{Config{Target: 200 * time.Millisecond}, "Config.Target"},
		{Config{Target: time.Millisecond, Interval: time.Millisecond}, "Config.Target"},
		{Config{Default: Unknown}, "Config.Default"},
		{Config{Default: CriticalPlus + 1}, "Config.Default"},
		{Config{DropFraction: 1.5}, "Config.DropFraction"},
		{Config{DropFraction: math.NaN()}, "Config.DropFraction"},
		{Config{DropWindow: 5}, "Config.DropWindow"},
		{Config{RetryAfter: -time.Second}, "Config.RetryAfter"},
	} {
		err := tt.cfg.Validate()
		var fe *FieldError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("Validate(%+v) = %v, want nil", tt.cfg, err)
		case tt.field != "" && (!errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != tt.field):
			t.Errorf("Validate(%+v) = %v, want a *FieldError for %s matching ErrInvalid", tt.cfg, err, tt.field)
		}
		if _, nerr := NewCore(tt.cfg, time.Time{}, nil); (nerr == nil) != (err == nil) {
			t.Errorf("NewCore(%+v) = %v, Validate = %v: want the same verdict", tt.cfg, nerr, err)
		}
	}
	err := Config{Limit: -3}.Validate()
	if got, want := err.Error(), "shed: Config.Limit must be at least 0 (0 means 100), got -3"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCriticalityNames(t *testing.T) {
	for c := Sheddable; c <= CriticalPlus; c++ {
		if got := ParseCriticality(c.String()); got != c {
			t.Errorf("ParseCriticality(%q) = %v, want %v", c.String(), got, c)
		}
	}
	for _, tt := range []struct {
		in   string
		want Criticality
	}{{"", Unspecified}, {"critical_plus", CriticalPlus}, {"Sheddable", Sheddable}, {"CRITICAL ", Unknown}, {"UNKNOWN", Unknown}, {"UNSPECIFIED", Unknown}} {
		if got := ParseCriticality(tt.in); got != tt.want {
			t.Errorf("ParseCriticality(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
