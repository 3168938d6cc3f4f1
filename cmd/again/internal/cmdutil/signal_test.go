//go:build unix

package cmdutil

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// Every signal that asks a command line program to stop cancels the
// context and is delivered for forwarding, instead of ending the process
// (which would leave `again run`'s command running without it).
func TestNotifyContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT} {
		ctx, stop := NotifyContext(context.Background())
		// The signal goes to this test process; NotifyContext has taken
		// it over, so it is delivered on the channel instead of ending the
		// process.
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		var se *SignalError
		if cause := context.Cause(ctx); !errors.As(cause, &se) || se.Signal != sig {
			t.Errorf("context.Cause = %v, want a *SignalError for %v", cause, sig)
		}
		if s := <-Signals(ctx); s != sig {
			t.Errorf("Signals delivered %v, want %v", s, sig)
		}
		stop()
	}
}

func TestSignalsWithoutNotify(t *testing.T) {
	if ch := Signals(context.Background()); ch != nil {
		t.Errorf("Signals(Background) = %v, want nil", ch)
	}
	ch := make(chan os.Signal, 1)
	ch <- os.Interrupt
	if s := <-Signals(WithSignals(context.Background(), ch)); s != os.Interrupt {
		t.Errorf("Signals(WithSignals(ch)) delivered %v, want interrupt", s)
	}
}
