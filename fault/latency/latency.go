// Package latency holds long-tailed latency distributions.
//
// Package fault draws its delays from them and `again sim hedge` simulates
// them, so that a simulation and a live test mean the same thing by the
// same word. It imports nothing of net/http: the simulator, compiled to
// WebAssembly for the calculator's page, uses it.
//
// # Quick start
//
//	d, err := latency.Parse("lognormal:5ms,1.2") // its defaults set
//	r := rand.New(rand.NewPCG(1, 2))
//	delay := d.Sample(r)
//	p99 := d.Quantile(0.99)
//
// Package fault's Distribution and ParseDistribution are these.
package latency

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The names of the latency distributions. They are the words of
// `again sim hedge --dist`, so that a simulation and a live test mean the
// same thing by the same word.
const (
	Pareto    = "pareto"    // Scale·U^(−1/Alpha): a power-law tail
	Lognormal = "lognormal" // Median·e^(Sigma·Z)
)

// Max caps every latency a Distribution draws: a power law with a
// small Alpha would otherwise draw hours now and then.
const Max = time.Minute

// Distribution is a long-tailed latency distribution: the time a request
// takes on an idle server. Zero fields mean the values in brackets, which
// Defaults fills in. The zero Distribution is a Pareto of Scale 5 ms and
// Alpha 1.5. A Distribution is a value: copy it freely; its methods are
// safe for concurrent use (Sample only draws from the *rand.Rand it is
// given, which must not be shared without a lock).
type Distribution struct {
	// Name is Pareto or Lognormal [Pareto].
	Name string
	// Scale [5 ms] is a Pareto's least latency and Alpha [1.5] its tail
	// index, above 1 so that the mean is finite (the smaller, the heavier
	// the tail).
	Scale time.Duration
	Alpha float64
	// Median [10 ms] and Sigma [1] are a lognormal's median and the standard
	// deviation of its logarithm.
	Median time.Duration
	Sigma  float64
}

// Defaults returns d with its zero fields set to their defaults, or a
// *FieldError naming the first field outside its range: Name not Pareto
// or Lognormal; Scale or Median not from 1 µs to 1 s; Alpha not above 1
// and up to 100; Sigma not above 0 and up to 5.
func (d Distribution) Defaults() (Distribution, error) {
	if d.Name == "" {
		d.Name = Pareto
	}
	if d.Name != Pareto && d.Name != Lognormal {
		return d, &FieldError{"Name", strconv.Quote(d.Name), "pareto or lognormal"}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Scale", &d.Scale, 5 * time.Millisecond}, {"Median", &d.Median, 10 * time.Millisecond}} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < time.Microsecond || *f.v > time.Second:
			return d, &FieldError{f.name, f.v.String(), "a duration from 1µs to 1s"}
		}
	}
	if d.Alpha == 0 {
		d.Alpha = 1.5
	}
	if !(d.Alpha > 1 && d.Alpha <= 100) {
		return d, &FieldError{"Alpha", fmt.Sprint(d.Alpha), "a number above 1 and up to 100"}
	}
	if d.Sigma == 0 {
		d.Sigma = 1
	}
	if !(d.Sigma > 0 && d.Sigma <= 5) {
		return d, &FieldError{"Sigma", fmt.Sprint(d.Sigma), "a number above 0 and up to 5"}
	}
	return d, nil
}

// Validate returns Defaults' error: nil if d, its zero fields set to their
// defaults, is a valid distribution.
func (d Distribution) Validate() error {
	_, err := d.Defaults()
	return err
}

// Sample draws one latency from r, at most Max. d must have its
// defaults set (Defaults): a zero Scale or Median draws 0.
func (d *Distribution) Sample(r *rand.Rand) time.Duration {
	var v float64
	if d.Name == Lognormal {
		v = float64(d.Median) * math.Exp(d.Sigma*r.NormFloat64())
	} else {
		v = float64(d.Scale) * math.Pow(1-r.Float64(), -1/d.Alpha) // 1−U is in (0, 1]
	}
	return time.Duration(math.Min(v, float64(Max)))
}

// Survival returns P(latency > x), for d with its defaults set.
func (d *Distribution) Survival(x time.Duration) float64 {
	if d.Name == Lognormal {
		return 0.5 * math.Erfc(math.Log(float64(x)/float64(d.Median))/(d.Sigma*math.Sqrt2))
	}
	if x < d.Scale {
		return 1
	}
	return math.Pow(float64(d.Scale)/float64(x), d.Alpha)
}

// Quantile returns the q-quantile of the distribution, for q in (0, 1), at
// most Max, for d with its defaults set.
func (d *Distribution) Quantile(q float64) time.Duration {
	var v float64
	if d.Name == Lognormal {
		v = float64(d.Median) * math.Exp(d.Sigma*math.Sqrt2*math.Erfinv(2*q-1))
	} else {
		v = float64(d.Scale) * math.Pow(1-q, -1/d.Alpha)
	}
	return time.Duration(math.Min(v, float64(Max)))
}

// String returns d in the form Parse reads: "pareto:5ms,1.5"
// or "lognormal:10ms,1", with the zero fields at their defaults.
func (d Distribution) String() string {
	if n, err := d.Defaults(); err == nil {
		d = n
	}
	if d.Name == Lognormal {
		return fmt.Sprintf("%s:%v,%v", d.Name, d.Median, d.Sigma)
	}
	return fmt.Sprintf("%s:%v,%v", d.Name, d.Scale, d.Alpha)
}

// Parse reads a distribution as NAME[:DURATION[,NUMBER]]:
// "pareto:5ms,1.5" is a Pareto of Scale 5 ms and Alpha 1.5,
// "lognormal:5ms,1.2" a lognormal of Median 5 ms and Sigma 1.2. An omitted
// part takes its default ("lognormal" alone is Median 10 ms, Sigma 1). The
// result has its defaults set; an invalid part is a *FieldError.
func Parse(s string) (Distribution, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	d := Distribution{Name: name}
	if d.Name == "" {
		return d, &FieldError{"Name", strconv.Quote(s), "pareto or lognormal, as NAME[:DURATION[,NUMBER]]"}
	}
	if rest != "" {
		ds, ns, hasN := strings.Cut(rest, ",")
		v, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil || v <= 0 {
			return d, &FieldError{durationField(name), strconv.Quote(ds), "a duration from 1µs to 1s"}
		}
		var f float64
		if hasN {
			f, err = strconv.ParseFloat(strings.TrimSpace(ns), 64)
			if err != nil || f == 0 || math.IsNaN(f) {
				return d, &FieldError{numberField(name), strconv.Quote(ns), "a number"}
			}
		}
		if name == Lognormal {
			d.Median, d.Sigma = v, f
		} else {
			d.Scale, d.Alpha = v, f
		}
	}
	return d.Defaults()
}

func durationField(name string) string {
	if name == Lognormal {
		return "Median"
	}
	return "Scale"
}

func numberField(name string) string {
	if name == Lognormal {
		return "Sigma"
	}
	return "Alpha"
}

// ErrInvalid is matched (errors.Is) by every error reporting an invalid
// distribution.
var ErrInvalid = errors.New("latency: invalid distribution")

// FieldError reports a field outside its accepted range. It matches
// ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the field, such as "Sigma"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted, such as "a number above 0 and up to 5"
}

// Error returns "latency: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("latency: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
