package scenario

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/workload"
	"github.com/lightcone/lightcone/internal/yamlfile"
)

// Config is one simulation: a world, a keyspace policy, a workload and a
// fault schedule. It is loaded from YAML (field names below) and overridden
// by `lightcone sim` flags. Zero fields take the defaults noted.
type Config struct {
	Seed  uint64 `yaml:"seed"`  // default 1
	World string `yaml:"world"` // preset name or YAML path; default globlease4
	// WorldDef, if set, is used instead of World (tests build worlds in code).
	WorldDef *topo.World `yaml:"-"`
	// Protocol is the keyspace protocol, by its registered name; default
	// the registry's default (quorum).
	Protocol string `yaml:"protocol"`
	// SettingsYAML are the protocol's settings (`settings:` mapping of
	// name: value), decoded strictly: a setting the protocol does not have
	// is an error naming it and listing the valid ones.
	SettingsYAML yaml.Node `yaml:"settings"`
	// Settings, if set, are typed settings to start from (a pointer to the
	// protocol's settings struct, as tests and experiments state them);
	// SettingsYAML and Set are applied over them.
	Settings any `yaml:"-"`
	// Set are "name=value" setting overrides (`lightcone sim --set`),
	// applied last.
	Set []string `yaml:"-"`
	// Workload is a YCSB core workload: `preset: a`..`f` plus any of
	// workload.Spec's fields to override (record_count, read_proportion, ...).
	Workload yaml.Node `yaml:"workload"`
	// WorkloadPreset is set by the --workload flag; it overrides Workload's preset.
	WorkloadPreset string `yaml:"-"`
	// Transactions, if set, replaces the YCSB workload: each client
	// operation is one transaction (wire.OpTxn) of Catenae's
	// microbenchmark (workload.TxnSpec: records, min_keys, max_keys,
	// read_only_proportion, update, distribution, zipf_theta,
	// zipf_exponent; or tpcc, a TPC-C subset). Records
	// start absent; the history is a transactional one, checked with
	// model serializable (or another of check.TxnModels). The protocol
	// must run transactions (protocol.TxnRefusal). Default: none.
	Transactions *workload.TxnSpec `yaml:"transactions"`
	// Clients is the number of clients, spread evenly over the regions in
	// order; each talks to a node of its own region. Default 50 (GlobLease
	// Table II).
	Clients int `yaml:"clients"`
	// Rate is the total target throughput in requests/s, Poisson arrivals
	// shared evenly by the clients (open loop; each client runs one request at
	// a time and queues arrivals). 0 means closed loop: each client sends its
	// next request as soon as the last one returns. Default 1000.
	Rate float64 `yaml:"rate"`
	// ClosedLoop forces Rate to 0 (the YAML cannot express 0 otherwise).
	ClosedLoop bool `yaml:"closed_loop"`
	// RateSteps change the open-loop Rate during the run: from each step's
	// At on, the clients together offer its Rate (requests/s). Steps are in
	// increasing At order, within (0, Duration). Arrivals stay a Poisson
	// process whose rate is piecewise constant (an arrival drawn past a step
	// is redrawn from the step at the new rate). Default none.
	RateSteps []RateStep `yaml:"rate_steps"`
	// Duration is how long clients send requests, simulated. Default 60s.
	Duration time.Duration `yaml:"duration"`
	// OpsPerClient, if > 0, is how many operations each client starts
	// (YCSB's operationcount per client thread, as seed 002 ran "5,000
	// operations from each of two clients"); the run ends when every client
	// has finished them, or at Duration if that comes first. Default 0: no
	// limit, clients run for Duration.
	OpsPerClient int `yaml:"ops_per_client"`
	// Batch, for protocols whose clients hold keys (protocol.Definition.
	// Locking), is how many workload operations a client runs in one hold:
	// one acquire, Batch operations on the first operation's key, one
	// release (seed 002 Fig. 5.6, a batched workload F). The batch is one
	// measured operation, of its first operation's kind; Result.Batch
	// divides it back to a time per operation. Default 1.
	Batch int `yaml:"batch"`
	// RegionKeys is the share of each client's operations on its own
	// region's rows: the workload's key with the region's name and "/"
	// before it ("dc1/user42"); the other operations use the workload's
	// key as is, rows every region shares. A region's rows are not
	// preloaded: each is created by its region's first write (a read
	// before finds nothing). For placing a directory near the rows its
	// region uses (seed 002 §5.4, bench dir-placement; directory_shards).
	// Simulator only. Default 0: every row shared.
	RegionKeys float64 `yaml:"region_keys"`
	// Warmup is the first part of Duration that is not measured: operations
	// started before it are left out of the latency rows, histograms and
	// operation count, and messages sent before it out of the message
	// counts. The per-second series and the history check keep them. For
	// protocols whose state starts empty (leases). Default 0.
	Warmup time.Duration `yaml:"warmup"`
	// ClientTimeout is how long a client waits for a reply before it counts
	// the request's outcome as unknown. Default 10s.
	ClientTimeout time.Duration `yaml:"client_timeout"`
	// ServiceTime is each node's cost of handling one request or message
	// (sim.Config.ServiceTime): a node's capacity is 1/ServiceTime per
	// second, and overload shows as queueing. Default 0: infinitely fast.
	ServiceTime time.Duration `yaml:"service_time"`
	// PublishReads answers reads from the replies protocols publish, as
	// the real server does (sim.Config.PublishReads), so the history
	// checks those answers too. Default false.
	PublishReads bool `yaml:"publish_reads"`
	// ThresholdMs: the report shows the share of requests slower than this.
	// Default 500 (GlobLease Fig. 4).
	ThresholdMs float64 `yaml:"threshold_ms"`
	Clock       Clock   `yaml:"clock"`
	Net         Net     `yaml:"net"`
	Faults      []Fault `yaml:"faults"`
	// StoreFaults injects storage failures into every node's store (read
	// and write errors; torn crashes): a replica whose store fails
	// fail-stops or refuses the operation, and the history must still pass.
	StoreFaults sim.StoreFaults `yaml:"store_faults"`
	// RandomFaults adds a seeded random fault schedule (crashes, partitions,
	// loss/duplication/reordering bursts) over the run.
	RandomFaults bool `yaml:"random_faults"`
	// Check is the consistency model the history is checked against: auto
	// (what the protocol claims for these levels), linearizable, sequential,
	// regular, valid-reads or none. Default auto.
	Check string `yaml:"check"`
	// VMs are the VMs the protocol runs for roles that need them (Fast
	// Paxos acceptors, CRIC's propose assistants), charged by the hour
	// for the measured window in Result.Cost. Default none: nodes are not
	// charged as VMs.
	VMs []VMFleet `yaml:"vms"`
	// PadValues makes every written and preloaded value the workload's
	// value_size bytes (a short unique identity, then filler), so storage
	// requests, stored bytes and egress see the objects' real size (seed
	// 001 Fig. 5.14's 256 B to 100 KB). The history keeps the identity.
	// Default false: values are the short identities alone.
	PadValues bool `yaml:"pad_values"`
	// skipCheck records the history but leaves it unchecked (Result.Check
	// nil): BenchmarkSim times the run without the checker.
	skipCheck bool
}

