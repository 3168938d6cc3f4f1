package cmdutil

import (
	"strings"
	"testing"
)

func TestBadValue(t *testing.T) {
	tests := []struct {
		what, value, want string
		args              []any
		msg               string
	}{
		{"--retries", "1e9", "a whole number from %d to %d", []any{0, 100000}, `--retries "1e9": want a whole number from 0 to 100000`},
		{"--retries", "-1", "a whole number", nil, `--retries "-1": want a whole number`},
		{"--format", "", "one of text or json", nil, `--format "": want one of text or json`},
		{"URL", "a\tb", "an http or https URL", nil, `URL "a\tb": want an http or https URL`},
		// A want without args is not a format: a % in it stays.
		{"--hedge-budget", "2", "a ratio such as 10%", nil, `--hedge-budget "2": want a ratio such as 10%`},
		{"--x", strings.Repeat("9", 1000), "a number", nil, `--x "` + strings.Repeat("9", 184) + `"… (1000 bytes): want a number`},
	}
	for _, tt := range tests {
		err := BadValue(tt.what, tt.value, tt.want, tt.args...)
		code, msg := ExitCode(err)
		if code != ExitUsage || msg != tt.msg {
			t.Errorf("BadValue(%q, %.20q, %q) = %d %q, want %d %q", tt.what, tt.value, tt.want, code, msg, ExitUsage, tt.msg)
		}
	}
}
