package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/demo"
)

func demoCmd() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a real multi-region cluster on this machine, drive YCSB from every region, print latencies",
		Long: `demo starts one lightcone server process per region of a preset world on loopback, with
WAN emulation holding every message for the world's inter-region delay; loads data;
drives YCSB clients in every region against their region's node, once per keyspace
configuration; and prints one table per configuration: each region's p50 and p99
beside the floor its consistency levels allow on the emulated WAN and at the speed of
light, with a legend, and why a configuration completed fewer operations than offered.
It takes about 75 s by default and removes its processes and data when done
(or interrupted).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Out = cmd.OutOrStdout()
			return demo.Run(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.World, "world", "globlease4", "world preset or YAML file")
	f.IntVar(&o.NodesPerRegion, "nodes-per-region", 1, "server processes per region")
	f.DurationVar(&o.PhaseDuration, "duration", 0, "how long each configuration runs (default 10s)")
	f.IntVar(&o.ClientsPerRegion, "clients", 4, "clients per region")
	f.Float64Var(&o.RatePerClient, "rate", 20, "requests/s per client (Poisson)")
	f.StringVar(&o.Workload, "workload", "b", "YCSB core workload (a-f)")
	f.IntVar(&o.Records, "records", 1000, "records loaded before the run")
	f.BoolVar(&o.Keep, "keep", false, "keep the cluster's data and logs")
	return cmd
}
