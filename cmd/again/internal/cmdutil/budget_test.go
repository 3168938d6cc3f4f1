package cmdutil

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

// TestFleetLines: the fleet's log lines are again's own lines, with every
// attribute of the record: "again run: " and the message, then the budget's
// or breaker's name and the error's text, and no time or level.
func TestFleetLines(t *testing.T) {
	var b bytes.Buffer
	log := fleetLogger(&b, "run")
	log.With(slog.String("budget", "db-wait")).Warn("fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can",
		slog.String("error", "dial tcp 127.0.0.1:6379: connect: connection refused"))
	log.With(slog.String("budget", "db-wait")).Info("fleet: Redis can be used again; retry decisions use the shared budget")
	log.With(slog.String("breaker", "k/api.example.com")).WithGroup("g").Warn("fleet: x\nsecond line \x1b[2J", slog.Int("n", 3), slog.Any("error", errors.New("boom")))
	log.Debug("fleet: not shown")
	want := `again run: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget db-wait; dial tcp 127.0.0.1:6379: connect: connection refused)
again run: fleet: Redis can be used again; retry decisions use the shared budget (budget db-wait)
again run: fleet: x; second line \x1b[2J (breaker k/api.example.com; g.n 3; g.error boom)
`
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}
}
