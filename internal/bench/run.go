package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/scenario"
)

// Runtimes lists the valid --runtime values.
func Runtimes() []string { return []string{"sim", "real", "both"} }

// Options controls a run.
type Options struct {
	Runtime   string            // sim (default), real, or both
	Seed      uint64            // default 1
	Overrides map[string]string // see Overrides()
	Progress  io.Writer         // progress lines; nil: none
	Binary    string            // lightcone binary for the real runtime; default this executable
}

// Overrides lists the parameters --set accepts, with what they change.
func Overrides() map[string]string {
	return map[string]string{
		"duration":            "simulated (or real) time clients send requests, e.g. 30s",
		"warmup":              "the first part of duration that is not measured (simulator), e.g. 10s; 0 measures all",
		"clients":             "number of clients (simulator)",
		"rate":                "total requests/s (simulator; 0: closed loop)",
		"records":             "records loaded before the run",
		"ops_per_client":      "operations each client runs, then the run ends (simulator; 0: run for duration)",
		"threshold_ms":        "latency threshold of the 'above' share",
		"read":                "read consistency level of every series",
		"write":               "write consistency level of every series",
		"replicas_per_region": "replicas of each key per region",
		"sweep":               "the sweep values to run, a comma-separated subset of the experiment's, e.g. 25,50",
	}
}

func overrideNames() string {
	var names []string
	for k := range Overrides() {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Point is one run: a series at one sweep value on one runtime.
type Point struct {
	Series  string           `json:"series"`
	X       float64          `json:"x,omitempty"` // sweep value; 0 without a sweep
	Runtime string           `json:"runtime"`
	Result  *scenario.Result `json:"result,omitempty"`
	Error   string           `json:"error,omitempty"`
	// Hists are the latency histograms behind Result (µs), by "region/op".
	Hists map[string]*hdrhistogram.Histogram `json:"-"`
}

// Report is an experiment's results.
type Report struct {
	Experiment  *Experiment `json:"-"`
	Name        string      `json:"experiment"`
	Runtime     string      `json:"runtime"`
	Seed        uint64      `json:"seed"`
	Overrides   map[string]string
	Points      []Point   `json:"points"`
	Calibration []PairRTT `json:"calibration,omitempty"`
	Incomplete  bool      `json:"incomplete"`
	Started     time.Time `json:"started"`
	Elapsed     string    `json:"elapsed"`
}

// applyOverrides sets the --set parameters on c.
func applyOverrides(c *scenario.Config, ov map[string]string) error {
	keys := make([]string, 0, len(ov))
	for k := range ov {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := ov[k]
		bad := func(want string) error {
			return fmt.Errorf("bench: --set %s=%s: want %s", k, v, want)
		}
		switch k {
		case "duration":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("a positive duration such as 30s")
			}
			c.Duration = d
		case "warmup":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return bad("a duration ≥ 0 such as 10s")
			}
			c.Warmup = d
		case "clients":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("a whole number ≥ 1")
			}
			c.Clients = n
		case "rate":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || math.IsNaN(f) {
				return bad("requests/s ≥ 0")
			}
			c.Rate, c.ClosedLoop = f, f == 0
		case "records":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("a whole number ≥ 1")
			}
			if err := setWorkloadField(c, "record_count", n); err != nil {
				return err
			}
		case "ops_per_client":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return bad("a whole number ≥ 0")
			}
			c.OpsPerClient = n
		case "threshold_ms":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return bad("milliseconds > 0")
			}
			c.ThresholdMs = f
		case "sweep":
			// Which points run, not how (Experiment.xs).
		case "read", "write", "replicas_per_region":
			// The settings of those names, for the series whose protocols
			// have them; their errors name them.
			if c.HasSetting(k) {
				c.Set = append(c.Set, k+"="+v)
			}
		default:
			return fmt.Errorf("bench: --set %s: unknown parameter (valid: %s)", k, overrideNames())
		}
	}
	return nil
}

// setWorkloadField sets one field of the config's workload YAML.
func setWorkloadField(c *scenario.Config, field string, v any) error {
	m := map[string]any{}
	if c.Workload.Kind != 0 {
		if err := c.Workload.Decode(&m); err != nil {
			return err
		}
	}
	m[field] = v
	c.Workload = workloadNode(m)
	return nil
}

// configFor is the simulation of one point, before the runtime.
func (e *Experiment) configFor(s Series, x float64, opts Options) (scenario.Config, error) {
	c := e.Base
	// The series first (it picks the protocol), then the sweep's point.
	s.Apply(&c)
	if e.Sweep != nil {
		e.Sweep.Apply(&c, x)
	}
	c.Seed = opts.Seed
	if err := applyOverrides(&c, opts.Overrides); err != nil {
		return c, err
	}
	return c, nil
}

