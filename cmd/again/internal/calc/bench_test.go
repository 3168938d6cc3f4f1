package calc

import (
	"io"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	v := Values{FieldInitial: "500ms", FieldMultiplier: "2", FieldMax: "30s", FieldRetries: "8", FieldJitter: "full", FieldDeadline: "1m"}
	for b.Loop() {
		if _, err := Parse(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReport measures what `again calc --retries 10000` does: compute
// the report and write it in each format.
func BenchmarkReport(b *testing.B) {
	in, err := Parse(Values{FieldRetries: "10000"})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name  string
		write func(*Report, io.Writer) error
	}{
		{"table", (*Report).WriteTable},
		{"json", (*Report).WriteJSON},
		{"csv", (*Report).WriteCSV},
		{"markdown", (*Report).WriteMarkdown},
	} {
		b.Run(f.name+"/10000", func(b *testing.B) {
			for b.Loop() {
				r, err := Compute(in)
				if err != nil {
					b.Fatal(err)
				}
				if err := f.write(r, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
