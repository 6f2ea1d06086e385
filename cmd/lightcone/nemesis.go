package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9/logging"
	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/nemesis"
	"github.com/lightcone/lightcone/internal/topo"
)

func nemesisCmd() *cobra.Command {
	var (
		o              nemesis.Options
		faults, setups string
		only           []string
		world          string
		nodesPerRegion int
	)
	cmd := &cobra.Command{
		Use:   "nemesis",
		Short: "Run real processes under faults (kill -9, partitions, pauses, clock steps, migrations) and check every keyspace's history",
		Long: `nemesis starts a local cluster (one server process per node, WAN emulation), runs
go-redis clients against every node and keyspace, and meanwhile kills -9 and
restarts nodes, isolates them, cuts links, pauses them (SIGSTOP) for longer than a
lease, steps their wall clocks within the tightest clock bound a keyspace claims,
migrates lease masters and, with --faults including disk (root only), fills their
disks. Then it heals, checks that every node serves every keyspace again, and
checks each keyspace's history with the model its protocol claims (Porcupine for
linearizable levels, the sequential checkers otherwise).

It prints progress to stderr and one summary line per keyspace to stdout: ops
ok/failed/unknown, faults by kind, the checker's verdict, violations. Exit status 1
if a history is rejected or undecided, a node crashed by itself or did not
recover. The default keyspaces are a QUORUM/QUORUM quorum keyspace, a lease
keyspace and a meteor keyspace (internal/nemesis/setups.yaml).`,
		Example: `  lightcone nemesis                              # 20s, every default fault
  lightcone nemesis --duration 10m --seed 7      # a long run
  lightcone nemesis --only glob,ms               # lease and meteor: clock steps of up to ±2s
  lightcone nemesis --faults kill,pause --keep   # two kinds; keep data and logs
  sudo lightcone nemesis                         # as root the defaults include disk fills (tmpfs per node)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Kinds, err = nemesis.ParseKinds(faults); err != nil {
				return err
			}
			o.NoFaults = faults == "none"
			if setups != "" {
				data, err := os.ReadFile(setups)
				if err != nil {
					return err
				}
				if o.Keyspaces, err = nemesis.ParseSetups(setups, data); err != nil {
					return err
				}
			}
			if len(only) > 0 {
				if o.Keyspaces, err = nemesis.Select(o.Keyspaces, only); err != nil {
					return err
				}
			}
			if o.World, err = topo.Resolve(world); err != nil {
				return err
			}
			o.World.NodesPerRegion = nodesPerRegion
			o.Log = cmd.ErrOrStderr()
			// go-redis logs every failed dial; a killed node makes many.
			logging.Disable()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := nemesis.Run(ctx, o)
			for _, l := range rep.Lines() {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			if err != nil {
				return err
			}
			if rep.Failed() {
				return exitError{code: 1, err: fmt.Errorf("nemesis: FAIL (seed %d; again: lightcone nemesis --seed %d --duration %s --faults %s)",
					rep.Seed, rep.Seed, o.Duration, faults)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", 20*time.Second, "how long clients run under faults")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for the faults and the clients' choices (default: from the time; printed)")
	f.StringVar(&faults, "faults", "default", "fault kinds, comma-separated: kill, partition, link, pause, clock, migrate, disk; default (all; disk only as root), all, or none")
	f.StringVar(&setups, "setups", "", "YAML list of keyspace policies to test (default: internal/nemesis/setups.yaml)")
	f.StringSliceVar(&only, "only", nil, "test only these setups, by keyspace name (default setups: qq, glob, ms)")
	f.StringVar(&world, "world", nemesis.DefaultWorld, "world preset or YAML file")
	f.IntVar(&nodesPerRegion, "nodes-per-region", 1, "nodes in each region")
	f.IntVar(&o.ClientsPerNode, "clients", 2, "clients per node and keyspace")
	f.IntVar(&o.Keys, "keys", 5, "keys per keyspace")
	f.DurationVar(&o.Interval, "interval", time.Second, "mean gap between faults")
	f.DurationVar(&o.Hold, "hold", 2*time.Second, "how long a kill, partition, link cut or disk fill lasts")
	f.DurationVar(&o.Pause, "pause", 3*time.Second, "how long a paused node stays stopped (longer than every lease)")
	f.DurationVar(&o.ClockStep, "clock-step", 2*time.Second, "bound on wall-clock offsets when no keyspace claims a clock bound")
	f.DurationVar(&o.OpTimeout, "op-timeout", 5*time.Second, "bound on every client operation (a write past it has an unknown outcome)")
	f.StringVar(&o.DiskSize, "disk-size", "256m", "each node's tmpfs size with the disk fault")
	f.StringVar(&o.Dir, "dir", "", "directory for configs, data and logs (default: a temporary one, removed unless --keep or a failure)")
	f.IntVar(&o.CheckBudget, "check-budget", 20_000_000, "steps the sequential checkers' witness search may take before it says undecided")
	f.BoolVar(&o.Keep, "keep", false, "keep the data and logs")
	f.DurationVar(&o.Progress, "progress", 10*time.Second, "how often to print progress")
	return cmd
}
