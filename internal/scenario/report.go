package scenario

import (
	"encoding/json"
	"fmt"
	"github.com/lightcone/lightcone/internal/protocol"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/sim"
)

// Result is what a simulation measured.
type Result struct {
	World string `json:"world"`
	// WorldWarnings are the world's suspicious links (topo.World.Warnings).
	WorldWarnings []string `json:"world_warnings,omitempty"`
	Policy        string   `json:"policy"`
	Workload      string   `json:"workload"`
	Seed          uint64   `json:"seed"`
	Clients       int      `json:"clients"`
	Rate          float64  `json:"rate"`
	// RateSteps are Config.RateSteps: the offered rate from each At on.
	RateSteps  []RateStep `json:"rate_steps,omitempty"`
	SimSeconds float64    `json:"sim_seconds"`
	// WarmupSeconds is the unmeasured start of the run (Config.Warmup).
	WarmupSeconds float64 `json:"warmup_seconds,omitempty"`
	Ops           int     `json:"ops"`
	// PublishedReads is how many reads were answered from published
	// replies (Config.PublishReads), warm-up included.
	PublishedReads uint64          `json:"published_reads,omitempty"`
	Events         uint64          `json:"events"`
	TraceHash      string          `json:"trace_hash"`
	ThresholdMs    float64         `json:"threshold_ms"`
	Rows           []Row           `json:"rows"`
	Messages       []sim.KindCount `json:"messages"`
	// Counters sums the protocol's counters (protocol.Counted, gauges
	// left out) over every node's replica at the end of the run, warm-up
	// included; a crashed node's count restarts with its new replica.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Batch is Config.Batch: workload operations per measured operation.
	Batch int `json:"batch,omitempty"`
	// Nodes is the number of nodes, and MessageSeconds the simulated time
	// Messages were counted over (the run after the warm-up, drain
	// included), for per-node message rates.
	Nodes          int            `json:"nodes"`
	MessageSeconds float64        `json:"message_seconds"`
	Errors         map[string]int `json:"errors"`
	Check          *CheckResult   `json:"check,omitempty"`
	// History is the recorded history the checker ran on (tests and
	// experiments check it again, e.g. to time a checker).
	History check.History `json:"-"`
	// Txns is the transactional history (Config.Transactions), in the
	// order replies came.
	Txns []check.Txn `json:"-"`
	// TxnOutcomes counts the measured transactions (started after the
	// warm-up; Config.Transactions) by kind, "read" (read-only) and "rmw"
	// (read-write), and outcome: committed, aborted, unknown. Rows hold
	// the committed ones' latencies.
	TxnOutcomes map[string]TxnOutcomes `json:"txn_outcomes,omitempty"`
	// FailStops are the nodes that stopped because their store failed
	// (injected, StoreFaults) or an invariant broke, in order.
	FailStops []FailStop `json:"fail_stops,omitempty"`
	// Seconds is the time series: per second of the run and operation kind,
	// completions and latency percentiles.
	Seconds []Second `json:"seconds,omitempty"`
	// RealTime is the real time the run took, the history check's
	// CheckTime included.
	RealTime time.Duration `json:"-"`
	// CheckTime is the real time the history check took (part of
	// RealTime), so a benchmark can tell the simulator's cost from the
	// checker's.
	CheckTime time.Duration `json:"-"`
	// Histograms holds the service latencies (µs) behind Rows, keyed
	// "region/op" and "all/all", for CDFs.
	Histograms map[string]*hdrhistogram.Histogram `json:"-"`
	// Cost is what the measured window (after the warm-up, drain
	// included) used of what clouds charge for: storage requests, stored
	// bytes, bytes between regions (storage and node-to-node messages),
	// declared VMs (Config.VMs). Price it with cost.ForWorld(...).Bill.
	Cost *cost.Usage `json:"cost,omitempty"`
	// ServiceRequests are the storage services' own request counts over
	// the same window, "region/op" (the reference the accountant's
	// Cost.Requests must equal).
	ServiceRequests map[string]int64 `json:"service_requests,omitempty"`
}

// Second is one second of one operation kind.
type Second struct {
	T     int     `json:"t"`
	Op    string  `json:"op"`
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
}

