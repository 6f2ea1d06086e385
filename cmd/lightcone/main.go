// Command lightcone is Lightcone's single binary: the simulator, world
// listings, and (in later issues) the server, demo, bench and client.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "lightcone:", err)
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(2)
	}
}

// rootCmd is the lightcone command and its subcommands.
func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "lightcone",
		Short: "Lightcone: a geo-distributed key-value store that answers at the speed of the nearest provably-correct replica",
		Long: `Lightcone is a geo-distributed key-value store. Every protocol is a deterministic
state machine that runs unchanged in a simulator (virtual time, seeded faults)
and in the real server.`,
		Version:       versionText(debug.ReadBuildInfo()),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(simCmd(), worldsCmd(), serverCmd(), cliCmd(), demoCmd(), benchCmd())
	root.AddCommand(protocolsCmd(), nemesisCmd(), versionCmd())
	return root
}

// exitError is an error with its own exit status (1: the command ran and
// its answer is a failure, such as a checker's VIOLATION; 2 is every other
// error).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
