package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// The output formats of every command's --format: one vocabulary, so
// that a person who knows one command's formats can guess another's.
// FormatText is the default everywhere, what a person reads (a table or
// lines, as suits the command); FormatJSON is on stdout wherever a command
// has machine output.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatMarkdown = "markdown"
	FormatSVG      = "svg"
)

// AddFormat registers --format on cmd, storing one of formats (the first
// is the default, FormatText) in *p. Any other value is refused when the
// flag is parsed, naming what is accepted. "table", the old name of the
// text format in calc, proxy and sim, is still taken as FormatText, with
// one line on stderr the first time.
func AddFormat(cmd *cobra.Command, p *string, formats ...string) {
	*p = formats[0]
	v := &formatValue{p: p, formats: formats, warn: func() {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: --format table is now --format text; it still works, but write text\n", cmd.CommandPath())
	}}
	cmd.Flags().Var(v, "format", "output format: "+OneOf(formats))
}

// OneOf lists words for a message: "a", "a or b", "a, b or c".
func OneOf(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// formatValue is the pflag.Value of AddFormat.
type formatValue struct {
	p       *string
	formats []string
	warn    func()
	warned  bool
}

func (f *formatValue) String() string { return *f.p }
func (f *formatValue) Type() string   { return "format" }
func (f *formatValue) Set(s string) error {
	if s == "table" && slices.Contains(f.formats, FormatText) {
		if !f.warned {
			f.warned = true
			f.warn()
		}
		s = FormatText
	}
	if !slices.Contains(f.formats, s) {
		return &ValueError{Want: "one of " + OneOf(f.formats)}
	}
	*f.p = s
	return nil
}

// ValueError is what a flag's pflag.Value returns for a value it refuses:
// FlagError words it as every usage error (see BadValue): `--NAME "VALUE":
// want WANT`.
type ValueError struct {
	Want string // what the flag accepts: "one of text or json"
}

func (e *ValueError) Error() string { return "want " + e.Want }