// Row is the latency of one operation kind in one region (Region "all":
// every region). Times are milliseconds. Intended* are measured from each
// operation's scheduled start (corrected for coordinated omission).
type Row struct {
	Region      string  `json:"region"`
	Op          string  `json:"op"`
	Count       int64   `json:"count"`
	P50         float64 `json:"p50_ms"`
	P90         float64 `json:"p90_ms"`
	P99         float64 `json:"p99_ms"`
	P999        float64 `json:"p999_ms"`
	Max         float64 `json:"max_ms"`
	Floor       float64 `json:"floor_ms"`       // network time the op cannot avoid
	LightFloor  float64 `json:"light_floor_ms"` // same set of replicas at the speed of light in fibre
	Above       float64 `json:"above_threshold"`
	IntendedP50 float64 `json:"intended_p50_ms"`
	IntendedP99 float64 `json:"intended_p99_ms"`
}

// FailStop is one node's fail-stop in a run (env.Env.FailStop).
type FailStop struct {
	What string `json:"what"` // node, time and cause
	// Injected: the cause was an injected storage fault (StoreFaults), an
	// expected event. Invariant: a broken invariant, a bug.
	Injected  bool `json:"injected,omitempty"`
	Invariant bool `json:"invariant,omitempty"`
}

func (f FailStop) String() string { return f.What }

