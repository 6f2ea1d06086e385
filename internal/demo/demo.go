// Package demo is `lightcone demo`, the first thing a newcomer runs: a real
// multi-region cluster on loopback (one process per node, WAN emulation
// from a preset world), loaded with data and driven by YCSB clients in every
// region, once per keyspace configuration, ending with one latency table per
// configuration: each region's p50 and p99 beside the floor its consistency
// levels allow on the emulated WAN and at the speed of light.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
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
	report(out, w, o, results)
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

// series is one line of a table: the operation kinds it merges (the
// first names its floor: scenario.OpFloor).
type series struct {
	name string
	ops  []string
}

// allSeries are a table's lines; read and write always, scan and rmw
// when the workload has them.
var allSeries = []series{
	{name: "read", ops: []string{"read"}},
	{name: "write", ops: []string{"update", "insert"}},
	{name: "scan", ops: []string{"scan"}},
	{name: "rmw", ops: []string{"rmw"}},
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

// reportWidth is the most columns a line of the report takes.
const reportWidth = 100

// legend explains the tables' columns.
const legend = `latency in ms, one table per keyspace:
  p50, p99  measured through the real client path (RESP over loopback)
  floor     the least time the keyspace's consistency levels allow from that region on the
            emulated WAN: round trips to the replicas it must hear from, plus any wait the
            protocol makes wherever it runs (MeteorShower M2's reads: the clock skew bound ε);
            0.0: answered within the region, where loopback adds no delay
  light     the same round trips at the speed of light in fibre between the regions
            (what a perfect network would allow; emulated delays are above it)
  -         no operation of that kind completed in that region
`

// report prints, per phase, a table of each region's p50/p99 by
// operation beside its floor on the emulated WAN and at the speed of
// light, then the phase's totals and why it completed fewer operations
// than offered, if it did.
func report(out io.Writer, w *topo.World, o Options, results []*phaseResult) {
	if len(results) == 0 {
		return
	}
	ms := func(us int64) string { return fmt.Sprintf("%.1f", float64(us)/1e3) }
	dur := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
	fmt.Fprint(out, "\n"+legend)
	local := localLatency(w)
	for _, r := range results {
		fmt.Fprintf(out, "\n%s (keyspace %s)\n", r.phase.Name, r.phase.keyspace)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "region\top\tp50\tp99\tfloor\tlight\t")
		for reg, rg := range w.Regions {
			for i, s := range allSeries {
				h := r.lat(rg.Name, s)
				if i >= 2 && h.TotalCount() == 0 {
					continue
				}
				p50, p99 := "-", "-"
				if h.TotalCount() > 0 {
					p50, p99 = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(99))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", rg.Name, s.name, p50, p99,
					dur(scenario.OpFloor(r.ks.Floor, reg, s.ops[0], w.EmulatedOneWay)),
					dur(scenario.OpFloor(r.ks.Floor, reg, s.ops[0], w.LightOneWay)))
			}
		}
		_ = tw.Flush()
		errs := 0
		for _, n := range r.res.Errors {
			errs += n
		}
		fmt.Fprintf(out, "%s: %d operations, %d errors; %.1f%% of reads at local latency (under %.0f ms)\n",
			r.phase.Name, r.res.Ops, errs, 100*r.localReads(w, local), float64(local)/1e6)
		for _, text := range []string{r.phase.Note, r.shortfall(w, o)} {
			if text != "" {
				fmt.Fprint(out, wrap(text, "    ", reportWidth))
			}
		}
	}
}

// shortfall explains a phase that completed well under the operations
// its clients were offered ("" if it did not): a client runs one
// operation at a time, so one whose operations each wait for a floor
// longer than the gap between its arrivals falls behind, and the arrivals
// still queued when the phase ends are never sent.
func (r *phaseResult) shortfall(w *topo.World, o Options) string {
	offered := float64(len(w.Regions)*o.ClientsPerRegion) * o.RatePerClient * o.PhaseDuration.Seconds()
	if float64(r.res.Ops) >= 0.9*offered {
		return ""
	}
	var latUs, floorNs, n float64
	for reg, rg := range w.Regions {
		for _, s := range allSeries {
			h := r.lat(rg.Name, s)
			c := float64(h.TotalCount())
			latUs += h.Mean() * c
			floorNs += float64(scenario.OpFloor(r.ks.Floor, reg, s.ops[0], w.EmulatedOneWay)) * c
			n += c
		}
	}
	if n == 0 {
		return ""
	}
	floor := ""
	if floorNs > 0 {
		floor = fmt.Sprintf(" (%.0f ms of it its floor, which no operation escapes)", floorNs/n/1e6)
	}
	return fmt.Sprintf("why fewer operations: %d of about %.0f offered. Each client runs one operation at a time "+
		"and waits for its reply; here an operation took %.0f ms on average%s against one arrival every %.0f ms, "+
		"so arrivals queued behind it and those still queued when the run ended were never sent.",
		r.res.Ops, offered, latUs/n/1e3, floor, 1e3/o.RatePerClient)
}

// wrap breaks text into lines of at most width columns, each starting
// with indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
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
