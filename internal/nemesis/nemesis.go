package nemesis

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/yamlfile"
)

//go:embed setups.yaml
var defaultSetups []byte

// DefaultWorld is the world a run uses by default: the MeteorShower
// regions (Europe, US, Asia; 50–105 ms one way), one node in each.
const DefaultWorld = "meteor3"

// ParseSetups reads keyspace setups from file (its name, for errors):
// a YAML list of keyspace policies, as in a server's `keyspaces:`
// (setups.yaml is the default).
func ParseSetups(file string, data []byte) ([]server.KeyspacePolicy, error) {
	var out []server.KeyspacePolicy
	if err := yamlfile.Decode(file, data, &out, "setups"); err != nil {
		return nil, fmt.Errorf("nemesis: %w", err)
	}
	if len(out) == 0 {
		return nil, yamlfile.InFile(file, errors.New("nemesis: setups: no keyspace"))
	}
	return out, nil
}

// DefaultSetups are the embedded setups.yaml: a linearizable quorum
// keyspace (QUORUM/QUORUM), a lease keyspace and a meteor keyspace.
func DefaultSetups() []server.KeyspacePolicy {
	s, err := ParseSetups("setups.yaml", defaultSetups)
	if err != nil {
		panic(err) // the embedded file is part of the build
	}
	return s
}

