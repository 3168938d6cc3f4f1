package sim

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// writeRows writes rows, a slice of flat structs, in format. The columns
// are the structs' JSON field names, so that the table, the CSV and the
// JSON of a model always name the same things: the JSON is the struct's own
// encoding (numbers as numbers, a nil pointer as null), the CSV has one
// header line of the same names, and the table aligns the same cells.
func writeRows(w io.Writer, format string, rows any) error {
	bw := bufio.NewWriter(w)
	v := reflect.ValueOf(rows)
	if format == "json" {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	names := jsonNames(v.Type().Elem())
	whole := make([]bool, len(names))
	for j := range names {
		whole[j] = true
		for i := range v.Len() {
			f := reflect.Indirect(v.Index(i).Field(j))
			if f.Kind() == reflect.Float64 && (f.Float() != math.Trunc(f.Float()) || math.Abs(f.Float()) >= 1e15) {
				whole[j] = false
			}
		}
	}
	cells := make([][]string, v.Len())
	for i := range cells {
		row := v.Index(i)
		for j := range names {
			cells[i] = append(cells[i], cellText(row.Field(j), format == cmdutil.FormatText, whole[j]))
		}
	}
	if format == "csv" {
		cw := csv.NewWriter(bw)
		cw.Write(names)
		cw.WriteAll(cells) // flushes
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	}
	width := make([]int, len(names))
	for j, n := range names {
		width[j] = len(n)
		for _, c := range cells {
			width[j] = max(width[j], len(c[j]))
		}
	}
	line := func(cs []string) {
		for j, c := range cs {
			if j > 0 {
				bw.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-len(c))
			if v.Type().Elem().Field(j).Type.Kind() == reflect.String {
				bw.WriteString(c + pad) // names left-aligned
			} else {
				bw.WriteString(pad + c) // numbers right-aligned
			}
		}
		bw.WriteByte('\n')
	}
	line(names)
	for _, c := range cells {
		line(c)
	}
	return bw.Flush()
}

// jsonNames returns the JSON names of t's fields, in order.
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			panic(fmt.Sprintf("sim: %s.%s has no JSON name", t.Name(), t.Field(i).Name))
		}
		names[i] = name
	}
	return names
}

// cellText formats one value for the table (rounded for reading) or the
// CSV (exact, as JSON would print it).
// In the table, whole marks a column whose numbers are all whole: they
// are shown without decimals.
func cellText(v reflect.Value, table, whole bool) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			if table {
				return "-"
			}
			return ""
		}
		return cellText(v.Elem(), table, whole)
	case reflect.Bool:
		if table {
			return map[bool]string{true: "yes", false: "no"}[v.Bool()]
		}
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		f := v.Float()
		if !table {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		switch a := max(f, -f); {
		case whole:
			return strconv.FormatFloat(f, 'f', 0, 64)
		case a >= 1000:
			return strconv.FormatFloat(f, 'f', 0, 64)
		case a >= 10:
			return strconv.FormatFloat(f, 'f', 1, 64)
		}
		return strconv.FormatFloat(f, 'f', 3, 64)
	}
	return v.String()
}

// parseList parses a list flag: comma-separated items, each a number or a
// range FROM-TO/STEP (both ends included, such as 10-190/10). parse reads
// one number; ok checks it. It returns the numbers in the order given.
// accepted says what the numbers may be, and example is a range that the
// flag accepts, for the message that rejects s.
func parseList[T int | float64](flag, s, accepted, example string, parse func(string) (T, error), ok func(T) bool) ([]T, error) {
	bad := func() error {
		return cmdutil.BadValue("--"+flag, s, "a comma-separated list of %s, or ranges such as %s", accepted, example)
	}
	var out []T
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		from, rest, isRange := strings.Cut(item, "-")
		if !isRange {
			v, err := parse(item)
			if err != nil || !ok(v) {
				return nil, bad()
			}
			out = append(out, v)
			continue
		}
		to, step, hasStep := strings.Cut(rest, "/")
		a, err1 := parse(from)
		b, err2 := parse(to)
		d := T(1)
		var err3 error
		if hasStep {
			d, err3 = parse(step)
		}
		if err1 != nil || err2 != nil || err3 != nil || !ok(a) || !ok(b) || !(d > 0) || b < a {
			return nil, bad()
		}
		// Multiples of the step from a, not repeated additions, so that
		// 0-1/0.1 gives 0.3 and not 0.30000000000000004.
		count := float64(b-a)/float64(d) + 1e-9
		if !(count < 10_000) || len(out)+int(count) >= 10_000 {
			return nil, cmdutil.BadValue("--"+flag, s, "a list of at most 10000 values")
		}
		n := int(count)
		for i := 0; i <= n; i++ {
			v := a + T(i)*d
			if isFloat[T]() {
				f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', 12, 64), 64)
				v = T(f)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func isFloat[T int | float64]() bool {
	var z T
	_, f := any(z).(float64)
	return f
}
