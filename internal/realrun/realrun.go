// Package realrun runs a YCSB experiment on a real local cluster
// (localcluster) the way internal/scenario runs it in simulation: load the
// records, drive clients in every region against their region's nodes, one
// operation at a time per client, and report per-region latency beside the
// network floor in a scenario.Result, so the simulator's and the real
// runtime's numbers can be set side by side.
//
// Latency is measured through the real client path (RESP over loopback).
// Service latency runs from when an operation is sent to when its last
// reply arrives; for open-loop runs, intended latency runs from the
// operation's scheduled Poisson arrival instead, which corrects for
// coordinated omission (a slow reply delays the client's later operations,
// and that delay is counted).
package realrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/workload"
)

// Spec is one real-runtime experiment. Zero fields take the defaults noted.
type Spec struct {
	// World must be the cluster's world (same regions, same nodes per
	// region). Default: the cluster's.
	World *topo.World
	// Workload is a YCSB core workload; Run fills its defaults and
	// validates it.
	Workload workload.Spec
	// ClientsPerRegion is the number of clients in each region, spread
	// round-robin over the region's nodes. Default 4.
	ClientsPerRegion int
	// RatePerClient is each client's Poisson arrival rate in requests/s
	// (open loop: arrivals queue while the client is busy). 0: closed loop,
	// each client sends its next operation as soon as the last returns.
	RatePerClient float64
	// Duration is how long clients start operations; those in flight at
	// the end finish (drain). Default 15s.
	Duration time.Duration
	// Read and Write are the levels every request names. LevelDefault: the
	// cluster's configured levels (LEVEL is then left out of the request).
	Read, Write wire.Level
	// Seed seeds the clients' random sources. The run is not reproducible
	// (real time and a shared key generator decide the order), but the seed
	// is reported. Default 1.
	Seed uint64
	// ThresholdMs: rows give the share of operations slower than this.
	// Default 500.
	ThresholdMs float64
	// SkipLoad skips loading the records: an earlier Run on the same
	// cluster already did.
	SkipLoad bool
	// Keyspace, if set, is the keyspace every request addresses (RESP
	// LC.KEYSPACE) instead of the default one.
	Keyspace string
	// Policy is the keyspace's policy in one line, for the report.
	Policy string
	// Floor, if set, is the network time an operation from a client in a
	// region cannot avoid (the keyspace's protocol.Keyspace.Floor); the
	// rows' floors are 0 without it.
	Floor func(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration
	// PrimeReads, before the measured run, reads every record once through
	// a node of every region, unmeasured. A lease keyspace grants a region
	// its lease on a key's first read there; priming measures the run as a
	// long-running cluster would see it, with leases held.
	PrimeReads bool
	// Locking brackets every operation with LC.ACQUIRE and LC.RELEASE of
	// its keys, on a connection of the client's own (protocols whose
	// Definition.Locking is set, such as rc: reads and writes need a
	// hold). The records are then not loaded (a load would need a hold
	// per record): reads of a record not yet written find nothing.
	Locking bool
	// Progress receives a line every 5s, or a progress bar if it is a
	// terminal, and the load's summary. Default: discarded.
	Progress io.Writer
}

// Defaults of Spec's zero fields.
const (
	DefaultClientsPerRegion = 4
	DefaultDuration         = 15 * time.Second
	DefaultThresholdMs      = 500
)

// maxLatencyUs bounds the histograms, as the simulator's: one hour.
const maxLatencyUs = int64(time.Hour / time.Microsecond)

// loadBatch is the number of writes per load pipeline, and loadWorkers the
// number of pipelines in flight at once.
const (
	loadBatch   = 200
	loadWorkers = 8
)

func (s *Spec) ensureDefaults(c *localcluster.Cluster) error {
	cw := c.World()
	if s.World == nil {
		s.World = cw
	}
	if s.ClientsPerRegion == 0 {
		s.ClientsPerRegion = DefaultClientsPerRegion
	}
	if s.Duration == 0 {
		s.Duration = DefaultDuration
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.ThresholdMs == 0 {
		s.ThresholdMs = DefaultThresholdMs
	}
	if s.Progress == nil {
		s.Progress = io.Discard
	}
	s.Workload.EnsureDefaults()
	switch {
	case len(s.World.Regions) != len(cw.Regions) || s.World.NodesPerRegion != cw.NodesPerRegion:
		return fmt.Errorf("realrun: world %s (%d regions × %d nodes) is not the cluster's %s (%d regions × %d nodes)",
			s.World.Name, len(s.World.Regions), s.World.NodesPerRegion, cw.Name, len(cw.Regions), cw.NodesPerRegion)
	case s.ClientsPerRegion < 1:
		return fmt.Errorf("realrun: clients per region: %d; must be at least 1", s.ClientsPerRegion)
	case !(s.RatePerClient >= 0):
		return fmt.Errorf("realrun: rate per client: %g; must be >= 0 requests/s (0: closed loop)", s.RatePerClient)
	case s.Duration < 0:
		return fmt.Errorf("realrun: duration: %s; must not be negative", s.Duration)
	case s.ThresholdMs < 0:
		return fmt.Errorf("realrun: threshold: %gms; must not be negative", s.ThresholdMs)
	}
	if err := s.Workload.Validate(); err != nil {
		return fmt.Errorf("realrun: %w", err)
	}
	return nil
}

// Operation classes: the simulator's report series, shared so that the
// two runtimes' rows line up.
const numClasses = scenario.NumOpClasses

func classOf(k workload.OpKind) int {
	c, _ := scenario.OpClass(k)
	return c
}

// step is one request of an operation (a scan or a read-modify-write takes
// several).
type step struct {
	write bool
	key   string
}

// runner is one Run in progress.
type runner struct {
	s           Spec
	read, write wire.Level // effective levels (the keyspace's when LevelDefault)
	value       string
	nodes       []localcluster.Node
	clients     []*redis.Client // one per node, sized to its clients

	genMu sync.Mutex
	gen   *workload.Generator

	mu     sync.Mutex
	lat    [][numClasses]*hdrhistogram.Histogram // [region][class] service latency, µs
	intent [][numClasses]*hdrhistogram.Histogram // from the scheduled arrival, µs
	errs   map[string]int
	// perSecond[class][s]: service latencies of operations completing in
	// second s of the run (the time series), at two significant digits.
	perSecond [numClasses][]*hdrhistogram.Histogram

	ops, failed atomic.Int64
}

// Run loads s.Workload's records at ALL (unless SkipLoad) and drives
// s.ClientsPerRegion clients in every region for s.Duration. It returns the
// per region × operation latencies with their floors and an "all/all" row,
// and the raw service-latency histograms (µs) keyed "region/op" (and
// "all/all"), for CDFs; both hold only operation kinds that completed. The
// Result also carries the histograms (Histograms) and the per-second time
// series (Seconds), as the simulator's does.
//
// If ctx ends first, Run returns what was measured so far (a Result with
// no rows if it ended during the load) and an error wrapping ctx.Err().
func Run(ctx context.Context, c *localcluster.Cluster, s Spec) (*scenario.Result, map[string]*hdrhistogram.Histogram, error) {
	if err := s.ensureDefaults(c); err != nil {
		return nil, nil, err
	}
	began := time.Now()
	r, err := newRunner(c, s)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	// Closing the clients fails every request in flight at once: go-redis
	// does not watch ctx while it waits for a reply.
	stop := context.AfterFunc(ctx, r.close)
	defer stop()

	if s.Locking && !s.SkipLoad {
		fmt.Fprintf(r.s.Progress, "not loading records: every access to this keyspace needs a hold (LC.ACQUIRE); reads of unwritten records find nothing\n")
	}
	if !s.SkipLoad && !s.Locking {
		if err := r.load(ctx); err != nil {
			if ctx.Err() != nil {
				res, hists := r.result(0)
				res.RealTime = time.Since(began)
				return res, hists, fmt.Errorf("realrun: interrupted during load: %w", ctx.Err())
			}
			return nil, nil, err
		}
	}
	if s.PrimeReads {
		if err := r.prime(ctx); err != nil {
			if ctx.Err() != nil {
				res, hists := r.result(0)
				res.RealTime = time.Since(began)
				return res, hists, fmt.Errorf("realrun: interrupted while priming: %w", ctx.Err())
			}
			return nil, nil, err
		}
	}
	if err := r.warm(ctx); err != nil {
		if ctx.Err() != nil {
			res, hists := r.result(0)
			res.RealTime = time.Since(began)
			return res, hists, fmt.Errorf("realrun: interrupted: %w", ctx.Err())
		}
		return nil, nil, err
	}
	measured := r.drive(ctx)
	res, hists := r.result(measured)
	res.RealTime = time.Since(began)
	if ctx.Err() != nil {
		return res, hists, fmt.Errorf("realrun: interrupted after %.1fs of %s: %w", measured.Seconds(), s.Duration, ctx.Err())
	}
	return res, hists, nil
}

func newRunner(c *localcluster.Cluster, s Spec) (*runner, error) {
	gen, err := workload.NewGenerator(s.Workload)
	if err != nil {
		return nil, fmt.Errorf("realrun: %w", err)
	}
	r := &runner{s: s, read: s.Read, write: s.Write, gen: gen, nodes: c.Nodes(), errs: map[string]int{},
		value: strings.Repeat("x", max(1, s.Workload.ValueSize))}
	r.lat = make([][numClasses]*hdrhistogram.Histogram, len(s.World.Regions))
	r.intent = make([][numClasses]*hdrhistogram.Histogram, len(s.World.Regions))
	for reg := range r.lat {
		for k := range numClasses {
			r.lat[reg][k] = hdrhistogram.New(1, maxLatencyUs, 3)
			r.intent[reg][k] = hdrhistogram.New(1, maxLatencyUs, 3)
		}
	}
	// Clients of their own, so the run neither waits for nor disturbs the
	// cluster's, and closing them (on cancellation) ends only this run.
	var onConnect func(context.Context, *redis.Conn) error
	if s.Keyspace != "" {
		onConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.Do(ctx, "LC.KEYSPACE", s.Keyspace).Err() }
	}
	for _, n := range r.nodes {
		perNode := (s.ClientsPerRegion + s.World.NodesPerRegion - 1) / s.World.NodesPerRegion
		r.clients = append(r.clients, redis.NewClient(&redis.Options{Addr: n.RESP, Protocol: 2, MaxRetries: -1,
			PoolSize: perNode + loadWorkers, ReadTimeout: 30 * time.Second, ContextTimeoutEnabled: true, OnConnect: onConnect}))
	}
	return r, nil
}

// close closes the run's clients; it may be called more than once.
func (r *runner) close() {
	for _, rc := range r.clients {
		_ = rc.Close()
	}
}

// load writes every record at ALL, in pipelines spread over the nodes.
func (r *runner) load(ctx context.Context) error {
	keys := r.gen.LoadKeys()
	start := time.Now()
	err := pipelined(ctx, keys, func(w int) *redis.Client { return r.clients[w%len(r.clients)] },
		func(p redis.Pipeliner, k string) { p.Do(ctx, "LC.SET", k, r.value, "LEVEL", wire.All.String()) })
	if err != nil {
		return fmt.Errorf("realrun: load: %w", err)
	}
	fmt.Fprintf(r.s.Progress, "loaded %d records at ALL in %.1fs\n", len(keys), time.Since(start).Seconds())
	return nil
}

// prime reads every record once through the first node of every region.
func (r *runner) prime(ctx context.Context) error {
	keys := r.gen.LoadKeys()
	start := time.Now()
	for reg := range r.s.World.Regions {
		for i, n := range r.nodes {
			if n.Region != reg {
				continue
			}
			rc := r.clients[i]
			err := pipelined(ctx, keys, func(int) *redis.Client { return rc },
				func(p redis.Pipeliner, k string) { p.Do(ctx, "LC.GET", k) })
			if err != nil && !errors.Is(err, redis.Nil) {
				return fmt.Errorf("realrun: prime reads at %s: %w", n.Name, err)
			}
			break
		}
	}
	fmt.Fprintf(r.s.Progress, "primed: read %d records once in each of %d regions in %.1fs (unmeasured)\n",
		len(keys), len(r.s.World.Regions), time.Since(start).Seconds())
	return nil
}

// pipelined runs op on every key, in pipelines of loadBatch keys,
// loadWorkers of them in flight at once; worker w sends through client(w).
// It returns the first failure.
func pipelined(ctx context.Context, keys []string, client func(w int) *redis.Client, op func(p redis.Pipeliner, key string)) error {
	batches := make(chan []string)
	errc := make(chan error, loadWorkers)
	var wg sync.WaitGroup
	for w := range loadWorkers {
		rc := client(w)
		wg.Go(func() {
			for b := range batches {
				pipe := rc.Pipeline()
				for _, k := range b {
					op(pipe, k)
				}
				if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
					errc <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for i := 0; i < len(keys); i += loadBatch {
		select {
		case batches <- keys[i:min(i+loadBatch, len(keys))]:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(batches)
	wg.Wait()
	close(errc)
	if err == nil {
		err = <-errc // nil if no worker failed
	}
	return err
}

// warm opens the connections the clients will use, so that no measured
// operation pays for a connection handshake.
func (r *runner) warm(ctx context.Context) error {
	perNode := (r.s.ClientsPerRegion + r.s.World.NodesPerRegion - 1) / r.s.World.NodesPerRegion
	errs := make([]error, len(r.nodes)*perNode)
	var wg sync.WaitGroup
	for i := range r.nodes {
		for j := range perNode {
			wg.Go(func() {
				if err := r.clients[i].Ping(ctx).Err(); err != nil {
					errs[i*perNode+j] = fmt.Errorf("realrun: node %s: %w", r.nodes[i].Name, err)
				}
			})
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drive runs the clients until s.Duration has passed (then drains) or ctx
// ends, and returns how long clients were starting operations.
func (r *runner) drive(ctx context.Context) time.Duration {
	start := time.Now()
	end := start.Add(r.s.Duration)
	byRegion := make([][]int, len(r.s.World.Regions))
	for i, n := range r.nodes {
		byRegion[n.Region] = append(byRegion[n.Region], i)
	}
	var wg sync.WaitGroup
	for reg, nodes := range byRegion {
		for i := range r.s.ClientsPerRegion {
			rc := r.clients[nodes[i%len(nodes)]]
			// Each client's own stream, as the simulator's ("cli").
			rng := rand.New(rand.NewPCG(r.s.Seed, 0x636c69<<20|uint64(reg*r.s.ClientsPerRegion+i)))
			wg.Go(func() { r.client(ctx, rc, reg, rng, start, end) })
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	r.progress(ctx, done, start)
	if ctx.Err() != nil {
		return min(time.Since(start), r.s.Duration)
	}
	return r.s.Duration
}

// client runs one client: one operation at a time, at Poisson arrivals
// (open loop) or back to back (closed loop), starting none after end.
func (r *runner) client(ctx context.Context, rc *redis.Client, region int, rng *rand.Rand, start, end time.Time) {
	open := r.s.RatePerClient > 0
	arrival := start
	var d doer = rc
	if r.s.Locking {
		// A hold belongs to the connection that took it.
		cn := rc.Conn()
		defer cn.Close()
		d = cn
	}
	var timer *time.Timer
	for {
		if open {
			arrival = arrival.Add(workload.PoissonGap(rng, r.s.RatePerClient))
			if !arrival.Before(end) {
				return
			}
			if wait := time.Until(arrival); wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
					defer timer.Stop()
				} else {
					timer.Reset(wait)
				}
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
		}
		sent := time.Now()
		if !sent.Before(end) || ctx.Err() != nil {
			return
		}
		intended := sent
		if open {
			intended = arrival
		}
		class, steps := r.next(rng)
		if !r.do(ctx, d, steps) {
			continue
		}
		done := time.Now()
		r.ops.Add(1)
		r.mu.Lock()
		_ = r.lat[region][class].RecordValue(min(maxLatencyUs, max(1, done.Sub(sent).Microseconds())))
		_ = r.intent[region][class].RecordValue(min(maxLatencyUs, max(1, done.Sub(intended).Microseconds())))
		r.recordSecond(class, int(done.Sub(start)/time.Second), done.Sub(sent))
		r.mu.Unlock()
	}
}

// recordSecond adds a latency to second sec's series, as the simulator
// does. r.mu must be held.
func (r *runner) recordSecond(class, sec int, d time.Duration) {
	ps := r.perSecond[class]
	for len(ps) <= sec {
		ps = append(ps, nil)
	}
	if ps[sec] == nil {
		ps[sec] = hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 2)
	}
	_ = ps[sec].RecordValue(min(int64(time.Minute/time.Microsecond), max(1, d.Microseconds())))
	r.perSecond[class] = ps
}

// next draws the next operation from the shared generator (inserts must
// take consecutive record numbers across all clients).
func (r *runner) next(rng *rand.Rand) (int, []step) {
	r.genMu.Lock()
	defer r.genMu.Unlock()
	op := r.gen.Next(rng)
	switch op.Kind {
	case workload.Update, workload.Insert:
		return classOf(op.Kind), []step{{write: true, key: op.Key}}
	case workload.ReadModifyWrite:
		return classOf(op.Kind), []step{{key: op.Key}, {write: true, key: op.Key}}
	case workload.Scan:
		// As in the simulator: the protocol has no range read, so a scan is
		// ScanLen sequential reads of consecutive records.
		keys := r.gen.ScanKeys(op)
		steps := make([]step, len(keys))
		for i, k := range keys {
			steps[i] = step{key: k}
		}
		return classOf(op.Kind), steps
	}
	return classOf(workload.Read), []step{{key: op.Key}}
}

// doer sends one command: a *redis.Client, or a *redis.Conn when holds
// must stay on one connection.
type doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// do sends an operation's requests in order and reports whether all
// succeeded; it counts the first failure by its code, unless ctx ended.
// With Locking it acquires the operation's keys first, in sorted order (two
// clients never wait for each other's holds in a cycle), and releases them
// after.
func (r *runner) do(ctx context.Context, rc doer, steps []step) bool {
	fail := func(err error) bool {
		if ctx.Err() == nil {
			r.failed.Add(1)
			r.mu.Lock()
			r.errs[errorCode(err)]++
			r.mu.Unlock()
		}
		return false
	}
	if r.s.Locking {
		var keys []string
		for _, st := range steps {
			keys = append(keys, st.key)
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		var held []string
		defer func() {
			for _, k := range held {
				_ = rc.Do(ctx, "LC.RELEASE", k).Err() // a refused release means the hold already ended
			}
		}()
		for _, k := range keys {
			if err := rc.Do(ctx, "LC.ACQUIRE", k).Err(); err != nil {
				return fail(err)
			}
			held = append(held, k)
		}
	}
	for _, st := range steps {
		var err error
		if st.write {
			args := []any{"LC.SET", st.key, r.value}
			if r.s.Write != wire.LevelDefault {
				args = append(args, "LEVEL", r.s.Write.String())
			}
			err = rc.Do(ctx, args...).Err()
		} else {
			args := []any{"LC.GET", st.key}
			if r.s.Read != wire.LevelDefault {
				args = append(args, "LEVEL", r.s.Read.String())
			}
			err = rc.Do(ctx, args...).Err()
		}
		if err == nil || errors.Is(err, redis.Nil) {
			continue
		}
		return fail(err)
	}
	return true
}

// errorCode classifies a failed request as the simulator's error counts do:
// "timeout" (outcome unknown: the server's TIMEOUT reply, or no reply in
// time), "unavailable", "error" (any other error reply), or "io" (the
// connection failed).
func errorCode(err error) string {
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		switch {
		case strings.HasPrefix(msg, "TIMEOUT"):
			return wire.ErrTimeout.String()
		case strings.HasPrefix(msg, "UNAVAILABLE"):
			return wire.ErrUnavailable.String()
		}
		return "error"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return wire.ErrTimeout.String()
	}
	return "io"
}

// label names the run in progress output: the demo's "quorum ONE/ALL".
func (r *runner) label() string {
	if r.s.Keyspace != "" {
		return "keyspace " + r.s.Keyspace
	}
	return fmt.Sprintf("default keyspace %s/%s", r.read, r.write)
}

// progress reports until done is closed: a bar redrawn every second on a
// terminal, otherwise a line every 5 seconds.
func (r *runner) progress(ctx context.Context, done <-chan struct{}, start time.Time) {
	out := r.s.Progress
	tty := isTerminal(out)
	total := r.s.Duration.Seconds()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if tty {
				fmt.Fprintln(out)
			}
			return
		case <-tick.C:
			el := time.Since(start).Round(time.Second).Seconds()
			switch {
			case tty:
				frac := min(1, el/max(total, 1e-9))
				bar := strings.Repeat("█", int(frac*30)) + strings.Repeat("·", 30-int(frac*30))
				fmt.Fprintf(out, "\r%-22s %s %3.0fs/%.0fs  %6d ops  %4d errors", r.label(), bar, el, total, r.ops.Load(), r.failed.Load())
			case int(el)%5 == 0:
				state := ""
				if el > total {
					state = " (draining)"
				}
				if ctx.Err() != nil {
					state = " (interrupted)"
				}
				fmt.Fprintf(out, "%s: %.0fs/%.0fs, %d ops, %d errors%s\n", r.label(), min(el, total), total, r.ops.Load(), r.failed.Load(), state)
			}
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// result builds the report of what was measured over measured seconds.
func (r *runner) result(measured time.Duration) (*scenario.Result, map[string]*hdrhistogram.Histogram) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	w := s.World
	clients := s.ClientsPerRegion * len(w.Regions)
	res := &scenario.Result{
		World: w.Name, Workload: s.Workload.Name, Seed: s.Seed, Clients: clients,
		Rate:        s.RatePerClient * float64(clients),
		Policy:      s.Policy + " (real runtime)",
		SimSeconds:  measured.Seconds(),
		Ops:         int(r.ops.Load()),
		ThresholdMs: s.ThresholdMs,
		Errors:      map[string]int{},
	}
	if s.Policy == "" {
		res.Policy = fmt.Sprintf("keyspace %s read=%s write=%s (real runtime)", cmp.Or(s.Keyspace, "default"), r.read, r.write)
	}
	for k, v := range r.errs {
		res.Errors[k] = v
	}
	hists := map[string]*hdrhistogram.Histogram{}
	allLat := hdrhistogram.New(1, maxLatencyUs, 3)
	allIntent := hdrhistogram.New(1, maxLatencyUs, 3)
	for reg, rg := range w.Regions {
		for k := range numClasses {
			h, in := r.lat[reg][k], r.intent[reg][k]
			if h.TotalCount() == 0 {
				continue
			}
			allLat.Merge(h)
			allIntent.Merge(in)
			class := scenario.OpClassName(k)
			row := scenario.RowOf(rg.Name, class, h, in, s.ThresholdMs)
			// On loopback only messages between regions are delayed.
			row.Floor = durMs(scenario.OpFloor(s.Floor, reg, class, w.EmulatedOneWay))
			row.LightFloor = durMs(scenario.OpFloor(s.Floor, reg, class, w.LightOneWay))
			res.Rows = append(res.Rows, row)
			hists[rg.Name+"/"+class] = hdrhistogram.Import(h.Export())
		}
	}
	if allLat.TotalCount() > 0 {
		res.Rows = append(res.Rows, scenario.RowOf("all", "all", allLat, allIntent, s.ThresholdMs))
		hists["all/all"] = allLat
	}
	for k := range numClasses {
		for sec, h := range r.perSecond[k] {
			if h == nil {
				continue
			}
			res.Seconds = append(res.Seconds, scenario.Second{T: sec, Op: scenario.OpClassName(k), Count: h.TotalCount(),
				P50: ms(h.ValueAtQuantile(50)), P99: ms(h.ValueAtQuantile(99))})
		}
	}
	res.Histograms = hists
	return res, hists
}

func durMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(us int64) float64 { return float64(us) / 1e3 }
