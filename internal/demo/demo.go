// Package demo is `lightcone demo`, the first thing a newcomer runs: a real
// multi-region cluster on loopback (one process per node, WAN emulation
// from a preset world), loaded with data and driven by YCSB clients in every
// region, once per keyspace configuration, ending with per-region latency
// tables side by side with the network floor.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/realrun"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/workload"
)

// Options configures a demo run.
type Options struct {
	World            string        // preset or file; default globlease4
	NodesPerRegion   int           // default 1: one process per region
	PhaseDuration    time.Duration // per configuration; default 10s
	ClientsPerRegion int           // default 4
	RatePerClient    float64       // requests/s per client; default 20 (GlobLease Table II's range)
	Workload         string        // YCSB preset; default b (95% reads)
	Records          int           // default 1000
	Keep             bool          // keep the data and logs directory
	Binary           string        // the lightcone binary; default this executable
	Out              io.Writer
}

// Phase is one keyspace configuration the demo measures: a protocol's
// demo preset (protocol.Definition.Demo), run in a keyspace of its own.
type Phase struct {
	Name     string // the preset's label
	Protocol *protocol.Definition
	Settings string // YAML mapping
	Note     string
	keyspace string
}

// Phases are the configurations compared side by side: every registered
// protocol's demo presets, the default protocol's first.
func Phases() []Phase {
	var out []Phase
	for _, d := range protocol.All() {
		for _, p := range d.Demo {
			out = append(out, Phase{Name: p.Label, Protocol: d, Settings: p.Settings, Note: p.Note,
				keyspace: fmt.Sprintf("demo%d", len(out))})
		}
	}
	return out
}

// spec is the phase's protocol and settings.
func (p Phase) spec() (protocol.Spec, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(p.Settings), &n); err != nil {
		return protocol.Spec{}, fmt.Errorf("demo: %s: settings %q: %w", p.Name, p.Settings, err)
	}
	return protocol.Spec{Protocol: p.Protocol.Name, YAML: &n}, nil
}

