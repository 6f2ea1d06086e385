// Command lightcone is Lightcone's single binary: the simulator, world
// listings, and (in later issues) the server, demo, bench and client.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:   "lightcone",
		Short: "Lightcone: a geo-distributed key-value store that answers at the speed of the nearest provably-correct replica",
		Long: `Lightcone is a geo-distributed key-value store. Every protocol is a deterministic
state machine that runs unchanged in a simulator (virtual time, seeded faults)
and in the real server.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(simCmd(), worldsCmd(), serverCmd(), cliCmd(), demoCmd(), benchCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "lightcone:", err)
		os.Exit(2)
	}
}
