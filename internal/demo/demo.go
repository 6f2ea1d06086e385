// Package demo is `lightcone demo`, the first thing a newcomer runs: a real
// multi-region cluster on loopback (one process per node, WAN emulation
// from a preset world), loaded with data and driven by YCSB clients in every
// region, once per keyspace configuration, ending with per-region latency
// tables side by side with the network floor.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/workload"
)

// Options configures a demo run.
type Options struct {
	World            string        // preset or file; default globlease4
	NodesPerRegion   int           // default 1: one process per region
	PhaseDuration    time.Duration // per configuration; default 15s
	ClientsPerRegion int           // default 4
	RatePerClient    float64       // requests/s per client; default 20 (GlobLease Table II's range)
	Workload         string        // YCSB preset; default b (95% reads)
	Records          int           // default 1000
	Keep             bool          // keep the data and logs directory
	Binary           string        // the lightcone binary; default this executable
	Out              io.Writer
}

// Phase is one keyspace configuration the demo measures.
type Phase struct {
	Name        string
	Read, Write wire.Level
}

// Phases are the configurations compared side by side.
func Phases() []Phase {
	return []Phase{
		{Name: "quorum ONE/ALL", Read: wire.One, Write: wire.All},
		{Name: "quorum QUORUM/QUORUM", Read: wire.Quorum, Write: wire.Quorum},
	}
}