// VMFleet is Count VMs of Size (the provider's name, priced by
// internal/cost's catalogue) in Region, for Role.
type VMFleet struct {
	Region string `yaml:"region"`
	Role   string `yaml:"role"`
	Size   string `yaml:"size"`
	Count  int    `yaml:"count"`
}

// RateStep sets the total offered rate from At on (Config.RateSteps).
type RateStep struct {
	At   time.Duration `yaml:"at"`   // since the run's start, simulated
	Rate float64       `yaml:"rate"` // total requests/s, > 0
}

// Clock draws node clock errors (sim.ClockConfig).
type Clock struct {
	MaxOffset   time.Duration `yaml:"max_offset"`
	MaxDriftPPM float64       `yaml:"max_drift_ppm"`
}

// Net is the network fault model (sim.NetConfig).
type Net struct {
	Loss         float64       `yaml:"loss"`
	Duplicate    float64       `yaml:"duplicate"`
	Reorder      float64       `yaml:"reorder"`
	ReorderDelay time.Duration `yaml:"reorder_delay"`
}

func (n Net) sim() sim.NetConfig {
	return sim.NetConfig{Loss: n.Loss, Duplicate: n.Duplicate, Reorder: n.Reorder, ReorderDelay: n.ReorderDelay}
}

// Fault is one entry of the fault schedule: exactly one of Crash,
// Partition, Net or Skew, starting At and undone after For (if set).
type Fault struct {
	At  time.Duration `yaml:"at"`
	For time.Duration `yaml:"for"`
	// Crash names a node ("japan-0") or a region (all its nodes).
	Crash string `yaml:"crash"`
	// Partition lists groups of node or region names; traffic between
	// different groups is dropped, both ways.
	Partition [][]string `yaml:"partition"`
	// Net replaces the network fault model.
	Net *Net `yaml:"net"`
	// Skew sets a node's clock offset and drift.
	Skew *Skew `yaml:"skew"`
	// Outage names a region whose storage service (every replica of it)
	// answers nothing meanwhile (sim.Sim.SetServiceDown).
	Outage string `yaml:"outage"`
}

