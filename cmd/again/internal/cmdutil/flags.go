package cmdutil

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"
)

// Text returns a pflag.Value that stores the text given to the flag in *p
// as it is: validation happens later (the policy flags' in internal/calc,
// shared with the web page, once all flags are known). It refuses an empty
// or blank value, which would read as "use the default": FlagError turns
// that into the usage error "--NAME must not be empty; leave it out for its
// default". typ names the value in the help ("duration", "url").
func Text(p *string, typ string) pflag.Value { return textFlag{s: p, typ: typ} }

// Repeated returns a pflag.Value for a flag given any number of times, such
// as fetch's -H and -d: each value is appended to *p as given, empty ones
// included (an empty -d is an empty body), in order. typ names the value
// in the help.
func Repeated(p *[]string, typ string) pflag.Value { return repeatedFlag{s: p, typ: typ} }

// textFlag is the pflag.Value of Text.
type textFlag struct {
	s   *string
	typ string
}

func (f textFlag) String() string { return *f.s }
func (f textFlag) Type() string   { return f.typ }
func (f textFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		// An empty value would read as "use the default": refuse it rather
		// than silently compute something the user did not ask for.
		return errEmpty
	}
	*f.s = s
	return nil
}

// errEmpty is what textFlag.Set rejects; FlagError rewords it.
var errEmpty = errors.New("must not be empty")

var _ pflag.Value = textFlag{}

// repeatedFlag is the pflag.Value of Repeated.
type repeatedFlag struct {
	s   *[]string
	typ string
}

func (f repeatedFlag) String() string { return strings.Join(*f.s, ", ") }
func (f repeatedFlag) Type() string   { return f.typ }
func (f repeatedFlag) Set(s string) error {
	*f.s = append(*f.s, s)
	return nil
}

var _ pflag.Value = repeatedFlag{}
