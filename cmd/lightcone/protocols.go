package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all" // every protocol, from the registry
)

func protocolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "protocols",
		Short: "List the keyspace protocols and their settings",
		Long: `protocols lists every registered keyspace protocol: its name (a keyspace's
"protocol:"), the system it implements, and the settings it accepts (a
keyspace's other keys in a cluster file, "settings:" in a simulation, or
--set name=value). docs/sim.md documents each setting and its default.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PROTOCOL\tSYSTEM\tSUMMARY")
			for _, d := range protocol.All() {
				name := d.Name
				if d.Default {
					name += " (default)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", name, d.Title, d.Summary)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, d := range protocol.All() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s settings: %s\n", d.Name, strings.Join(protocol.SettingNames(d), ", "))
			}
			return nil
		},
	}
}
