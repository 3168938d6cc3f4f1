//go:build unix

package cli

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestNotifyContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, stop := NotifyContext(context.Background())
	// The signal goes to this test process; NotifyContext has taken over
	// SIGTERM, so it is delivered on the channel instead of ending the process.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	var se *SignalError
	if cause := context.Cause(ctx); !errors.As(cause, &se) || se.Signal != syscall.SIGTERM {
		t.Errorf("context.Cause = %v, want a *SignalError for SIGTERM", cause)
	}
	if s := <-Signals(ctx); s != syscall.SIGTERM {
		t.Errorf("Signals delivered %v, want SIGTERM", s)
	}
	stop()
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
