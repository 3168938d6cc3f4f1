package cmdutil

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// SignalError is the cause (context.Cause) of a context that NotifyContext
// cancelled because the process received Signal.
type SignalError struct {
	Signal os.Signal
}

// Error says which signal: "again: received interrupt".
func (e *SignalError) Error() string { return "again: received " + e.Signal.String() }

type signalsKey struct{}

// WithSignals returns a copy of ctx that carries ch, which Signals returns.
// NotifyContext uses it; tests use it to deliver signals to a subcommand
// without sending any to the process.
func WithSignals(ctx context.Context, ch <-chan os.Signal) context.Context {
	return context.WithValue(ctx, signalsKey{}, ch)
}

// Signals returns the channel on which the process's SIGINT, SIGTERM, SIGHUP
// and SIGQUIT are delivered, every one of them, for a subcommand that
// forwards them to a child process; up to 8 signals wait there unread, later ones are dropped
// (the context is cancelled by then anyway). It returns nil (a channel that
// never delivers) when the context has none.
func Signals(ctx context.Context) <-chan os.Signal {
	ch, _ := ctx.Value(signalsKey{}).(<-chan os.Signal)
	return ch
}

// NotifyContext returns a context that is cancelled, with a *SignalError as
// its cause, when the process first receives SIGINT, SIGTERM, SIGHUP or
// SIGQUIT, and that
// carries every such signal for Signals. Once it is in place these signals
// no longer stop the process: each subcommand decides what they mean (most
// stop when the context is done; `again run` forwards them to its child).
//
// stop restores the default signal behaviour and releases the goroutine
// that relays signals; call it when Run returns.
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	notify := make(chan os.Signal, 1)
	relay := make(chan os.Signal, 8)
	// The signals that ask a command line program to stop: from a terminal
	// (SIGINT, SIGQUIT, SIGHUP when it closes) or from a supervisor (SIGTERM).
	signal.Notify(notify, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-notify:
				cancel(&SignalError{Signal: s})
				select {
				case relay <- s:
				default: // nobody is reading; the cancelled context says enough
				}
			case <-done:
				return
			}
		}
	}()
	return WithSignals(ctx, relay), func() {
		signal.Stop(notify)
		close(done)
		cancel(context.Canceled)
	}
}

// Stopped is the end of a command that signal sig stopped, for run and
// fetch alike: status 128+N and one line, "stopped: received SIGTERM",
// followed by detail.
func Stopped(sig os.Signal, detail string) error {
	return Exit(SignalStatus(sig), errors.New("stopped: received "+SignalName(sig)+detail))
}

// SignalCause returns the signal that cancelled ctx, if one did.
func SignalCause(ctx context.Context) os.Signal {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se.Signal
	}
	return nil
}

// SignalStatus is the exit status of a process that signal s stopped,
// 128+N as shells have it; ExitFailure for a signal without a number.
func SignalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return ExitFailure
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

// SignalName returns "SIGTERM" for syscall.SIGTERM, "signal 10" for a
// signal without a name here.
func SignalName(s os.Signal) string {
	n, ok := s.(syscall.Signal)
	if !ok {
		return s.String()
	}
	if name, ok := signalNames[n]; ok {
		return name
	}
	return "signal " + strconv.Itoa(int(n))
}
