package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/bench"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the experiment catalog: the seeds' figures, in the simulator or on a real local cluster",
	}
	cmd.AddCommand(benchListCmd(), benchRunCmd())
	return cmd
}

func benchListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the experiments",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat := bench.Default()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tREFERENCE\tRUNTIMES\tTITLE")
			for _, n := range cat.Names() {
				e, _ := cat.Get(n)
				rts := strings.Join(e.Runtimes(), ", ")
				if len(e.Runtimes()) == 0 {
					rts = "none: needs " + strings.Join(e.Requires, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Reference.Source, rts, e.Title)
			}
			return tw.Flush()
		},
	}
}

// benchResultsDir is where bench run writes by default, under the
// current directory; the repository's .gitignore lists it.
const benchResultsDir = "bench-results"

func benchRunCmd() *cobra.Command {
	var (
		all     bool
		opts    bench.Options
		out     string
		asJSON  bool
		setArgs []string
	)
	cmd := &cobra.Command{
		Use:   "run [NAME...] [--all]",
		Short: "Run experiments and write their reports (CSV, JSON, Markdown, PNG)",
		Long: `run runs each named experiment (or the whole catalog with --all) and writes a results
directory per experiment: results.json, rows.csv, seconds.csv, cdf.csv, report.md and
PNG figures. --runtime sim (default) runs in virtual time; real starts a local cluster
(one process per region, WAN emulation) at the experiment's reduced scale; both does
both and reports them side by side. An interrupted run (Ctrl-C) stops its cluster and
writes what it measured, marked incomplete.

Results go to --out: by default ./bench-results/NAME under the current directory
(with several experiments and --out DIR, DIR/NAME each). A Lightcone checkout's
.gitignore lists bench-results/, so runs from the repository root stay out of git.`,
		Example: `  lightcone bench run quorum-globlease-fig4
  lightcone bench run quorum-meteor-controlled --set duration=10s --out /tmp/meteor
  lightcone bench run quorum-globlease-fig5 --runtime both
  lightcone bench run --all --out docs/results`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat := bench.Default()
			names := args
			if all {
				if len(args) > 0 {
					return errors.New("bench run: give experiment names or --all, not both")
				}
				names = cat.Names()
			}
			if len(names) == 0 {
				return fmt.Errorf("bench run: name an experiment (valid: %s) or use --all", strings.Join(cat.Names(), ", "))
			}
			opts.Overrides = map[string]string{}
			for _, kv := range setArgs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("bench run: --set %q: want key=value (keys: %s)", kv, overrideKeys())
				}
				opts.Overrides[k] = v
			}
			var exps []*bench.Experiment
			for _, n := range names {
				e, err := cat.Get(n)
				if err != nil {
					return err
				}
				if err := e.Unavailable(); err != nil && all {
					// The whole catalog runs what this build can.
					fmt.Fprintf(cmd.ErrOrStderr(), "skipped: %v\n", err)
					continue
				}
				o := opts
				if err := e.Validate(&o); err != nil {
					return err
				}
				exps = append(exps, e)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Progress = cmd.ErrOrStderr()
			var summaries []any
			for _, e := range exps {
				dir := out
				if dir == "" {
					dir = filepath.Join(benchResultsDir, e.Name)
				} else if len(exps) > 1 {
					dir = filepath.Join(out, e.Name)
				}
				rep, runErr := bench.Run(ctx, e, opts)
				if rep != nil {
					if err := rep.Write(dir); err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: report in %s\n", e.Name, filepath.Join(dir, "report.md"))
					summaries = append(summaries, rep.Summary())
				}
				if runErr != nil {
					if asJSON {
						_ = json.NewEncoder(cmd.OutOrStdout()).Encode(summaries)
					}
					return fmt.Errorf("%s: %w (partial report written, marked incomplete)", e.Name, runErr)
				}
				if !asJSON {
					if err := rep.WriteMarkdown(cmd.OutOrStdout(), nil); err != nil {
						return err
					}
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(summaries)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&all, "all", false, "run the whole catalog")
	f.StringVar(&opts.Runtime, "runtime", "", "sim (virtual time), real (local cluster with WAN emulation), or both; default sim (real for calibration-*)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of every random choice")
	f.StringVar(&out, "out", "", "results directory (default ./bench-results/NAME; with several experiments, one subdirectory each)")
	f.BoolVar(&asJSON, "json", false, "print a machine-readable summary instead of the Markdown report")
	f.StringArrayVar(&setArgs, "set", nil, "override a parameter, key=value (keys: "+overrideKeys()+")")
	return cmd
}

func overrideKeys() string {
	var ks []string
	for k := range bench.Overrides() {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