func (o *Options) ensureDefaults() error {
	if o.World == "" {
		o.World = "globlease4"
	}
	if o.NodesPerRegion == 0 {
		o.NodesPerRegion = 1
	}
	if o.PhaseDuration == 0 {
		o.PhaseDuration = 10 * time.Second
	}
	if o.ClientsPerRegion == 0 {
		o.ClientsPerRegion = 4
	}
	if o.RatePerClient == 0 {
		o.RatePerClient = 20
	}
	if o.Workload == "" {
		o.Workload = "b"
	}
	if o.Records == 0 {
		o.Records = 1000
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	switch {
	case o.NodesPerRegion < 1:
		return fmt.Errorf("nodes per region: %d; must be at least 1", o.NodesPerRegion)
	case o.ClientsPerRegion < 1:
		return fmt.Errorf("clients per region: %d; must be at least 1", o.ClientsPerRegion)
	case o.RatePerClient <= 0:
		return fmt.Errorf("rate: %g; must be > 0", o.RatePerClient)
	case o.PhaseDuration < time.Second:
		return fmt.Errorf("duration: %s; must be at least 1s", o.PhaseDuration)
	}
	return nil
}

// Run runs the demo; ctx cancellation (Ctrl-C) stops it early, still
// cleaning up every process and, unless Keep, the data.
func Run(ctx context.Context, o Options) error {
	if err := o.ensureDefaults(); err != nil {
		return err
	}
	w, err := topo.Resolve(o.World)
	if err != nil {
		return err
	}
	w.NodesPerRegion = o.NodesPerRegion
	spec, err := workload.Preset(o.Workload)
	if err != nil {
		return err
	}
	spec.RecordCount = o.Records
	spec.EnsureDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	out := o.Out
	fmt.Fprintf(out, "Lightcone demo: world %s, %d regions × %d node(s), WAN emulation on, YCSB workload %s, %d clients/region at %g req/s each\n",
		w.Name, len(w.Regions), w.NodesPerRegion, o.Workload, o.ClientsPerRegion, o.RatePerClient)

	phases := Phases()
	tp := topo.NewTopology(w)
	var keyspaces []server.KeyspacePolicy
	built := make([]protocol.Keyspace, len(phases))
	for i, ph := range phases {
		sp, err := ph.spec()
		if err != nil {
			return err
		}
		d, settings, err := sp.Resolve()
		if err != nil {
			return fmt.Errorf("demo: %s: %w", ph.Name, err)
		}
		// Built here too, for its policy line and floors.
		if built[i], err = d.Build(tp, settings); err != nil {
			return fmt.Errorf("demo: %s: %w", ph.Name, err)
		}
		keyspaces = append(keyspaces, server.KeyspacePolicy{Name: ph.keyspace, Protocol: d.Name, Settings: settings})
	}
	c, err := localcluster.Start(ctx, localcluster.Options{World: w, Binary: o.Binary, Keep: o.Keep, Log: out, Keyspaces: keyspaces})
	if err != nil {
		return err
	}
	defer c.Stop()
	var results []*phaseResult
	for i, ph := range phases {
		if ctx.Err() != nil {
			break
		}
		// Each phase has its keyspace, loaded on its own; every request
		// at the keyspace's levels.
		rs := realrun.Spec{
			World: w, Workload: spec, ClientsPerRegion: o.ClientsPerRegion, RatePerClient: o.RatePerClient,
			Duration: o.PhaseDuration, Seed: uint64(i + 1), Progress: out,
			Keyspace: ph.keyspace, Policy: built[i].Describe(), Floor: built[i].Floor, PrimeReads: ph.Protocol.PrimeReads,
			Locking: ph.Protocol.Locking,
		}
		fmt.Fprintf(out, "%s: keyspace %s: %s\n", ph.Name, ph.keyspace, built[i].Describe())
		res, hists, err := realrun.Run(ctx, c, rs)
		if res != nil {
			results = append(results, &phaseResult{phase: ph, ks: built[i], res: res, hists: hists})
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
	}
	report(out, w, results)
	if ctx.Err() != nil {
		return fmt.Errorf("demo interrupted: %w (partial results above)", ctx.Err())
	}
	return nil
}

// phaseResult is what one phase measured.
type phaseResult struct {
	phase Phase
	ks    protocol.Keyspace
	res   *scenario.Result
	hists map[string]*hdrhistogram.Histogram // "region/op", µs
}

// series is one line of the report: the operation kinds it merges and the
// levels that set its floor (a read-modify-write pays for both).
type series struct {
	name        string
	ops         []string
	read, write bool
}

// allSeries are the report's lines; read and write always, scan and rmw
// when the workload has them.
var allSeries = []series{
	{name: "read", ops: []string{"read"}, read: true},
	{name: "write", ops: []string{"update", "insert"}, write: true},
	{name: "scan", ops: []string{"scan"}, read: true},
	{name: "rmw", ops: []string{"rmw"}, read: true, write: true},
}

// lat merges the phase's histograms of the series' ops in region.
func (r *phaseResult) lat(region string, s series) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, op := range s.ops {
		if x := r.hists[region+"/"+op]; x != nil {
			h.Merge(x)
		}
	}
	return h
}

// report prints, per region and operation, each phase's p50/p99 beside the
// floor of its consistency level.
func report(out io.Writer, w *topo.World, results []*phaseResult) {
	if len(results) == 0 {
		return
	}
	// On loopback the client's hop to its node and a node's messages to
	// itself are not delayed; only messages between regions are.
	base := func(a, b int) time.Duration {
		if a == b {
			return 0
		}
		return w.BaseDelay(a, b)
	}
	ms := func(us int64) string { return fmt.Sprintf("%.1f", float64(us)/1e3) }
	fmt.Fprintln(out, "\nlatency in ms: p50 / p99 measured through the real client path, floor = network time the level cannot avoid")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "region\top\t"
	for _, r := range results {
		head += r.phase.Name + " p50\tp99\tfloor\t"
	}
	fmt.Fprintln(tw, head)
	for reg, rg := range w.Regions {
		for i, s := range allSeries {
			line := rg.Name + "\t" + s.name + "\t"
			seen := i < 2
			for _, r := range results {
				h := r.lat(rg.Name, s)
				seen = seen || h.TotalCount() > 0
				var floor time.Duration
				if s.read {
					floor += r.ks.Floor(reg, protocol.Read, base)
				}
				if s.write {
					floor += r.ks.Floor(reg, protocol.Write, base)
				}
				fl := fmt.Sprintf("%.1f", float64(floor)/1e6)
				if h.TotalCount() == 0 {
					line += "-\t-\t" + fl + "\t"
					continue
				}
				line += ms(h.ValueAtQuantile(50)) + "\t" + ms(h.ValueAtQuantile(99)) + "\t" + fl + "\t"
			}
			if seen {
				fmt.Fprintln(tw, line)
			}
		}
	}
	_ = tw.Flush()
	local := localLatency(w)
	for _, r := range results {
		errs := 0
		for _, n := range r.res.Errors {
			errs += n
		}
		fmt.Fprintf(out, "%s: %d operations, %d errors; %.1f%% of reads at local latency (under %.0f ms)\n",
			r.phase.Name, r.res.Ops, errs, 100*r.localReads(w, local), float64(local)/1e6)
		if r.phase.Note != "" {
			fmt.Fprintf(out, "    %s\n", r.phase.Note)
		}
	}
}

// localLatency is the latency below which a read cannot have left its
// region: the smallest one-way delay between two regions, half the
// shortest round trip.
func localLatency(w *topo.World) time.Duration {
	var least time.Duration
	for a := range w.Regions {
		for b := range w.Regions {
			if d := w.BaseDelay(a, b); a != b && (least == 0 || d < least) {
				least = d
			}
		}
	}
	return least
}

// localReads is the share of the phase's reads faster than local.
func (r *phaseResult) localReads(w *topo.World, local time.Duration) float64 {
	var fast, all float64
	for _, rg := range w.Regions {
		h := r.lat(rg.Name, allSeries[0])
		all += float64(h.TotalCount())
		for _, b := range h.Distribution() {
			if b.To < local.Microseconds() {
				fast += float64(b.Count)
			}
		}
	}
	if all == 0 {
		return 0
	}
	return fast / all
}
