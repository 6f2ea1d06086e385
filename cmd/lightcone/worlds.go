package main

import (
	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/topo"
)

func worldsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worlds [NAME|FILE]",
		Short: "List the built-in worlds with their RTT matrices, or show one world",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return topo.WriteList(cmd.OutOrStdout())
			}
			w, err := topo.Resolve(args[0])
			if err != nil {
				return err
			}
			return topo.WriteMatrix(cmd.OutOrStdout(), w)
		},
	}
}
