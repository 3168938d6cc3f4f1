package cmdtest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitWriter is a concurrency-safe buffer that reports when its content
// first contains a string.
type WaitWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	want    string
	seen    chan struct{}
	changed chan struct{} // closed and replaced at every write
}

// NewWaitWriter returns a WaitWriter whose Seen is closed once its content
// contains want ("" for never).
func NewWaitWriter(want string) *WaitWriter {
	return &WaitWriter{want: want, seen: make(chan struct{}), changed: make(chan struct{})}
}

// Write appends p to the content.
func (w *WaitWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	hadIt := w.want != "" && strings.Contains(w.buf.String(), w.want)
	n, err := w.buf.Write(p)
	if w.want != "" && !hadIt && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	close(w.changed)
	w.changed = make(chan struct{})
	return n, err
}

// Seen returns a channel closed once the content contains the string
// NewWaitWriter was given (never for "").
func (w *WaitWriter) Seen() <-chan struct{} { return w.seen }

// String returns the content so far.
func (w *WaitWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// WaitFor waits until w's content contains s, failing the test if that
// takes more than 30 s.
func WaitFor(t *testing.T, w *WaitWriter, s string) {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		w.mu.Lock()
		found, changed := strings.Contains(w.buf.String(), s), w.changed
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("no %q after 30s; output %q", s, w.String())
		}
	}
}

// Lines joins s as lines, each ended by a newline: what a command prints
// as those lines.
func Lines(s ...string) string {
	if len(s) == 0 {
		return ""
	}
	return strings.Join(s, "\n") + "\n"
}