// Select returns the setups named in names (nil setups: DefaultSetups),
// in the setups' order; an unknown name is an error listing the valid ones.
func Select(setups []server.KeyspacePolicy, names []string) ([]server.KeyspacePolicy, error) {
	if setups == nil {
		setups = DefaultSetups()
	}
	var out []server.KeyspacePolicy
	var valid []string
	for _, s := range setups {
		valid = append(valid, s.Name)
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	for _, n := range names {
		if !slices.Contains(valid, n) {
			return nil, fmt.Errorf("nemesis: no setup %q (setups: %s)", n, strings.Join(valid, ", "))
		}
	}
	return out, nil
}

// Options configures a run. Zero fields take the defaults noted.
type Options struct {
	// Binary is the lightcone executable. Default: this executable.
	Binary string
	// World is the cluster's world. Default: DefaultWorld with one node
	// per region.
	World *topo.World
	// Keyspaces are the keyspaces every node serves and the clients use.
	// Default: DefaultSetups.
	Keyspaces []server.KeyspacePolicy
	// Kinds are the faults to inject. Default: DefaultKinds(). Empty after
	// NoFaults: none (a control run).
	Kinds    []Kind
	NoFaults bool
	// Seed seeds the faults and the clients' choices. Default: drawn from
	// the time (and reported).
	Seed uint64
	// Duration is how long clients run under faults. Default 20s.
	Duration time.Duration
	// Calm is how long clients run after the faults are healed, before
	// they stop. Default 3s.
	Calm time.Duration
	// ClientsPerNode is the clients per node and keyspace. Default 2.
	ClientsPerNode int
	// Keys is the number of keys per keyspace (few keys: much contention).
	// Default 5.
	Keys int
	// OpTimeout bounds every client operation. Default 5s.
	OpTimeout time.Duration
	// Interval is the mean gap between faults (each gap is uniform in
	// [Interval/2, 3·Interval/2]). Default 1s.
	Interval time.Duration
	// Hold is how long a kill, partition, link cut or disk fill lasts.
	// Default 2s.
	Hold time.Duration
	// Pause is how long a paused node stays stopped; make it longer than
	// every lease. Default 3s.
	Pause time.Duration
	// ClockStep bounds every node's wall-clock offset when no keyspace
	// claims a clock bound. Default 2s.
	ClockStep time.Duration
	// DiskSize is each node's tmpfs size when KindDisk is on (mount's
	// size= syntax). Default 256m.
	DiskSize string
	// CheckBudget bounds the sequential checkers' witness search, in steps
	// (check.WithBudget); a search that runs out is Undecided. Default
	// 20,000,000.
	CheckBudget int
	// RecoverWithin bounds how long, after healing, every node may take to
	// serve a write and a read in every keyspace. Default 30s.
	RecoverWithin time.Duration
	// Dir holds the cluster's configuration, data and logs. Default: a new
	// temporary directory, removed after the run unless Keep (or the run
	// found a violation).
	Dir  string
	Keep bool
	// Log receives progress: the cluster, every fault, a line every
	// Progress (default 10s). Default: discarded.
	Log      io.Writer
	Progress time.Duration
}

func (o *Options) ensureDefaults() error {
	if o.World == nil {
		w, err := topo.Preset(DefaultWorld)
		if err != nil {
			return err
		}
		w.NodesPerRegion = 1
		o.World = w
	}
	if len(o.Keyspaces) == 0 {
		o.Keyspaces = DefaultSetups()
	}
	if o.NoFaults {
		o.Kinds = nil
	} else if len(o.Kinds) == 0 {
		o.Kinds = DefaultKinds()
	}
	for _, k := range o.Kinds {
		if !k.valid() {
			return fmt.Errorf("nemesis: unknown fault %q (valid: %s)", k, kindList(AllKinds))
		}
		if k == KindDisk && os.Geteuid() != 0 {
			return errors.New("nemesis: the disk fault mounts a tmpfs per node and needs root")
		}
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Duration, 20*time.Second)
	def(&o.Calm, 3*time.Second)
	def(&o.OpTimeout, 5*time.Second)
	def(&o.Interval, time.Second)
	def(&o.Hold, 2*time.Second)
	def(&o.Pause, 3*time.Second)
	def(&o.ClockStep, 2*time.Second)
	def(&o.RecoverWithin, 30*time.Second)
	def(&o.Progress, 10*time.Second)
	if o.ClientsPerNode == 0 {
		o.ClientsPerNode = 2
	}
	if o.Keys == 0 {
		o.Keys = 5
	}
	if o.CheckBudget == 0 {
		o.CheckBudget = 20_000_000
	}
	if o.DiskSize == "" {
		o.DiskSize = "256m"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// KeyspaceReport is one keyspace's outcome.
type KeyspaceReport struct {
	Name     string
	Protocol string
	Policy   string // the keyspace's policy in one line
	Model    string // the model its history was checked against
	// Ops by outcome as the clients saw them (internal/check.Outcome).
	OK, Failed, Unknown int
	Reads, Writes       int // completed (OK) ones
	Result              check.Result
	CheckTime           time.Duration
}

// Violations is 1 if the checker rejected the history, else 0 (a history
// is one proof; Result.Detail names the operations).
func (k KeyspaceReport) Violations() int {
	if k.Result.Verdict == check.Violation {
		return 1
	}
	return 0
}

// Report is a run's outcome.
type Report struct {
	Seed     uint64
	World    string
	Duration time.Duration // of the whole run, start to check
	Faults   map[Kind]int  // injected, by kind
	// ClockBound is the bound every wall-clock offset was kept within.
	ClockBound time.Duration
	// Crashes names nodes that exited without being killed: a bug, a
	// full disk included (a node refuses writes then, it does not exit).
	Crashes   []string
	Keyspaces []KeyspaceReport
	// Unrecovered lists the nodes and keyspaces that did not serve a write
	// and a read within RecoverWithin of healing.
	Unrecovered []string
	Dir         string // the kept directory, if any
}

// Violations counts the keyspaces whose history the checker rejected.
func (r Report) Violations() int {
	n := 0
	for _, k := range r.Keyspaces {
		n += k.Violations()
	}
	return n
}

// Failed reports whether the run found a problem: a violation, an
// undecided check, a node that exited by itself (a full disk included) or
// a node that did not recover.
func (r Report) Failed() bool {
	if r.Violations() > 0 || len(r.Unrecovered) > 0 || len(r.Crashes) > 0 {
		return true
	}
	for _, k := range r.Keyspaces {
		if k.Result.Verdict != check.Pass {
			return true
		}
	}
	return false
}

// FaultSummary is "kill=3 partition=2 ..." in AllKinds order, or "none".
func (r Report) FaultSummary() string {
	var parts []string
	for _, k := range AllKinds {
		if n, ok := r.Faults[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Lines is the report as one summary line per keyspace, then the run's.
func (r Report) Lines() []string {
	var out []string
	for _, k := range r.Keyspaces {
		out = append(out, fmt.Sprintf("nemesis: keyspace %s (%s): ops %d ok (%d reads, %d writes) / %d failed / %d unknown; faults %s; %s: %s in %s; violations %d",
			k.Name, k.Policy, k.OK, k.Reads, k.Writes, k.Failed, k.Unknown, r.FaultSummary(), k.Model, k.Result.Verdict, k.CheckTime.Round(time.Millisecond), k.Violations()))
		if k.Result.Verdict != check.Pass {
			out = append(out, "nemesis:   "+k.Result.String())
		}
	}
	verdict := "PASS"
	if r.Failed() {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("nemesis: %s seed %d world %s, %s: faults %s (clock offsets within ±%s); violations %d",
		verdict, r.Seed, r.World, r.Duration.Round(time.Second), r.FaultSummary(), r.ClockBound, r.Violations())
	if len(r.Crashes) > 0 {
		line += "; crashed by themselves: " + strings.Join(r.Crashes, ", ")
	}
	if len(r.Unrecovered) > 0 {
		line += "; not recovered: " + strings.Join(r.Unrecovered, ", ")
	}
	if r.Dir != "" {
		line += "; data and logs kept in " + r.Dir
	}
	return append(out, line)
}

// keyspace is a keyspace under test.
type keyspace struct {
	policy server.KeyspacePolicy
	def    *protocol.Definition
	ks     protocol.Keyspace
	hist   *history
	// positions: its clients record where the system places each
	// operation (LC.SET's version, LC.GETAT's read time), so that the
	// sequential checker can try the system's own order as a witness
	// before it searches (check.Op.Pos); plain SET and GET otherwise.
	positions bool
}

// Run starts a cluster, runs the clients and the nemesis, heals, checks
// every keyspace's history and stops the cluster. An error means the run
// could not be made (the cluster did not start, say); what it found is in
// the Report (Report.Failed).
func Run(ctx context.Context, o Options) (rep Report, err error) {
	if err := o.ensureDefaults(); err != nil {
		return rep, err
	}
	began := time.Now()
	rep = Report{Seed: o.Seed, World: o.World.Name, Faults: map[Kind]int{}}
	tp := topo.NewTopology(o.World)
	kss, bound, err := buildKeyspaces(tp, o.Keyspaces)
	if err != nil {
		return rep, err
	}
	if bound == 0 {
		bound = o.ClockStep
	}
	rep.ClockBound = bound

	dir, own := o.Dir, o.Dir == ""
	if own {
		if dir, err = os.MkdirTemp("", "lightcone-nemesis-"); err != nil {
			return rep, fmt.Errorf("nemesis: %w", err)
		}
	}
	keep := o.Keep
	defer func() {
		if own && !keep && !rep.Failed() && err == nil {
			_ = os.RemoveAll(dir)
		} else {
			rep.Dir = dir
		}
	}()
	disks, err := mountDisks(o, dir, tp)
	if err != nil {
		return rep, err
	}
	defer disks.unmount(o.Log)

	fmt.Fprintf(o.Log, "nemesis: seed %d, world %s (%d nodes), keyspaces %s, faults %s, %s; directory %s\n",
		o.Seed, o.World.Name, len(tp.Nodes), keyspaceNames(kss), kindList(o.Kinds), o.Duration, dir)
	cl, err := localcluster.Start(ctx, localcluster.Options{World: o.World, Binary: o.Binary, Dir: dir, Sync: "always",
		Keyspaces: o.Keyspaces, ServerArgs: []string{"--fault-injection"}, Log: o.Log})
	if err != nil {
		return rep, err
	}
	defer cl.Stop()

	rng := rand.New(rand.NewPCG(o.Seed, 0x6e656d65))
	w := &workload{o: o, cl: cl, kss: kss, seed: rng.Uint64(), start: time.Now()}
	if err := w.waitServing(ctx); err != nil {
		return rep, err
	}
	stopClients := w.run(ctx)
	n := &nemesis{o: o, cl: cl, kss: kss, rng: rand.New(rand.NewPCG(rng.Uint64(), 1)), bound: bound, disks: disks,
		offsets: make([]time.Duration, len(tp.Nodes)), faults: rep.Faults, log: o.Log}
	progress := startProgress(o, w, n)
	n.run(ctx, o.Duration)
	n.healAll(ctx)
	select {
	case <-ctx.Done():
	case <-time.After(o.Calm):
	}
	stopClients()
	progress()
	rep.Unrecovered = w.recover(ctx)
	rep.Crashes = n.crashes
	fmt.Fprintf(o.Log, "nemesis: checking %d histories...\n", len(kss))
	for _, k := range kss {
		kr := k.check(o.CheckBudget)
		rep.Keyspaces = append(rep.Keyspaces, kr)
		if err := k.save(dir); err != nil {
			fmt.Fprintf(o.Log, "nemesis: %v\n", err)
		}
	}
	rep.Duration = time.Since(began)
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("nemesis: interrupted: %w", err)
	}
	return rep, nil
}

// buildKeyspaces builds each policy's keyspace, as the nodes do, for its
// model and clock bound; bound is the tightest clock bound any claims (0:
// none claims one).
func buildKeyspaces(tp *topo.Topology, policies []server.KeyspacePolicy) (kss []*keyspace, bound time.Duration, err error) {
	for _, p := range policies {
		d, ks, err := p.Spec().Build(tp)
		if err != nil {
			return nil, 0, fmt.Errorf("nemesis: keyspace %s: %w", p.Name, err)
		}
		if b := ks.ClockBound(); b > 0 && (bound == 0 || b < bound) {
			bound = b
		}
		kss = append(kss, &keyspace{policy: p, def: d, ks: ks, hist: &history{}, positions: ks.Model() == "sequential"})
	}
	return kss, bound, nil
}

// save writes the keyspace's history as JSON (a check.History) to
// dir/<keyspace>.history.json, for checking again (kept with the logs).
func (k *keyspace) save(dir string) error {
	b, err := json.Marshal(k.hist.snapshot())
	if err != nil {
		return fmt.Errorf("nemesis: history: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, k.policy.Name+".history.json"), b, 0o644)
}

// check checks the keyspace's history against its protocol's model.
func (k *keyspace) check(budget int) KeyspaceReport {
	h := k.hist.snapshot()
	r := KeyspaceReport{Name: k.policy.Name, Protocol: k.def.Name, Policy: k.ks.Describe(), Model: k.ks.Model()}
	for _, op := range h.Ops {
		switch op.Outcome {
		case check.OK:
			r.OK++
			if op.Kind == check.Read {
				r.Reads++
			} else {
				r.Writes++
			}
		case check.Failed:
			r.Failed++
		case check.Unknown:
			r.Unknown++
		}
	}
	t := time.Now()
	res, err := check.Check(r.Model, h, check.WithTimeout(5*time.Minute), check.WithBudget(budget))
	if err != nil {
		res = check.Result{Model: r.Model, Verdict: check.Undecided, Detail: err.Error()}
	}
	r.Result, r.CheckTime = res, time.Since(t)
	return r
}

func keyspaceNames(kss []*keyspace) string {
	var s []string
	for _, k := range kss {
		s = append(s, k.policy.Name+"="+k.def.Name)
	}
	return strings.Join(s, ",")
}

// startProgress prints a line every o.Progress until the returned stop.
func startProgress(o Options, w *workload, n *nemesis) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(o.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(o.Log, "nemesis: %s: %s; faults %s\n", time.Since(w.start).Round(time.Second), w.progress(), n.summary())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
