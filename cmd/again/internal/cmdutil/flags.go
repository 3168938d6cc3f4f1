package cmdutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Text returns a pflag.Value that stores the text given to the flag in *p
// as it is: validation happens later (the policy flags' in internal/calc,
// shared with the web page, once all flags are known). It refuses an empty
// or blank value, which would read as "use the default": FlagError turns
// that into the usage error `--NAME "": want a value; leave the flag out
// for its default`. typ names the value in the help ("duration", "url").
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

// Alias registers old as a hidden spelling of cmd's flag name, kept so
// that command lines written for an earlier name still work: a value given
// to --old is set on --name (which then counts as changed), and the first
// use writes one line on cmd's stderr naming the new spelling, such as
// "again web: --addr is now --listen; it still works, but write --listen".
// Each Alias warns at most once per command line. name must already be
// registered on cmd's flags.
func Alias(cmd *cobra.Command, old, name string) {
	fs := cmd.Flags()
	target := fs.Lookup(name)
	if target == nil {
		panic("cmdutil.Alias: no flag --" + name) // a programming error
	}
	a := &aliasValue{Value: target.Value, target: target, warn: func() {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: --%s is now --%s; it still works, but write --%s\n", cmd.CommandPath(), old, name, name)
	}}
	f := fs.VarPF(a, old, "", "old spelling of --"+name)
	f.NoOptDefVal = target.NoOptDefVal
	f.Hidden = true
}

// aliasValue is the pflag.Value of an Alias: it sets the target flag's
// value, marks the target changed, and warns once.
type aliasValue struct {
	pflag.Value
	target *pflag.Flag
	warn   func()
	warned bool
}

func (a *aliasValue) Set(s string) error {
	if !a.warned {
		a.warned = true
		a.warn()
	}
	if err := a.target.Value.Set(s); err != nil {
		return err
	}
	a.target.Changed = true
	return nil
}

// IsBoolFlag lets an alias of a boolean flag be given without a value.
func (a *aliasValue) IsBoolFlag() bool {
	b, ok := a.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// optionalNumber is the annotation of a flag registered with
// OptionalNumber.
const optionalNumber = "again-optional-number"

// OptionalNumber gives the flag name on fs a value it takes when given
// bare (pflag's NoOptDefVal), such as fetch's --throttle [K]. pflag alone
// would leave "--throttle 1.5 URL" with 1.5 as an argument (the URL, to
// fetch); Execute joins a bare such flag with a number that follows it
// ("--throttle=1.5"), so that a number after it is its value, as a person
// reads it, and anything else is an argument.
func OptionalNumber(fs *pflag.FlagSet, name, bare string) {
	f := fs.Lookup(name)
	f.NoOptDefVal = bare
	fs.SetAnnotation(name, optionalNumber, []string{"true"})
}

// joinOptionalNumbers returns args with each bare flag of OptionalNumber,
// in the command that args run, joined with the number after it, up to a
// "--".
func joinOptionalNumbers(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if name, ok := strings.CutPrefix(a, "--"); ok && i+1 < len(args) {
			if f := cmd.Flags().Lookup(name); f != nil && f.Annotations[optionalNumber] != nil {
				if _, err := strconv.ParseFloat(args[i+1], 64); err == nil {
					out = append(out, a+"="+args[i+1])
					i++
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}