// Validate checks opts against e without running anything.
func (e *Experiment) Validate(opts *Options) error {
	if opts.Runtime == "" {
		opts.Runtime = "sim"
		if e.Calibrate {
			opts.Runtime = "real"
		}
	}
	if !slices.Contains(Runtimes(), opts.Runtime) {
		return fmt.Errorf("bench: unknown runtime %q (valid: %s)", opts.Runtime, strings.Join(Runtimes(), ", "))
	}
	if e.Calibrate && opts.Runtime != "real" {
		return fmt.Errorf("bench: %s measures the real runtime's WAN emulation: use --runtime real", e.Name)
	}
	if opts.Runtime != "sim" && e.Real == nil {
		return fmt.Errorf("bench: %s has no real-runtime scale; run it with --runtime sim", e.Name)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if err := e.Unavailable(); err != nil {
		return err
	}
	xs, err := e.xs(*opts)
	if err != nil {
		return err
	}
	// Every point's config must resolve.
	check := *opts
	if opts.Runtime == "real" {
		check = realOptions(*opts)
	}
	for _, x := range xs {
		for _, s := range e.Series {
			c, err := e.configFor(s, x, check)
			if err != nil {
				return err
			}
			if _, err := scenario.Check(c); err != nil {
				return fmt.Errorf("bench: %s, series %q: %w", e.Name, s.Label, err)
			}
		}
	}
	return nil
}

// xs are the sweep values to run: the sweep's, or the subset --set
// sweep=v1,v2 names; {0} without a sweep.
func (e *Experiment) xs(opts Options) ([]float64, error) {
	list, ok := opts.Overrides["sweep"]
	switch {
	case e.Sweep == nil && ok:
		return nil, fmt.Errorf("bench: --set sweep=%s: %s has no sweep", list, e.Name)
	case e.Sweep == nil:
		return []float64{0}, nil
	case !ok:
		return e.Sweep.Values, nil
	}
	var xs []float64
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !slices.Contains(e.Sweep.Values, v) {
			return nil, fmt.Errorf("bench: --set sweep=%s: %q is not one of %s's values of %s (%v)", list, f, e.Name, e.Sweep.Param, e.Sweep.Values)
		}
		xs = append(xs, v)
	}
	return xs, nil
}

// Run runs every point of e on the chosen runtimes. When ctx is cancelled
// it stops at once (stopping any cluster it started) and returns the
// points done so far in a report marked incomplete, with ctx's error.
func Run(ctx context.Context, e *Experiment, opts Options) (*Report, error) {
	if err := e.Validate(&opts); err != nil {
		return nil, err
	}
	rep := &Report{Experiment: e, Name: e.Name, Runtime: opts.Runtime, Seed: opts.Seed, Overrides: opts.Overrides, Started: time.Now()}
	defer func() { rep.Elapsed = time.Since(rep.Started).Round(time.Millisecond).String() }()
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "[%6.1fs] "+format+"\n", append([]any{time.Since(rep.Started).Seconds()}, args...)...)
		}
	}
	if e.Calibrate {
		if err := calibrate(ctx, e, opts, rep, progress); err != nil {
			rep.Incomplete = true
			return rep, err
		}
		return rep, nil
	}
	xs, _ := e.xs(opts) // checked in Validate
	total := len(xs) * len(e.Series)
	if opts.Runtime == "sim" || opts.Runtime == "both" {
		i := 0
		for _, x := range xs {
			for _, s := range e.Series {
				if ctx.Err() != nil {
					rep.Incomplete = true
					return rep, ctx.Err()
				}
				i++
				c, _ := e.configFor(s, x, opts)
				progress("sim %d/%d: %s%s", i, total, s.Label, e.xLabel(x))
				res, err := scenario.Run(c)
				p := Point{Series: s.Label, X: x, Runtime: "sim", Result: res}
				if err != nil {
					p.Error = err.Error()
				} else {
					p.Hists = res.Histograms
				}
				rep.Points = append(rep.Points, p)
			}
		}
	}
	if opts.Runtime == "real" || opts.Runtime == "both" {
		if err := runReal(ctx, e, opts, rep, progress); err != nil {
			rep.Incomplete = true
			return rep, err
		}
	}
	return rep, nil
}

func (e *Experiment) xLabel(x float64) string {
	if e.Sweep == nil {
		return ""
	}
	return fmt.Sprintf(", %s = %g", e.Sweep.Param, x)
}

var errNoReal = errors.New("bench: real runtime not available")

// Unavailable says why e cannot run in this build: a protocol it
// requires (Experiment.Requires) is not registered. Nil: it can.
func (e *Experiment) Unavailable() error {
	for _, name := range e.Requires {
		if _, err := protocol.Lookup(name); err != nil {
			return fmt.Errorf("bench: %s needs protocol %s, which is not registered (not built yet?): %w", e.Name, name, err)
		}
	}
	return nil
}

// Runtimes lists the runtimes e accepts (what `bench list` shows):
// calibrations run only on the real runtime; other experiments in the
// simulator, and on real processes too when they have a real scale;
// none while a protocol it requires is missing (Unavailable).
func (e *Experiment) Runtimes() []string {
	switch {
	case e.Unavailable() != nil:
		return nil
	case e.Calibrate:
		return []string{"real"}
	case e.Real != nil:
		return []string{"sim", "real", "both"}
	}
	return []string{"sim"}
}