// CheckResult is the consistency checker's verdict on the run's history.
type CheckResult struct {
	Model   string `json:"model"`
	Verdict string `json:"verdict"`
	Key     string `json:"key,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Ops     int    `json:"ops"`
}

func ms(us int64) float64 { return float64(us) / 1e3 }

func (rn *runner) result() *Result {
	c := rn.r.cfg
	rn.hist.Ops = rn.histOps.all()
	res := &Result{
		World: rn.r.world.Name, WorldWarnings: rn.r.world.Warnings(), Policy: rn.r.policyLine(), Workload: rn.r.workload.Name,
		Seed: c.Seed, Clients: c.Clients, Rate: c.Rate, RateSteps: c.RateSteps, SimSeconds: c.Duration.Seconds(),
		Ops: rn.ops, Events: rn.s.Steps(), TraceHash: fmt.Sprintf("%016x", rn.s.TraceHash()),
		PublishedReads: rn.s.PublishedReadsServed(),
		ThresholdMs:    c.ThresholdMs, Messages: sinceWarmup(rn.s.MessageCounts(), rn.warmMsgs), Errors: rn.errs,
		WarmupSeconds: c.Warmup.Seconds(), Batch: c.Batch,
		Nodes: len(rn.r.topo.Nodes), MessageSeconds: (c.Duration - c.Warmup + c.ClientTimeout + time.Second).Seconds(),
	}
	res.Cost = rn.acc.Usage(time.Duration(rn.s.Now()))
	res.ServiceRequests = rn.serviceRequests()
	for k, n := range rn.svcBase { // lint:order-independent: subtraction
		if res.ServiceRequests[k] -= n; res.ServiceRequests[k] == 0 {
			delete(res.ServiceRequests, k)
		}
	}
	for _, n := range rn.r.topo.Nodes {
		if cn, ok := rn.s.Replica(n.ID).(protocol.Counted); ok {
			for _, k := range cn.Counters(rn.s.Now()) {
				if !k.Gauge {
					if res.Counters == nil {
						res.Counters = map[string]float64{}
					}
					res.Counters[k.Name] += k.Value
				}
			}
		}
	}
	if rn.stopped > 0 {
		// Every client finished its OpsPerClient operations early.
		res.SimSeconds = time.Duration(rn.stopped).Seconds()
		res.MessageSeconds = time.Duration(rn.stopped - rn.warmup).Seconds()
	}
	w := rn.r.world
	base := func(a, b int) time.Duration { return w.BaseDelay(a, b) }
	res.Histograms = map[string]*hdrhistogram.Histogram{}
	allLat, allIntent := newHist(), newHist()
	for reg, rg := range w.Regions {
		for k := opClass(0); k < numClasses; k++ {
			h := rn.lat[reg][k]
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			allLat.Merge(h)
			allIntent.Merge(rn.intent[reg][k])
			class := classNames[k]
			if rn.r.txns != nil && class == "rmw" {
				// A read-write transaction is one operation: a write's floor
				// (the protocol's for a write of several keys).
				class = "update"
			}
			fl := OpFloor(rn.r.proto.Floor, reg, class, base)
			lf := OpFloor(rn.r.proto.Floor, reg, class, w.LightOneWay)
			// The client's own hop to its gateway, there and back.
			fl += 2 * w.BaseDelay(reg, reg)
			res.Histograms[rg.Name+"/"+classNames[k]] = h
			row := RowOf(rg.Name, classNames[k], h, rn.intent[reg][k], c.ThresholdMs)
			row.Floor, row.LightFloor = durMs(fl), durMs(lf)
			res.Rows = append(res.Rows, row)
		}
	}
	if allLat.TotalCount() > 0 {
		res.Histograms["all/all"] = allLat
		res.Rows = append(res.Rows, RowOf("all", "all", allLat, allIntent, c.ThresholdMs))
	}
	for k := opClass(0); k < numClasses; k++ {
		for sec, h := range rn.perSecond[k] {
			if h == nil {
				continue
			}
			res.Seconds = append(res.Seconds, Second{T: sec, Op: classNames[k], Count: h.TotalCount(),
				P50: ms(h.ValueAtQuantile(50)), P99: ms(h.ValueAtQuantile(99))})
		}
	}
	checkStart := time.Now()
	res.Check = rn.checkHistory()
	res.CheckTime = time.Since(checkStart)
	res.History = rn.hist
	res.Txns = rn.txns
	res.TxnOutcomes = rn.txnOut
	for _, f := range rn.s.Failures() {
		res.FailStops = append(res.FailStops, FailStop{What: f.String(), Injected: f.Injected(), Invariant: f.Violation()})
	}
	return res
}

// sinceWarmup subtracts the counts at the end of the warm-up from the
// final ones (both sorted by kind, as sim.MessageCounts returns them).
func sinceWarmup(final, warm []sim.KindCount) []sim.KindCount {
	if len(warm) == 0 {
		return final
	}
	out := make([]sim.KindCount, 0, len(final))
	for _, f := range final {
		for _, w := range warm {
			if w.Kind == f.Kind {
				f.Count -= w.Count
				f.Bytes -= w.Bytes
			}
		}
		if f.Count > 0 {
			out = append(out, f)
		}
	}
	return out
}

func durMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RowOf summarises one latency series (µs histograms: service latency and
// intended latency) as a report row; the real-runtime driver uses it too.
func RowOf(region, op string, h, intent *hdrhistogram.Histogram, thresholdMs float64) Row {
	above := countAbove(h, int64(thresholdMs*1e3))
	return Row{
		Region: region, Op: op, Count: h.TotalCount(),
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max()),
		Above:       above / float64(h.TotalCount()),
		IntendedP50: ms(intent.ValueAtQuantile(50)), IntendedP99: ms(intent.ValueAtQuantile(99)),
	}
}

// countAbove is how many of h's values are above limit, a bar straddling
// it counted in proportion.
func countAbove(h *hdrhistogram.Histogram, limit int64) float64 {
	above := 0.0
	add := func(count, from, to int64) {
		if from > limit {
			above += float64(count)
		} else if to > limit {
			// The bar straddles the threshold: count the part above it.
			above += float64(count) * float64(to-limit) / float64(to-from+1)
		}
	}
	if h.LowestTrackableValue() != 1 || h.SignificantFigures() != 3 {
		for _, b := range h.Distribution() {
			add(b.Count, b.From, b.To)
		}
		return above
	}
	// newHist's geometry: 2,048 sub-buckets of width 1, then buckets of
	// 1,024 sub-buckets each twice as wide as the last, in value order.
	// Distribution makes a bar of every sub-bucket up to the largest value
	// (tens of thousands of them); only non-empty ones add to the sum, so
	// walking those in the same order gives the same float.
	const sub, half = 2048, 1024
	for i, n := range h.Export().Counts {
		if n == 0 {
			continue
		}
		from, width := int64(i), int64(1)
		if i >= sub {
			b := i/half - 1
			from, width = int64(i%half+half)<<b, int64(1)<<b
		}
		add(n, from, from+width-1)
	}
	return above
}

// WriteText prints the report as tables. With timing, the real time the
// run took is included (it differs between runs; the rest does not).
func (res *Result) WriteText(out io.Writer, timing bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "lightcone sim: world=%s workload=%s seed=%d clients=%d ", res.World, res.Workload, res.Seed, res.Clients)
	if res.Rate > 0 {
		fmt.Fprintf(&b, "rate=%g/s (open loop)", res.Rate)
		for _, st := range res.RateSteps {
			fmt.Fprintf(&b, ", %g/s from %s", st.Rate, st.At)
		}
		fmt.Fprintln(&b)
	} else {
		fmt.Fprintf(&b, "closed loop\n")
	}
	for _, w := range res.WorldWarnings {
		fmt.Fprintf(&b, "warning: world %s: %s\n", res.World, w)
	}
	fmt.Fprintf(&b, "policy: %s\n", res.Policy)
	fmt.Fprintf(&b, "simulated %gs: %d operations, %d events, trace %s", res.SimSeconds, res.Ops, res.Events, res.TraceHash)
	if res.PublishedReads > 0 {
		fmt.Fprintf(&b, "; %d reads answered from published replies", res.PublishedReads)
	}
	if res.WarmupSeconds > 0 {
		fmt.Fprintf(&b, " (operations and messages counted after a %gs warm-up)", res.WarmupSeconds)
	}
	if timing {
		fmt.Fprintf(&b, ", in %.2fs real (check %.2fs)", res.RealTime.Seconds(), res.CheckTime.Seconds())
	}
	b.WriteString("\n\nlatency, ms (floor: network time the operation cannot avoid; light: same replicas at the speed of light in fibre)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "region\top\tcount\tp50\tp90\tp99\tp99.9\tmax\tfloor\tlight\t>%gms\t\n", res.ThresholdMs)
	for _, r := range res.Rows {
		floor, light := fmt.Sprintf("%.1f", r.Floor), fmt.Sprintf("%.1f", r.LightFloor)
		if r.Region == "all" {
			floor, light = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%.2f%%\t\n",
			r.Region, r.Op, r.Count, r.P50, r.P90, r.P99, r.P999, r.Max, floor, light, 100*r.Above)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\nmessages:")
	total := 0
	for _, m := range res.Messages {
		fmt.Fprintf(&b, " %s=%d (%s)", m.Kind, m.Count, byteSize(m.Bytes))
		total += m.Count
	}
	fmt.Fprintf(&b, " (total %d)\n", total)
	b.WriteString("errors:")
	if len(res.Errors) == 0 {
		b.WriteString(" none")
	}
	keys := make([]string, 0, len(res.Errors))
	for k := range res.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, res.Errors[k])
	}
	b.WriteString("\n")
	if n := len(res.FailStops); n > 0 {
		fmt.Fprintf(&b, "fail-stops: %d (first: %s)\n", n, res.FailStops[0].What)
	}
	if c := res.Check; c != nil {
		fmt.Fprintf(&b, "check: %s over %d operations: %s", c.Model, c.Ops, strings.ToUpper(c.Verdict))
		switch {
		case c.Detail != "" && c.Key == "" && c.Verdict != check.Violation.String():
			fmt.Fprintf(&b, "\n  %s", c.Detail)
		case c.Detail != "":
			fmt.Fprintf(&b, "\n  key %q: %s", c.Key, c.Detail)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("check: none\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteJSON prints the report as indented JSON.
func (res *Result) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// policyLine describes the policy, and says when the run's clocks break the
// protocol's assumption.
func (r *resolved) policyLine() string {
	p := r.proto.Describe()
	if b := r.proto.ClockBound(); b > 0 && r.clockError() > b {
		p += fmt.Sprintf(" (clocks stray up to %s, beyond the bound: only valid reads are claimed)", r.clockError())
	}
	return p
}

// byteSize prints a byte count for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// OpFloor is the floor (protocol.Keyspace.Floor, nil: 0) of an operation
// of class (OpClassName) from region reg on the one-way delays oneWay: a
// write's for update and insert, a read's then a write's for rmw, a
// read's otherwise.
func OpFloor(floor func(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration, reg int, class string, oneWay func(a, b int) time.Duration) time.Duration {
	if floor == nil {
		return 0
	}
	switch class {
	case "update", "insert":
		return floor(reg, protocol.Write, oneWay)
	case "rmw":
		return floor(reg, protocol.Read, oneWay) + floor(reg, protocol.Write, oneWay)
	}
	return floor(reg, protocol.Read, oneWay)
}
