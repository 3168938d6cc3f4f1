package calc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	calcmodel "github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// TestCalcRun runs calc's Options without cobra: the report in the format
// asked for, a format it does not know as a usage error, and a --solve
// without an answer as exit status 1.
func TestCalcRun(t *testing.T) {
	parse := func(t *testing.T, set map[string]string) calcmodel.Input {
		t.Helper()
		v := calcmodel.DefaultValues()
		for k, s := range set {
			v[k] = s
		}
		in, err := calcmodel.Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	tests := []struct {
		name     string
		set      map[string]string
		format   string
		wantCode int // 0: no error
	}{
		{"json", nil, "json", 0},
		{"unknown format", nil, "yaml", cmdutil.ExitUsage},
		{"no answer", map[string]string{calcmodel.FieldInitial: "10s", calcmodel.FieldMax: "0", calcmodel.FieldSolve: "multiplier", calcmodel.FieldDeadline: "1s"}, "text", cmdutil.ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := calcRun(&Options{Env: &cmdutil.Env{Stdout: &out}, Input: parse(t, tt.set), Format: tt.format})
			var ee *cmdutil.ExitError
			switch {
			case tt.wantCode == 0 && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.wantCode != 0 && (!errors.As(err, &ee) || ee.Code != tt.wantCode):
				t.Fatalf("error %v, want an exit status %d", err, tt.wantCode)
			case tt.wantCode != 0 && out.Len() != 0:
				t.Errorf("wrote %q on failure, want nothing", out.String())
			case tt.format == "json" && !json.Valid(out.Bytes()):
				t.Errorf("--format json wrote invalid JSON: %q", out.String())
			}
		})
	}
}
