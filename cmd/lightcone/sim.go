package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/workload"
)

func simCmd() *cobra.Command {
	var (
		configPath string
		c          scenario.Config
		asJSON     bool
		faultsFile string
		sets       []string
	)
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run a world, a keyspace policy, a workload and a fault schedule in the simulator",
		Long: `sim runs a whole cluster in virtual time, deterministically from --seed, and prints
per-region latency percentiles beside the network floor, the share of slow
requests, message counts, and the consistency checker's verdict on the history.

Flags override the YAML given with --config (see docs/sim.md for its fields).`,
		Example: `  lightcone sim --world globlease4 --protocol quorum --read ONE --write ALL --workload b
  lightcone sim --config experiment.yaml --seed 7 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := scenario.Config{}
			if configPath != "" {
				var err error
				if cfg, err = scenario.Load(configPath); err != nil {
					return err
				}
			}
			if faultsFile != "" {
				fc, err := scenario.Load(faultsFile)
				if err != nil {
					return fmt.Errorf("--faults: %w", err)
				}
				cfg.Faults = append(cfg.Faults, fc.Faults...)
			}
			applyChanged(cmd.Flags(), map[string]func(){
				"seed":                func() { cfg.Seed = c.Seed },
				"world":               func() { cfg.World = c.World },
				"protocol":            func() { cfg.Protocol = c.Protocol },
				"workload":            func() { cfg.WorkloadPreset = c.WorkloadPreset },
				"clients":             func() { cfg.Clients = c.Clients },
				"rate":                func() { cfg.Rate = c.Rate },
				"closed-loop":         func() { cfg.ClosedLoop = c.ClosedLoop },
				"duration":            func() { cfg.Duration = c.Duration },
				"warmup":              func() { cfg.Warmup = c.Warmup },
				"client-timeout":      func() { cfg.ClientTimeout = c.ClientTimeout },
				"threshold-ms":        func() { cfg.ThresholdMs = c.ThresholdMs },
				"clock-max-offset":    func() { cfg.Clock.MaxOffset = c.Clock.MaxOffset },
				"clock-max-drift-ppm": func() { cfg.Clock.MaxDriftPPM = c.Clock.MaxDriftPPM },
				"loss":                func() { cfg.Net.Loss = c.Net.Loss },
				"duplicate":           func() { cfg.Net.Duplicate = c.Net.Duplicate },
				"reorder":             func() { cfg.Net.Reorder = c.Net.Reorder },
				"random-faults":       func() { cfg.RandomFaults = c.RandomFaults },
				"check":               func() { cfg.Check = c.Check },
				"service-time":        func() { cfg.ServiceTime = c.ServiceTime },
				"publish-reads":       func() { cfg.PublishReads = c.PublishReads },
			})
			// Setting flags, in the order given: the short ones are
			// --set name=value for the settings of that name.
			for _, sf := range []struct{ flag, setting string }{
				{"replicas-per-region", "replicas_per_region"}, {"read", "read"}, {"write", "write"}, {"max-clock-offset", "max_clock_offset"},
			} {
				if f := cmd.Flags().Lookup(sf.flag); f.Changed {
					cfg.Set = append(cfg.Set, sf.setting+"="+f.Value.String())
				}
			}
			cfg.Set = append(cfg.Set, sets...)
			res, err := scenario.Run(cfg)
			if err != nil {
				return err
			}
			if asJSON {
				err = res.WriteJSON(cmd.OutOrStdout())
			} else {
				err = res.WriteText(cmd.OutOrStdout(), true)
			}
			if err != nil {
				return err
			}
			if ch := res.Check; ch != nil && ch.Verdict == "violation" {
				// A rejected history is a failed run: scripts and CI see it.
				return exitError{code: 1, err: fmt.Errorf("sim: check %s: VIOLATION (seed %d): %s", ch.Model, res.Seed, ch.Detail)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML file with the whole simulation (flags override it)")
	f.StringVar(&faultsFile, "faults", "", "YAML file whose `faults:` list is added to the schedule")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of every random choice; the same seed replays the same run")
	f.StringVar(&c.World, "world", "globlease4", "world preset ("+strings.Join(topo.PresetNames(), ", ")+") or YAML file")
	f.StringVar(&c.Protocol, "protocol", "", "keyspace protocol ("+strings.Join(scenario.Protocols(), ", ")+"; default "+scenario.Protocols()[0]+"; lightcone protocols lists their settings)")
	f.StringArrayVar(&sets, "set", nil, "a setting of the protocol, name=value (repeatable; `lightcone protocols` lists them, docs/sim.md documents them)")
	f.String("read", "", "short for --set read=LEVEL (ONE, TWO, THREE, QUORUM, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM, ALL)")
	f.String("write", "", "short for --set write=LEVEL")
	f.Int("replicas-per-region", 1, "short for --set replicas_per_region=N: replicas of each key in every region")
	f.Duration("max-clock-offset", 0, "short for --set max_clock_offset=D: assumed bound on clock offset from true time")
	f.DurationVar(&c.ServiceTime, "service-time", 0, "each node's cost per request or message (0: infinitely fast)")
	f.BoolVar(&c.PublishReads, "publish-reads", false, "answer reads from the replies protocols publish, as the server does (quorum fast-path reads, lease-local reads)")
	f.StringVar(&c.WorkloadPreset, "workload", "b", "YCSB core workload ("+strings.Join(workload.PresetNames(), ", ")+")")
	f.IntVar(&c.Clients, "clients", 50, "clients, spread evenly over the regions")
	f.Float64Var(&c.Rate, "rate", 1000, "total target requests/s, Poisson arrivals (open loop)")
	f.BoolVar(&c.ClosedLoop, "closed-loop", false, "closed loop: each client sends its next request when the last returns")
	f.DurationVar(&c.Duration, "duration", 0, "simulated time clients send requests (default 60s)")
	f.DurationVar(&c.Warmup, "warmup", 0, "the first part of --duration, not measured (latencies, operation and message counts)")
	f.DurationVar(&c.ClientTimeout, "client-timeout", 0, "client gives up on a request after this (outcome unknown); default 10s")
	f.Float64Var(&c.ThresholdMs, "threshold-ms", 500, "report the share of requests slower than this")
	f.DurationVar(&c.Clock.MaxOffset, "clock-max-offset", 0, "each node's clock offset is drawn from ±this")
	f.Float64Var(&c.Clock.MaxDriftPPM, "clock-max-drift-ppm", 0, "each node's clock drift is drawn from ±this (ppm)")
	f.Float64Var(&c.Net.Loss, "loss", 0, "probability a message is lost")
	f.Float64Var(&c.Net.Duplicate, "duplicate", 0, "probability a message is delivered twice")
	f.Float64Var(&c.Net.Reorder, "reorder", 0, "probability a message is delayed past later ones")
	f.BoolVar(&c.RandomFaults, "random-faults", false, "add a seeded random schedule of crashes, partitions and network faults")
	f.StringVar(&c.Check, "check", "auto", "consistency model to check ("+strings.Join(scenario.Models(), ", ")+"); auto: what the protocol claims")
	return cmd
}
