package cli

import (
	"github.com/spf13/cobra"
)

func newCalcCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calc",
		Short: "Show a backoff schedule, its total wait and whether it fits a deadline",
		Args:  NoArgs,
	}
	pf := AddPolicyFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		_, err := pf.Parse()
		return err
	}
	return cmd
}
