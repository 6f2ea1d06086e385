package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/realrun"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/topo"
)

// runReal runs the experiment at its reduced real scale: per sweep point, a
// local cluster (one process per region, WAN emulation) driven through the
// real client path, once per series.
func runReal(ctx context.Context, e *Experiment, opts Options, rep *Report, progress func(string, ...any)) error {
	opts = realOptions(opts)
	xs, _ := e.xs(opts) // checked in Validate
	if _, chosen := opts.Overrides["sweep"]; !chosen && e.Sweep != nil && len(e.Real.SweepValues) > 0 {
		xs = e.Real.SweepValues
	}
	total, i := len(xs)*len(e.Series), 0
	for _, x := range xs {
		c0, err := e.configFor(e.Series[0], x, opts)
		if err != nil {
			return err
		}
		w, err := c0.ResolveWorld()
		if err != nil {
			return err
		}
		world := *w
		world.NodesPerRegion = 1 // reduced scale: one process per region
		var logw io.Writer
		if opts.Progress != nil {
			logw = opts.Progress
		}
		// Every series runs in a keyspace of its own, with its protocol and
		// settings at this point.
		var keyspaces []server.KeyspacePolicy
		built := make([]protocol.Keyspace, len(e.Series))
		defs := make([]*protocol.Definition, len(e.Series))
		tp := topo.NewTopology(&world)
		for si, s := range e.Series {
			c, err := e.configFor(s, x, opts)
			if err != nil {
				return err
			}
			d, settings, err := c.Spec().Resolve()
			if err != nil {
				return fmt.Errorf("bench: series %q: %w", s.Label, err)
			}
			if built[si], err = d.Build(tp, settings); err != nil {
				return fmt.Errorf("bench: series %q: %w", s.Label, err)
			}
			defs[si] = d
			keyspaces = append(keyspaces, server.KeyspacePolicy{Name: realKeyspace(si), Protocol: d.Name, Settings: settings})
		}
		progress("real: starting a %d-region cluster%s", len(world.Regions), e.xLabel(x))
		cl, err := localcluster.Start(ctx, localcluster.Options{World: &world, Binary: opts.Binary, ReplicasPerRegion: 1, Log: logw, Keyspaces: keyspaces})
		if err != nil {
			return fmt.Errorf("bench: real runtime: %w", err)
		}
		for si, s := range e.Series {
			i++
			c, err := e.configFor(s, x, opts)
			if err != nil {
				cl.Stop()
				return err
			}
			spec, err := c.WorkloadSpec()
			if err != nil {
				cl.Stop()
				return err
			}
			if _, set := opts.Overrides["records"]; !set && e.Real.Records > 0 {
				spec.RecordCount = e.Real.Records
			}
			dur := e.Real.Duration
			if _, set := opts.Overrides["duration"]; set {
				dur = c.Duration
			}
			rs := realrun.Spec{
				World: &world, Workload: spec, ClientsPerRegion: e.Real.ClientsPerRegion, RatePerClient: e.Real.RatePerClient,
				Duration: dur, Seed: opts.Seed, ThresholdMs: c.ThresholdMs, Progress: opts.Progress,
				Keyspace: realKeyspace(si), Policy: built[si].Describe(), Floor: built[si].Floor,
				// The simulator's warm-up (per-region state such as leases
				// held) stands for a long-running cluster; here every key is
				// read once per region first.
				PrimeReads: defs[si].PrimeReads,
			}
			progress("real %d/%d: %s%s", i, total, s.Label, e.xLabel(x))
			res, hists, err := realrun.Run(ctx, cl, rs)
			p := Point{Series: s.Label, X: x, Runtime: "real", Result: res, Hists: hists}
			if err != nil {
				p.Error = err.Error()
			}
			if res != nil || err != nil {
				rep.Points = append(rep.Points, p)
			}
			if err != nil && ctx.Err() != nil {
				cl.Stop()
				return ctx.Err()
			}
		}
		cl.Stop()
	}
	return nil
}

// realKeyspace names series si's own keyspace on a real cluster.
func realKeyspace(si int) string { return fmt.Sprintf("series%d", si) }

// realOptions are opts for the real runtime: the simulator's warm-up does
// not apply (a real run warms up on its own, and a lease series primes its
// leases), unless --set warmup asks for one.
func realOptions(opts Options) Options {
	ov := map[string]string{"warmup": "0s"}
	for k, v := range opts.Overrides {
		ov[k] = v
	}
	opts.Overrides = ov
	return opts
}