func (o *Options) ensureDefaults() error {
	if o.World == "" {
		o.World = "globlease4"
	}
	if o.NodesPerRegion == 0 {
		o.NodesPerRegion = 1
	}
	if o.PhaseDuration == 0 {
		o.PhaseDuration = 15 * time.Second
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
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Binary = exe
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

type nodeProc struct {
	name                   string
	region                 int
	peer, resp, http, grpc string
	cmd                    *exec.Cmd
	client                 *redis.Client
}

// Run runs the demo; ctx cancellation (Ctrl-C) stops it early, still
// cleaning up every process and, unless Keep, the data.
func Run(ctx context.Context, o Options) (err error) {
	if err := o.ensureDefaults(); err != nil {
		return err
	}
	w, err := topo.Resolve(o.World)
	if err != nil {
		return err
	}
	w.NodesPerRegion = o.NodesPerRegion
	tp := topo.NewTopology(w)
	spec, err := workload.Preset(o.Workload)
	if err != nil {
		return err
	}
	spec.RecordCount = o.Records
	spec.EnsureDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "lightcone-demo-")
	if err != nil {
		return err
	}
	defer func() {
		if o.Keep {
			fmt.Fprintf(o.Out, "kept data and logs in %s\n", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}()
	out := o.Out
	fmt.Fprintf(out, "Lightcone demo: world %s, %d regions × %d node(s), WAN emulation on, YCSB workload %s, %d clients/region at %g req/s each\n",
		w.Name, len(w.Regions), w.NodesPerRegion, o.Workload, o.ClientsPerRegion, o.RatePerClient)

	nodes, err := startCluster(ctx, o, w, tp, dir)
	defer stopCluster(nodes)
	if err != nil {
		return err
	}
	if err := load(ctx, out, nodes, spec); err != nil {
		return err
	}
	var results []*phaseResult
	for _, ph := range Phases() {
		if ctx.Err() != nil {
			break
		}
		res, err := runPhase(ctx, o, ph, nodes, tp, spec)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	report(out, w, tp, results)
	if ctx.Err() != nil {
		return fmt.Errorf("demo interrupted: %w (partial results above)", ctx.Err())
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startCluster writes the cluster config and starts one process per node.
func startCluster(ctx context.Context, o Options, w *topo.World, tp *topo.Topology, dir string) ([]*nodeProc, error) {
	worldPath := filepath.Join(dir, "world.yaml")
	wb, err := yaml.Marshal(w)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(worldPath, wb, 0o644); err != nil {
		return nil, err
	}
	var nodes []*nodeProc
	var b strings.Builder
	fmt.Fprintf(&b, "cluster:\n  name: demo\n  world: %q\n  wan_emulation: true\n  nodes:\n", worldPath)
	for _, n := range tp.Nodes {
		np := &nodeProc{name: n.Name, region: n.Region}
		for _, a := range []*string{&np.peer, &np.resp, &np.http, &np.grpc} {
			if *a, err = freeAddr(); err != nil {
				return nodes, err
			}
		}
		fmt.Fprintf(&b, "    %s: {peer: %q, resp: %q, grpc: %q, http: %q}\n", np.name, np.peer, np.resp, np.grpc, np.http)
		nodes = append(nodes, np)
	}
	b.WriteString("keyspace:\n  protocol: quorum\n  replicas_per_region: 1\nsync: everysec\n")
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		return nodes, err
	}
	fmt.Fprintf(o.Out, "starting %d nodes (config %s)...\n", len(nodes), cfgPath)
	for _, np := range nodes {
		logf, err := os.Create(filepath.Join(dir, np.name+".log"))
		if err != nil {
			return nodes, err
		}
		np.cmd = exec.Command(o.Binary, "server", "--config", cfgPath, "--node", np.name, "--data-dir", filepath.Join(dir, np.name))
		np.cmd.Stdout, np.cmd.Stderr = logf, logf
		np.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the demo
		if err := np.cmd.Start(); err != nil {
			return nodes, fmt.Errorf("start %s: %w", np.name, err)
		}
		np.client = redis.NewClient(&redis.Options{Addr: np.resp, Protocol: 2, MaxRetries: -1,
			ReadTimeout: 30 * time.Second, PoolSize: 4 * o.ClientsPerRegion})
	}
	// Ready when every node answers and an ALL write from each succeeds
	// (so every peer link is up).
	deadline := time.Now().Add(30 * time.Second)
	for _, np := range nodes {
		for {
			if ctx.Err() != nil {
				return nodes, ctx.Err()
			}
			if np.client.Do(ctx, "LC.SET", "demo:ready:"+np.name, "1", "LEVEL", "ALL").Err() == nil {
				break
			}
			if np.cmd.ProcessState != nil {
				return nodes, fmt.Errorf("node %s exited; see %s.log", np.name, np.name)
			}
			if time.Now().After(deadline) {
				return nodes, fmt.Errorf("cluster not ready after 30s; see the logs in %s", dir)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fmt.Fprintf(o.Out, "cluster up: %d nodes connected\n", len(nodes))
	return nodes, nil
}

func stopCluster(nodes []*nodeProc) {
	for _, np := range nodes {
		if np.client != nil {
			_ = np.client.Close()
		}
		if np.cmd != nil && np.cmd.Process != nil {
			_ = np.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, np := range nodes {
		if np.cmd == nil || np.cmd.Process == nil {
			continue
		}
		done := make(chan struct{})
		go func() { _ = np.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = np.cmd.Process.Kill()
			<-done
		}
	}
}

// load writes every record at ALL from the first node.
func load(ctx context.Context, out io.Writer, nodes []*nodeProc, spec workload.Spec) error {
	g, err := workload.NewGenerator(spec)
	if err != nil {
		return err
	}
	keys := g.LoadKeys()
	value := strings.Repeat("x", min(spec.ValueSize, 1024))
	c := nodes[0].client
	start := time.Now()
	const batch = 200
	for i := 0; i < len(keys); i += batch {
		pipe := c.Pipeline()
		for _, k := range keys[i:min(i+batch, len(keys))] {
			pipe.Do(ctx, "LC.SET", k, value, "LEVEL", "ALL")
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	fmt.Fprintf(out, "loaded %d records at ALL in %.1fs\n", len(keys), time.Since(start).Seconds())
	return nil
}

type phaseResult struct {
	phase Phase
	lat   [][]*hdrhistogram.Histogram // [region][0 read, 1 write] µs
	ops   int64
	errs  int64
}

// runPhase drives the workload from every region's clients for the phase.
func runPhase(ctx context.Context, o Options, ph Phase, nodes []*nodeProc, tp *topo.Topology, spec workload.Spec) (*phaseResult, error) {
	g, err := workload.NewGenerator(spec)
	if err != nil {
		return nil, err
	}
	var genMu sync.Mutex
	res := &phaseResult{phase: ph, lat: make([][]*hdrhistogram.Histogram, len(tp.World.Regions))}
	var histMu sync.Mutex
	for r := range res.lat {
		res.lat[r] = []*hdrhistogram.Histogram{hdrhistogram.New(1, 60_000_000, 3), hdrhistogram.New(1, 60_000_000, 3)}
	}
	var ops, errs atomic.Int64
	pctx, cancel := context.WithTimeout(ctx, o.PhaseDuration)
	defer cancel()
	var wg sync.WaitGroup
	for _, np := range nodes {
		for i := 0; i < o.ClientsPerRegion; i++ {
			wg.Add(1)
			seed := uint64(np.region*1000 + i + 1)
			go func(np *nodeProc) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(len(ph.Name))))
				next := time.Now()
				for {
					next = next.Add(workload.PoissonGap(rng, o.RatePerClient))
					select {
					case <-pctx.Done():
						return
					case <-time.After(time.Until(next)):
					}
					genMu.Lock()
					op := g.Next(rng)
					genMu.Unlock()
					start := time.Now()
					var err error
					isWrite := op.Kind == workload.Update || op.Kind == workload.Insert
					if isWrite {
						err = np.client.Do(pctx, "LC.SET", op.Key, "v", "LEVEL", ph.Write.String()).Err()
					} else {
						err = np.client.Do(pctx, "LC.GET", op.Key, "LEVEL", ph.Read.String()).Err()
					}
					d := time.Since(start)
					if err != nil && !errors.Is(err, redis.Nil) {
						if pctx.Err() == nil {
							errs.Add(1)
						}
						continue
					}
					ops.Add(1)
					k := 0
					if isWrite {
						k = 1
					}
					histMu.Lock()
					_ = res.lat[np.region][k].RecordValue(max(1, d.Microseconds()))
					histMu.Unlock()
				}
			}(np)
		}
	}
	// Progress: a bar on a terminal, a line every 5 s otherwise.
	tty := isTerminal(o.Out)
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case <-pctx.Done():
			break loop
		case <-tick.C:
			el := time.Since(start)
			if tty {
				frac := min(1, el.Seconds()/o.PhaseDuration.Seconds())
				bar := strings.Repeat("█", int(frac*30)) + strings.Repeat("·", 30-int(frac*30))
				fmt.Fprintf(o.Out, "\r%-22s %s %3.0fs/%.0fs  %6d ops  %4d errors", ph.Name, bar, el.Seconds(), o.PhaseDuration.Seconds(), ops.Load(), errs.Load())
			} else if int(el.Seconds())%5 == 0 {
				fmt.Fprintf(o.Out, "%s: %.0fs/%.0fs, %d ops, %d errors\n", ph.Name, el.Seconds(), o.PhaseDuration.Seconds(), ops.Load(), errs.Load())
			}
		}
	}
	wg.Wait()
	if tty {
		fmt.Fprintln(o.Out)
	}
	res.ops, res.errs = ops.Load(), errs.Load()
	return res, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// report prints, per region and operation, each phase's p50/p99 beside the
// floor of its consistency level.
func report(out io.Writer, w *topo.World, tp *topo.Topology, results []*phaseResult) {
	if len(results) == 0 {
		return
	}
	per := make([]int, len(w.Regions))
	for i := range per {
		per[i] = 1
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
		for k, op := range []string{"read", "write"} {
			line := rg.Name + "\t" + op + "\t"
			for _, r := range results {
				h := r.lat[reg][k]
				l := r.phase.Read
				if k == 1 {
					l = r.phase.Write
				}
				fl := quorum.Floor(per, l, reg, base)
				if h.TotalCount() == 0 {
					line += "-\t-\t" + fmt.Sprintf("%.1f", float64(fl)/1e6) + "\t"
					continue
				}
				line += ms(h.ValueAtQuantile(50)) + "\t" + ms(h.ValueAtQuantile(99)) + "\t" + fmt.Sprintf("%.1f", float64(fl)/1e6) + "\t"
			}
			fmt.Fprintln(tw, line)
		}
	}
	_ = tw.Flush()
	for _, r := range results {
		fmt.Fprintf(out, "%s: %d operations, %d errors\n", r.phase.Name, r.ops, r.errs)
	}
}
