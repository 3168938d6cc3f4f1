package sim

import (
	"strings"
	"testing"
)

// TestSimStormFailAs checks that --fail-as runs the storm's clients on the
// class's schedule, within the call's --retries, as retry.WithClasses
// retries that failure; a class without its flag follows the call's
// policy; and the flags' misuses are usage errors naming them.
func TestSimStormFailAs(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		sameAs []string // the same storm on the policy flags alone
	}{
		{"overload, the call's retries first",
			[]string{"--retries", "3", "--on-overload", "initial=2s,retries=5,jitter=equal", "--fail-as", "overload"},
			[]string{"--retries", "3", "--initial", "2s", "--jitter", "equal"}},
		{"transient, its own retries first",
			[]string{"--retries", "6", "--on-overload", "initial=2s", "--on-transient", "initial=50ms,max=1s,retries=2,jitter=none", "--fail-as", "transient"},
			[]string{"--retries", "2", "--initial", "50ms", "--max", "1s", "--jitter", "none"}},
		{"a class without its flag: the call's policy",
			[]string{"--initial", "1s", "--on-overload", "initial=2s", "--fail-as", "transient"},
			[]string{"--initial", "1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, append([]string{"sim", "storm", "--format", "csv"}, tt.args...)...)
			want := run(t, append([]string{"sim", "storm", "--format", "csv"}, tt.sameAs...)...)
			if got.Code != 0 || got.Stdout != want.Stdout || got.Stdout == "" {
				t.Errorf("sim storm %s: exit %d, stderr %q, printed\n%s\nwant what %s prints\n%s",
					strings.Join(tt.args, " "), got.Code, got.Stderr, got.Stdout, strings.Join(tt.sameAs, " "), want.Stdout)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--on-overload", "initial=2s"}, "again sim storm: --on-overload and --on-transient need --fail-as overload or --fail-as transient: the kind of failure every client gets"},
		{[]string{"--on-transient", "initial=2s", "--fail-as", "network"}, `again sim storm: --fail-as "network": want overload or transient`},
		{[]string{"--on-overload", "initial=2s,initial=3s", "--fail-as", "overload"}, "again sim storm: --on-overload gives initial twice"},
	} {
		wantUsageError(t, run(t, append([]string{"sim", "storm"}, tt.args...)...), tt.want)
	}
}