// Skew sets one node's clock.
type Skew struct {
	Node     string        `yaml:"node"`
	Offset   time.Duration `yaml:"offset"`
	DriftPPM float64       `yaml:"drift_ppm"`
}

// Models lists the accepted values of Check.
func Models() []string {
	m := append([]string{"auto"}, check.Models...)
	for _, t := range check.TxnModels {
		if !contains(m, t) {
			m = append(m, t)
		}
	}
	return m
}

// Load reads a YAML config (yamlfile.Decode: unknown fields are errors
// naming the file, the line and the valid fields). The protocol settings
// and the workload are decoded too, so that their errors name the file.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return parse(path, data)
}

// Parse decodes a YAML config as Load does.
func Parse(data []byte) (Config, error) { return parse("", data) }

func parse(file string, data []byte) (Config, error) {
	var c Config
	if err := yamlfile.Decode(file, data, &c, "scenario"); err != nil {
		return Config{}, err
	}
	// Without a protocol the file's settings wait for --protocol.
	if c.SettingsYAML.Kind != 0 && c.Protocol != "" {
		if _, _, err := c.Spec().Resolve(); err != nil {
			return Config{}, yamlfile.InFile(file, fmt.Errorf("settings: %w", err))
		}
	}
	if c.Workload.Kind != 0 {
		if _, err := c.workloadSpec(); err != nil {
			return Config{}, yamlfile.InFile(file, err)
		}
	}
	return c, nil
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults() {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.World == "" {
		c.World = "globlease4"
	}
	if c.Protocol == "" && c.Settings == nil {
		if d := protocol.Default(); d != nil {
			c.Protocol = d.Name
		}
	}
	if c.Clients == 0 {
		c.Clients = 50
	}
	if c.Rate == 0 && !c.ClosedLoop {
		c.Rate = 1000
	}
	if c.ClosedLoop {
		c.Rate = 0
	}
	if c.Duration == 0 {
		c.Duration = 60 * time.Second
	}
	if c.ClientTimeout == 0 {
		c.ClientTimeout = 10 * time.Second
	}
	if c.ThresholdMs == 0 {
		c.ThresholdMs = 500
	}
	if c.Check == "" {
		c.Check = "auto"
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
}

// resolved is a validated Config turned into the objects a run needs.
type resolved struct {
	cfg      Config
	world    *topo.World
	topo     *topo.Topology
	proto    protocol.Keyspace
	def      *protocol.Definition
	workload workload.Spec
	// txns is Config.Transactions with defaults filled, or nil.
	txns   *workload.TxnSpec
	faults []resolvedFault
	vms    []cost.VM
}

// resolve validates c (after EnsureDefaults). Every error names the field
// and, where there is a fixed set, the valid values.
func resolve(c Config) (*resolved, error) {
	r := &resolved{cfg: c}
	w := c.WorldDef
	if w == nil {
		var err error
		if w, err = topo.Resolve(c.World); err != nil {
			return nil, fmt.Errorf("world: %w", err)
		}
	} else if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	r.world = w
	r.topo = topo.NewTopology(w)
	for i, v := range c.VMs {
		reg := w.RegionIndex(v.Region)
		switch {
		case reg < 0:
			return nil, fmt.Errorf("vms[%d].region: %q is not a region of world %s", i, v.Region, w.Name)
		case v.Count < 1 || v.Size == "" || v.Role == "":
			return nil, fmt.Errorf("vms[%d]: role, size and a count of at least 1 are required", i)
		}
		r.vms = append(r.vms, cost.VM{Region: reg, Role: v.Role, Size: v.Size, Count: v.Count})
	}
	if c.Clients < 1 {
		return nil, fmt.Errorf("clients: %d; must be at least 1", c.Clients)
	}
	if c.OpsPerClient < 0 {
		return nil, fmt.Errorf("ops_per_client: %d; must be >= 0 (0: no limit)", c.OpsPerClient)
	}
	if c.Batch < 1 {
		return nil, fmt.Errorf("batch: %d; must be at least 1", c.Batch)
	}
	if c.Rate < 0 {
		return nil, fmt.Errorf("rate: %g; must be >= 0 requests/s (0: closed loop)", c.Rate)
	}
	if c.ServiceTime < 0 {
		return nil, fmt.Errorf("service_time %s: must not be negative", c.ServiceTime)
	}
	if c.Duration < 0 || c.ClientTimeout < 0 {
		return nil, fmt.Errorf("duration and client_timeout must not be negative")
	}
	if err := c.validateRateSteps(); err != nil {
		return nil, err
	}
	if c.Warmup < 0 || c.Warmup >= c.Duration {
		return nil, fmt.Errorf("warmup: %s; must be at least 0 and shorter than duration %s", c.Warmup, c.Duration)
	}
	if !(c.RegionKeys >= 0 && c.RegionKeys <= 1) {
		return nil, fmt.Errorf("region_keys: %g; must be a share in [0, 1]", c.RegionKeys)
	}
	if c.ThresholdMs < 0 {
		return nil, fmt.Errorf("threshold_ms: %g; must not be negative", c.ThresholdMs)
	}
	if !contains(Models(), c.Check) {
		return nil, fmt.Errorf("check: unknown model %q (valid: %s)", c.Check, strings.Join(Models(), ", "))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"net.loss", c.Net.Loss}, {"net.duplicate", c.Net.Duplicate}, {"net.reorder", c.Net.Reorder}} {
		if !(p.v >= 0 && p.v <= 1) {
			return nil, fmt.Errorf("%s: %g; must be a probability in [0, 1]", p.name, p.v)
		}
	}
	if err := c.StoreFaults.Validate(); err != nil {
		return nil, err
	}
	if c.Clock.MaxOffset < 0 || c.Clock.MaxDriftPPM < 0 || c.Clock.MaxDriftPPM >= 1e6 {
		return nil, fmt.Errorf("clock: max_offset must be >= 0 and max_drift_ppm in [0, 1e6)")
	}
	var err error
	if r.def, r.proto, err = newProtocol(c, r.topo); err != nil {
		return nil, err
	}
	if c.Batch > 1 && !r.def.Locking {
		return nil, fmt.Errorf("batch: %d; only protocols whose clients acquire keys batch operations (%s does not)", c.Batch, r.def.Name)
	}
	if r.workload, err = c.workloadSpec(); err != nil {
		return nil, err
	}
	if err := r.resolveTxns(); err != nil {
		return nil, err
	}
	for i, f := range c.Faults {
		rf, err := resolveFault(f, r.topo)
		if err != nil {
			return nil, fmt.Errorf("faults[%d]: %w", i, err)
		}
		r.faults = append(r.faults, rf)
	}
	return r, nil
}

// validateRateSteps checks RateSteps (after EnsureDefaults).
func (c Config) validateRateSteps() error {
	if len(c.RateSteps) > 0 && c.Rate == 0 {
		return fmt.Errorf("rate_steps: need an open-loop rate > 0 to step from (closed_loop is set)")
	}
	for i, st := range c.RateSteps {
		switch {
		case !(st.Rate > 0) || math.IsInf(st.Rate, 0):
			return fmt.Errorf("rate_steps[%d]: rate %g; must be > 0 requests/s", i, st.Rate)
		case st.At <= 0 || st.At >= c.Duration:
			return fmt.Errorf("rate_steps[%d]: at %s; must be after 0s and before duration %s", i, st.At, c.Duration)
		case i > 0 && st.At <= c.RateSteps[i-1].At:
			return fmt.Errorf("rate_steps[%d]: at %s; must be after rate_steps[%d] (at %s)", i, st.At, i-1, c.RateSteps[i-1].At)
		}
	}
	return nil
}

// rateAt is the offered rate at t and when it next changes (-1: never).
func (c Config) rateAt(t time.Duration) (rate float64, next time.Duration) {
	rate, next = c.Rate, -1
	for _, st := range c.RateSteps {
		if st.At > t {
			return rate, st.At
		}
		rate = st.Rate
	}
	return rate, next
}

// workloadSpec is the preset named by the flag or the YAML (default b) with
// the YAML's overrides decoded over it.
func (c Config) workloadSpec() (workload.Spec, error) {
	name := c.WorkloadPreset
	var over struct {
		Preset string `yaml:"preset"`
	}
	if c.Workload.Kind != 0 {
		// Only the preset here; the full override is decoded below.
		var m map[string]any
		if err := c.Workload.Decode(&m); err != nil {
			return workload.Spec{}, fmt.Errorf("workload: %w", err)
		}
		if p, ok := m["preset"].(string); ok {
			over.Preset = p
		}
	}
	if name == "" {
		name = over.Preset
	}
	if name == "" {
		name = "b"
	}
	spec, err := workload.Preset(name) // its errors name the workload
	if err != nil {
		return workload.Spec{}, err
	}
	if c.Workload.Kind != 0 {
		var full struct {
			Preset        string `yaml:"preset"`
			workload.Spec `yaml:",inline"`
		}
		full.Spec = spec
		// Decode strictly so a misspelt field is an error naming it.
		if err := yamlfile.DecodeNode(&c.Workload, &full, "workload"); err != nil {
			return workload.Spec{}, err
		}
		spec = full.Spec
	}
	spec.EnsureDefaults()
	if err := spec.Validate(); err != nil {
		return workload.Spec{}, err
	}
	return spec, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ResolveWorld resolves the config's world (WorldDef, else the preset or file).
func (c Config) ResolveWorld() (*topo.World, error) {
	if c.WorldDef != nil {
		if err := c.WorldDef.Validate(); err != nil {
			return nil, fmt.Errorf("world: %w", err)
		}
		return c.WorldDef, nil
	}
	if c.World == "" {
		c.World = "globlease4"
	}
	w, err := topo.Resolve(c.World)
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	return w, nil
}

// WorkloadSpec is the config's YCSB workload with defaults and overrides
// applied, validated.
func (c Config) WorkloadSpec() (workload.Spec, error) { return c.workloadSpec() }
