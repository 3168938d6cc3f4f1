package run

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/retry"
)

func TestJudgeExit(t *testing.T) {
	only75 := map[int]bool{75: true}
	tests := []struct {
		name       string
		exit       exitInfo
		timedOut   bool
		atDeadline bool
		retryOn    map[int]bool
		wantStatus int // -1 for a success
		wantWhy    string
		permanent  bool
		overload   bool // with --overload-exit 76,143
	}{
		{"success", exitInfo{status: 0}, false, false, nil, -1, "", false, false},
		{"failure", exitInfo{status: 7}, false, false, nil, 7, "exit status 7", false, false},
		{"killed", exitInfo{status: -1, signal: syscall.SIGKILL}, false, false, nil, 137, "killed by SIGKILL", false, false},
		{"SIGINT is not retried", exitInfo{status: -1, signal: syscall.SIGINT}, false, false, nil, 130, "killed by SIGINT", true, false},
		{"exit 130 is not retried", exitInfo{status: 130}, false, false, nil, 130, "exit status 130", true, false},
		{"SIGPIPE is not retried", exitInfo{status: -1, signal: syscall.SIGPIPE}, false, false, nil, 141, "killed by SIGPIPE", true, false},
		{"listed SIGINT is retried", exitInfo{status: 130}, false, false, map[int]bool{130: true}, 130, "exit status 130", false, false},
		{"not in the list", exitInfo{status: 7}, false, false, only75, 7, "exit status 7", true, false},
		{"in the list", exitInfo{status: 75}, false, false, only75, 75, "exit status 75", false, false},
		{"timed out", exitInfo{status: -1, signal: syscall.SIGTERM}, true, false, nil, 124, "timed out after 2s", false, false},
		{"timed out with status 0", exitInfo{status: 0}, true, false, nil, 124, "timed out after 2s", false, false},
		{"timed out, not in the list", exitInfo{status: 7}, true, false, only75, 124, "timed out after 2s", false, false},
		{"at the deadline", exitInfo{status: -1, signal: syscall.SIGTERM}, true, true, nil, 124, "timed out at the --deadline", false, false},
		{"unnamed signal", exitInfo{status: -1, signal: syscall.Signal(10)}, false, false, nil, 138, "killed by signal 10", false, false},
		// --overload-exit 76,143: an overload is a retried status it names.
		{"an overload", exitInfo{status: 76}, false, false, nil, 76, "exit status 76", false, true},
		{"an overload by a signal's status", exitInfo{status: -1, signal: syscall.SIGTERM}, false, false, nil, 143, "killed by SIGTERM", false, true},
		{"an overload in the list", exitInfo{status: 76}, false, false, map[int]bool{76: true}, 76, "exit status 76", false, true},
		{"an overload not retried", exitInfo{status: 76}, false, false, only75, 76, "exit status 76", true, false},
		{"a timeout is no overload", exitInfo{status: 76}, true, false, nil, 124, "timed out after 2s", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := judgeExit(tt.exit, tt.timedOut, tt.atDeadline, 2*time.Second, exitRules{retryOn: tt.retryOn, overload: map[int]bool{76: true, 143: true}})
			if tt.wantStatus < 0 {
				if err != nil {
					t.Fatalf("judgeExit = %v, want a success", err)
				}
				return
			}
			var ae *attemptError
			if !errors.As(err, &ae) {
				t.Fatalf("judgeExit = %v, want an *attemptError", err)
			}
			if ae.status != tt.wantStatus || ae.why != tt.wantWhy || ae.atDeadline != tt.atDeadline || retry.IsPermanent(err) != tt.permanent || retry.IsOverload(err) != tt.overload {
				t.Errorf("judgeExit = status %d, why %q, at deadline %v, permanent %v, overload %v; want %d, %q, %v, %v, %v",
					ae.status, ae.why, ae.atDeadline, retry.IsPermanent(err), retry.IsOverload(err), tt.wantStatus, tt.wantWhy, tt.atDeadline, tt.permanent, tt.overload)
			}
		})
	}
}
