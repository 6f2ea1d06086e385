package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/server"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the release, module version, VCS revision and Go version (also --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionText(debug.ReadBuildInfo()))
			return nil
		},
	}
}

// versionText is what `lightcone version` and `lightcone --version`
// print: the release servers report, then from the binary's build
// information (bi, ok from debug.ReadBuildInfo) the module's version, the
// VCS revision it was built from, and the Go version.
func versionText(bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lightcone %s\n", server.Version)
	goVersion := runtime.Version()
	if !ok {
		fmt.Fprintf(&b, "build:    no build information in this binary\n")
	} else {
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		fmt.Fprintf(&b, "module:   %s %s\n", bi.Main.Path, bi.Main.Version)
		vcs := map[string]string{}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
		switch rev := vcs["vcs.revision"]; {
		case rev == "":
			fmt.Fprintf(&b, "revision: unknown (built without VCS information, as by go run or -buildvcs=false)\n")
		case vcs["vcs.modified"] == "true":
			fmt.Fprintf(&b, "revision: %s (%s, with uncommitted changes)\n", rev, vcs["vcs.time"])
		default:
			fmt.Fprintf(&b, "revision: %s (%s)\n", rev, vcs["vcs.time"])
		}
	}
	fmt.Fprintf(&b, "go:       %s %s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
