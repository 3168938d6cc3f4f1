// Package calc is the backoff calculator shared by `again calc` and the web
// page.
//
// Compiled to WebAssembly for the page, it turns the user's text into a
// validated policy and renders the report, so both accept the same input
// with the same messages and export byte-identical JSON and CSV.
//
// Quick start:
//
//	in, err := calc.Parse(calc.Values{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8"})
//	if err != nil {
//		var ie *calc.InputError // Field, Value, and a Key with Args for any language
//		...
//	}
//	rep, err := calc.Compute(in) // a *calc.SolveError when solving has no answer to show
//	rep.Total.Estimated          // which totals are Monte Carlo estimates
//	rep.WriteJSON(w)             // or WriteCSV, WriteTable, WriteMarkdown
//
// The Report is the one place where the calculator's facts live: what is
// estimated, whether the worst case and the 99th percentile fit the
// deadline, each value in Human form (the deadline, the user's own value,
// in HumanExact form, unrounded). Every output format and the web page
// render it, so they cannot disagree.
//
// Fields missing from Values take their defaults (DefaultValues), those of
// backoff.Default(). Parse rejects what backoff.Policy would silently
// reinterpret, such as a multiplier of 0, and bounds retries at MaxRetries.
// The calculator keeps its own meaning of 0 for --initial, --max and
// --retries (no wait, no cap, no retries); Input.Policy spells them as
// backoff.Policy does (a negative Initial, backoff.NoCap, backoff.NoRetries),
// and reports echo the user's 0.
//
// Durations are Go syntax ("500ms", "1.5s", "2m") or a bare number of
// milliseconds (see ParseDuration). Presets are named policies to start
// from, the ones `again calc --preset` and the page's menu offer.
// Everything here is pure computation on values: safe for concurrent use.
package calc
