package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunLocal(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-local", "-calls", "3"}, &out, &errOut); code != 0 {
		t.Fatalf("fleetdemo -local -calls 3: exit %d, stderr %q", code, errOut.String())
	}
	// A full bucket of 10 tokens allows 4 retries, all in the first call.
	if !strings.HasSuffix(out.String(), ": 3 calls, 4 retries\n") {
		t.Errorf("fleetdemo -local -calls 3 printed %q, want \"process PID: 3 calls, 4 retries\"", out.String())
	}
}

func TestRunUsage(t *testing.T) {
	tests := [][]string{nil, {"-local", "-budget", "redis://h?key=k"}, {"-bogus"}, {"-budget", "http://h"}}
	for _, args := range tests {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 2 || errOut.Len() == 0 {
			t.Errorf("fleetdemo %q: exit %d, stderr %q; want 2 and a message", args, code, errOut.String())
		}
	}
}
