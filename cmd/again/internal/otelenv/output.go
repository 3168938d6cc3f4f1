package otelenv

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/go-logr/logr"
)

// quote is a short value of a variable, escaped and cut, for a message.
func quote(v string) string {
	const most = 40
	if utf8.RuneCountInString(v) > most {
		v = string([]rune(v)[:most]) + "..."
	}
	return printable.String(v)
}

// problems are the failures of a run after Start (exports, the SDK's
// errors and warnings), of which the run says one line: the first, and how
// many followed. Safe for concurrent use: the SDK reports from its own
// goroutines.
type problems struct {
	mu     sync.Mutex
	first  string
	n      int
	closed bool // said: what comes later is not this run's to say
}

func (p *problems) add(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.n == 0 {
		p.first = text
	}
	p.n++
}

// export counts an exporter's failure, and returns it marked as counted
// (nil for none).
func (p *problems) export(err error) error {
	if err == nil {
		return nil
	}
	p.add(err.Error())
	return &exportError{err}
}

// line returns the one line about the problems, or "" for none; later
// problems are then ignored: the line was said, at the end of the run.
func (p *problems) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.n == 0 {
		p.closed = true
		return ""
	}
	p.closed = true
	line := "not sent: " + printable.String(p.first)
	switch {
	case p.n == 2:
		line += " (and 1 more failure)"
	case p.n > 2:
		line += fmt.Sprintf(" (and %d more failures)", p.n-1)
	}
	return line
}

// sdkLog is the SDK's logger (otel.SetLogger): its errors and warnings
// count as problems, by their message only: the SDK adds the values it
// failed on (a header's value among them) as key-value pairs, which are
// dropped. Its messages about the variables that Read reads itself are
// dropped too: Read said what is wrong with them, and the exporters get
// what Read decided.
type sdkLog struct{ p *problems }

var _ logr.LogSink = sdkLog{}

// readByUs are the SDK's messages about values Read reads and replaces.
var readByUs = []string{"parse headers", "escape header value", "parse url", "parse endpoint url", "is not a valid protocol"}

func (l sdkLog) Init(logr.RuntimeInfo) {}

// Enabled keeps the errors (level 0) and warnings (level 1, the SDK's
// global.Warn), not its info and debug.
func (l sdkLog) Enabled(level int) bool { return level <= 1 }

func (l sdkLog) Info(level int, msg string, _ ...any) { l.log(msg) }

func (l sdkLog) Error(_ error, msg string, _ ...any) { l.log(msg) }

func (l sdkLog) log(msg string) {
	for _, m := range readByUs {
		if strings.Contains(msg, m) {
			return
		}
	}
	l.p.add("OpenTelemetry SDK: " + msg)
}

func (l sdkLog) WithValues(...any) logr.LogSink { return l }
func (l sdkLog) WithName(string) logr.LogSink   { return l }
