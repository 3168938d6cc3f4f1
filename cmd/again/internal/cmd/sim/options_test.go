package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
	"github.com/spf13/cobra"
)

// TestStormRun runs a model's run function without cobra: the rows of the
// storm of 10 clients with 2 retries and no jitter, as JSON, count every
// attempt (30).
func TestStormRun(t *testing.T) {
	var out bytes.Buffer
	opts := addSimFlags(&cmdutil.Env{Stdout: &out}, &cobra.Command{Use: "storm"})
	opts.format = "json"
	p := backoff.Policy{Initial: 0, Retries: 2, Multiplier: 2, Jitter: backoff.NoJitter}
	c := storm.Config{Policy: p, Clients: 10, Bucket: 1e9}
	if err := stormRun(opts, c, "none"); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("not JSON rows: %v\n%s", err, out.String())
	}
	total := 0.0
	for _, r := range rows {
		for k, v := range r {
			if n, ok := v.(float64); ok && k == "attempts" {
				total += n
			}
		}
	}
	if total != 30 {
		t.Errorf("the rows count %v attempts, want 30 (10 clients × 3):\n%s", total, out.String())
	}
}
