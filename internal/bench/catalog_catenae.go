package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/workload"
)

// Catenae's experiments (seed 000 §4.3, evaluation §4.3.4; issue 16;
// docs/design/catenae.md) on world catenae3: the thesis' three GCP regions
// with four storage nodes each. Every experiment compares the baselines of
// §4.3.4, Paxos commit over 2PL (twopl) and over OCC (occ), with Catenae
// (protocol catenae) when that protocol is registered: catenaeSeries adds
// its line only then, so the experiments run without it, and the two that
// measure Catenae alone (Figs. 4.24 and 4.29) require it (Experiment.
// Requires: Validate says so by name).
//
// What these experiments read from the catenae protocol
// (internal/protocol/catenae):
//   - the setting epoch (default 10ms): Fig. 4.29 sets it with
//     c.With("epoch=…"), so a protocol without it is an error naming it.
//   - counters (protocol.Counted, summed over every node into
//     scenario.Result.Counters; exported as lightcone_catenae_*), each
//     counted by every region's coordinator: spec_compared_total, the
//     transactions of conflicting components whose dependencies every
//     region reported, and spec_agree_total, those of them with the same
//     dependencies in every region (Fig. 4.24's "success of speculative
//     execution"); txns_total, every transaction scheduled. From them
//     MetricSpecSuccess = 100 × spec_agree_total / spec_compared_total
//     (conflicting transactions only) and MetricSpecSuccessAll, over every
//     transaction as the thesis counts them: a transaction outside any
//     conflicting component has no dependency anywhere, so it agrees.
//   - the floors of a transaction (Keyspace.Floor, classes "read" for
//     read-only and "update" for read-write), which the *_floor_ms metrics
//     report beside p50.
//
// The transaction metrics come from the run itself, whatever the protocol:
// committed ones' latencies (the rows: class "read" for read-only, "rmw"
// for read-write), counts by outcome (scenario.Result.TxnOutcomes).

// catenaeServers are catenae3's storage servers (3 regions × 4 nodes):
// "clients per server" in the thesis' figures.
const catenaeServers = 12

// catenaeRegistered reports whether the catenae protocol is registered.
func catenaeRegistered() bool {
	_, err := protocol.Lookup("catenae")
	return err == nil
}

// catenaeSeries are the lines of every Catenae experiment, for one
// workload (label suffix and transactions): 2PL and OCC (one retry, as in
// §4.3.4), and catenae at its 10 ms epoch when it is registered (with
// writes, also catenae with order: canonical).
func catenaeSeries(suffix string, txns workload.TxnSpec) []Series {
	with := func(proto string, kv ...string) func(c *scenario.Config) {
		return func(c *scenario.Config) {
			c.Use(proto, kv...)
			t := txns
			c.Transactions = &t
		}
	}
	out := []Series{
		{Label: "2PL" + suffix, Apply: with("twopl")},
		{Label: "OCC" + suffix, Apply: with("occ")},
	}
	if catenaeRegistered() {
		out = append(out, Series{Label: "catenae" + suffix, Apply: with("catenae")})
		if txns.ReadOnlyProportion < 1 {
			// Ours, not the thesis's: every region orders a batch's
			// conflicting transactions by ID, with no vote (what
			// speculation costs here).
			out = append(out, Series{Label: "catenae canonical" + suffix, Apply: with("catenae", "order=canonical")})
		}
	}
	return out
}

// catenaeBase is a closed-loop transactional run on catenae3: 20 s, the
// first 2 s unmeasured, the serializability check on (the baselines are
// strictly serializable; a failed check marks the point).
func catenaeBase(clientsPerServer int, txns workload.TxnSpec) scenario.Config {
	return scenario.Config{
		World: "catenae3", Protocol: "twopl",
		Clients: clientsPerServer * catenaeServers, ClosedLoop: true,
		Duration: 20 * time.Second, Warmup: 2 * time.Second, ThresholdMs: 500,
		Transactions: &txns,
	}
}

// Transaction metrics. "rw": read-write transactions (class rmw), "ro":
// read-only (class read); without a prefix: all.
var (
	MetricSpecSuccess = defineCounterMetric("spec_success_pct", "conflicting transactions speculated alike in every region (%)",
		"spec_agree_total", "spec_compared_total", 100)
	MetricSpecSuccessAll = defineFuncMetric("spec_success_all_pct", "transactions speculated alike in every region (%)",
		func(res *scenario.Result, _ int64) (float64, bool) {
			n := res.Counters["txns_total"]
			if n == 0 {
				return 0, false
			}
			return 100 * (1 - (res.Counters["spec_compared_total"]-res.Counters["spec_agree_total"])/n), true
		})
	MetricTxnPerSec  = defineFuncMetric("txn_per_s", "committed transactions per second", txnRate(""))
	MetricRWPerSec   = defineFuncMetric("rw_txn_per_s", "committed read-write transactions per second", txnRate("rmw"))
	MetricROPerSec   = defineFuncMetric("ro_txn_per_s", "committed read-only transactions per second", txnRate("read"))
	MetricAbortPct   = defineFuncMetric("abort_pct", "transactions aborted (%)", txnAborts(""))
	MetricRWAbortPct = defineFuncMetric("rw_abort_pct", "read-write transactions aborted (%)", txnAborts("rmw"))
	MetricROAbortPct = defineFuncMetric("ro_abort_pct", "read-only transactions aborted (%)", txnAborts("read"))
	MetricRWP50      = defineFuncMetric("rw_p50_ms", "read-write commit latency p50 (ms)", txnP50("rmw"))
	MetricTxnFloor   = defineFuncMetric("floor_ms", "floor of the median committed transaction (ms)", txnFloor(""))
	MetricRWFloor    = defineFuncMetric("rw_floor_ms", "read-write floor, median transaction (ms)", txnFloor("rmw"))
	MetricROFloor    = defineFuncMetric("ro_floor_ms", "read-only floor, median transaction (ms)", txnFloor("read"))
)

// txnClasses are the report classes of transactions of kind ("": both).
func txnClasses(kind string) []string {
	if kind == "" {
		return []string{"read", "rmw"}
	}
	return []string{kind}
}

// txnRate is committed transactions of kind per second of the measured
// window (the run after the warm-up).
func txnRate(kind string) func(*scenario.Result, int64) (float64, bool) {
	return func(res *scenario.Result, _ int64) (float64, bool) {
		secs := res.SimSeconds - res.WarmupSeconds
		var n int64
		for _, k := range txnClasses(kind) {
			n += res.TxnOutcomes[k].Committed
		}
		return float64(n) / secs, secs > 0 && res.TxnOutcomes != nil
	}
}

// txnAborts is the share of measured transactions of kind that aborted
// (refused, no effect), in %; timed-out ones count in the total only.
func txnAborts(kind string) func(*scenario.Result, int64) (float64, bool) {
	return func(res *scenario.Result, _ int64) (float64, bool) {
		var aborted, total int64
		for _, k := range txnClasses(kind) {
			o := res.TxnOutcomes[k]
			aborted, total = aborted+o.Aborted, total+o.Total()
		}
		if total == 0 {
			return 0, false
		}
		return 100 * float64(aborted) / float64(total), true
	}
}

// txnP50 is the median latency of committed transactions of kind, every
// region together.
func txnP50(kind string) func(*scenario.Result, int64) (float64, bool) {
	return func(res *scenario.Result, _ int64) (float64, bool) {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for _, r := range res.Rows {
			if r.Region != "all" && slices.Contains(txnClasses(kind), r.Op) {
				if src := res.Histograms[r.Region+"/"+r.Op]; src != nil {
					h.Merge(src)
				}
			}
		}
		if h.TotalCount() == 0 {
			return 0, false
		}
		return float64(h.ValueAtQuantile(50)) / 1e3, true
	}
}

// txnFloor is the floor (Row.Floor: the network time the protocol's
// transaction cannot avoid from its client's region) of the median
// committed transaction of kind: floors differ by region, so this is the
// count-weighted median of the regions' floors, the number to set beside
// txnP50.
func txnFloor(kind string) func(*scenario.Result, int64) (float64, bool) {
	return func(res *scenario.Result, _ int64) (float64, bool) {
		var rows []scenario.Row
		var total int64
		for _, r := range res.Rows {
			if r.Region != "all" && slices.Contains(txnClasses(kind), r.Op) && r.Count > 0 {
				rows, total = append(rows, r), total+r.Count
			}
		}
		if total == 0 {
			return 0, false
		}
		slices.SortFunc(rows, func(a, b scenario.Row) int {
			switch {
			case a.Floor < b.Floor:
				return -1
			case a.Floor > b.Floor:
				return 1
			}
			return 0
		})
		var seen int64
		for _, r := range rows {
			if seen += r.Count; 2*seen >= total {
				return r.Floor, true
			}
		}
		return rows[len(rows)-1].Floor, true
	}
}

// catenaeMicro is the microbenchmark of Figs. 4.28 and 4.29 (§4.3.4,
// "Workloads"): 100,000 records, 1–5 partitions a transaction, read-only
// or read-write (an update is a read then a write), uniform or Zipf 1.
func catenaeMicro(readOnly bool, zipf float64) workload.TxnSpec {
	t := workload.TxnSpec{Records: 100_000, MinKeys: 1, MaxKeys: 5, Update: workload.UpdateWrite, ReadOnlyProportion: -1}
	if readOnly {
		t.ReadOnlyProportion = 1
	}
	if zipf > 0 {
		t.Distribution, t.ZipfExponent = workload.DistZipfian, zipf
	}
	return t
}

// withKeys sets every transaction's partitions (keys) to n.
func withKeys(c *scenario.Config, n int) {
	t := *c.Transactions
	t.MinKeys, t.MaxKeys = n, n
	c.Transactions = &t
}

// catenaeFig424 is Fig. 4.24: the success rate of speculative execution
// against the transaction rate.
func catenaeFig424() *Experiment {
	// The microbenchmark's read-write transactions, on 10,000 records and
	// 1–4 of them.
	spec := func(zipf float64) workload.TxnSpec {
		t := catenaeMicro(false, zipf)
		t.Records, t.MaxKeys = 10_000, 4
		return t
	}
	var series []Series
	for _, w := range []struct {
		label string
		zipf  float64
	}{{"uniform", 0}, {"Zipf 1", 1}, {"Zipf 2", 2}} {
		t := spec(w.zipf)
		series = append(series, Series{Label: w.label, Apply: func(c *scenario.Config) {
			c.Use("catenae")
			c.Transactions = &t
		}})
	}
	base := catenaeBase(1, spec(0))
	base.Protocol, base.ClosedLoop = "catenae", false
	// Open loop: enough clients that each has at most one transaction in
	// flight at 11,000/s and a few hundred ms each.
	base.Clients, base.Duration, base.Warmup = 3600, 10*time.Second, time.Second
	return &Experiment{
		Name:  "catenae-fig4.24",
		Title: "Catenae: success rate of speculative execution against the transaction rate (thesis Fig. 4.24)",
		Description: "Every region executes the same transactions under transaction chains; a transaction's speculation " +
			"succeeds when its execution dependencies are the same in all three regions. 10,000 records, 1–4 records a " +
			"transaction, all read-write, Poisson arrivals at 1,000–11,000 transactions/s in all, uniform, Zipf 1 or Zipf 2. " +
			"Measured by the protocol (counters spec_agree_total, spec_compared_total, txns_total): over conflicting " +
			"transactions (spec_success_pct) and over all (spec_success_all_pct, the thesis' count). The thesis ran the chains alone, " +
			"without validation; here the whole protocol runs. Speculation only fails where regions execute at different " +
			"speeds: in the simulator that is service time and message jitter (docs/design/catenae.md, open questions).",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.3, \"Validations of the insight\", Fig. 4.24 (values only on the figure)",
			Claims: []string{
				"The transaction chain algorithm ... yields a very high (above 80%) result consistency rate (success rate of speculative execution) when the access pattern of the workload is uniform.",
				"Even when the access pattern is zipfian with exponent 1, Catenae is able to obtain a reasonable success rate (above 60%).",
				"The speculative execution will fail with extremely contended access pattern (zipfian with exponent 2).",
			},
			Numbers: []RefNumber{
				{Series: "uniform", Metric: MetricSpecSuccessAll, Value: 80, Note: "\"above 80%\", every rate (lower bound in the text)"},
				{Series: "Zipf 1", Metric: MetricSpecSuccessAll, Value: 60, Note: "\"above 60%\", every rate (lower bound in the text)"},
			},
		},
		Workload: "10,000 records, 1–4 read-write records a transaction (read then write), Poisson, 10 s (1 s warm-up), 3,600 clients",
		Base:     base,
		Series:   series,
		Requires: []string{"catenae"},
		Sweep: &Sweep{
			Param:   "transactions/s (all regions)",
			Values:  []float64{1000, 3000, 5000, 7000, 9000, 11000},
			Apply:   func(c *scenario.Config, v float64) { c.Rate = v },
			Metrics: []string{MetricSpecSuccessAll, MetricSpecSuccess, MetricAbortPct, MetricRWP50},
		},
	}
}

// catenaeFig428 is Fig. 4.28: the microbenchmark, read-only and
// read-write, uniform and Zipf 1, against the partitions a transaction
// touches.
func catenaeFig428() *Experiment {
	var series []Series
	for _, w := range []struct {
		label    string
		readOnly bool
		zipf     float64
	}{{" RW uniform", false, 0}, {" RW Zipf 1", false, 1}, {" RO uniform", true, 0}, {" RO Zipf 1", true, 1}} {
		series = append(series, catenaeSeries(w.label, catenaeMicro(w.readOnly, w.zipf))...)
	}
	return &Experiment{
		Name:  "catenae-fig4.28",
		Title: "Catenae vs 2PL and OCC: commit latency, throughput and aborts against partitions per transaction (thesis Fig. 4.28)",
		Description: "The microbenchmark on catenae3 (europe-west1, us-central1, asia-east1; 4 servers each), 25 closed-loop " +
			"clients per server, every transaction touching exactly n of 100,000 records (n = 1..5: the thesis' " +
			"\"one to five data partitions\"), read-only or read-write (each key read then written), uniform or Zipf 1. " +
			"Commit latency p50 is shown beside its floor (the protocol's network time from the client's region). " +
			"The baselines commit a read-write transaction with a majority's votes, then a decision: about two round " +
			"trips to the nearest other region; read-only ones take the same paths. Catenae is expected near half a " +
			"round trip when not conflicting and near one when conflicting; read-only transactions locally.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.3.4, \"Microbenchmark\", Fig. 4.28 (values only on the figure)",
			Claims: []string{
				"The performance of Catenae, 2PL and OCC is comparable under uniform read-write workload.",
				"They have enabled Catenae to commit non-conflicting read-write transactions with a little more than a half RTT and commit conflicting read-write transactions with slightly more than a single RTT.",
				"The throughput of 2PL and OCC start to struggle and plateau with the increasing number of clients under zipfian read-write workload ... OCC observes significant abort rate under this workload.",
				"Catenae observes more than three times performance gains in both latency and throughput [read-only] since read-only transactions can be processed locally.",
			},
		},
		Workload: "Catenae microbenchmark: 100,000 records, n records a transaction, RO or RW (read then write), uniform or Zipf 1, 25 closed-loop clients per server (300), 20 s (2 s warm-up)",
		Base:     catenaeBase(25, catenaeMicro(false, 0)),
		Series:   series,
		Sweep: &Sweep{
			Param:   "partitions per transaction",
			Values:  []float64{1, 2, 3, 4, 5},
			Apply:   func(c *scenario.Config, v float64) { withKeys(c, int(v)) },
			Metrics: []string{MetricP50, MetricTxnFloor, MetricTxnPerSec, MetricAbortPct},
		},
		Figures: []Figure{FigSweep},
	}
}

// catenaeFig429 is Fig. 4.29: Catenae's commit latency against its epoch.
func catenaeFig429() *Experiment {
	base := catenaeBase(75, catenaeMicro(false, 0))
	base.Protocol = "catenae"
	return &Experiment{
		Name:  "catenae-fig4.29",
		Title: "Catenae: commit latency against the epoch length (thesis Fig. 4.29)",
		Description: "75 closed-loop clients per server (900), uniform read-write microbenchmark (1–5 of 100,000 records), " +
			"epoch 5–30 ms. A transaction is executed only once every region's epoch message for its epoch has arrived, " +
			"so a longer epoch delays it; a shorter one costs the coordinators more epoch messages " +
			"(epoch messages per node per second are reported beside).",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.3.4, \"Varying the Epoch Length\", Fig. 4.29 (values only on the figure)",
			Claims: []string{
				"Transaction commit latency starts to increase steadily with epoch length more than 20 ms.",
				"Too short epoch length leads to frequent exchanging of epoch messages among coordinators, which introduces performance bottleneck on the coordinators.",
				"We choose 10 ms to be the epoch length in Catenae in all the evaluations.",
			},
		},
		Workload: "Catenae microbenchmark: uniform read-write, 1–5 of 100,000 records, 75 closed-loop clients per server (900), 20 s (2 s warm-up)",
		Base:     base,
		Series:   []Series{{Label: "catenae", Apply: func(c *scenario.Config) { c.Use("catenae") }}},
		Requires: []string{"catenae"},
		Sweep: &Sweep{
			Param:  "epoch (ms)",
			Values: []float64{5, 10, 15, 20, 25, 30},
			Apply: func(c *scenario.Config, v float64) {
				c.With(fmt.Sprintf("epoch=%s", time.Duration(v*float64(time.Millisecond))))
			},
			Metrics: []string{MetricRWP50, MetricRWFloor, MetricTxnPerSec, MetricMsgsPerOp},
		},
		Figures: []Figure{FigSweep},
	}
}

// catenaeTPCC is Fig. 4.30's TPC-C subset: 12 warehouses (one per
// server), half NewOrder, half OrderStatus, so that OrderStatus finds
// orders to read (the NewOrders of the same run).
func catenaeTPCC() workload.TxnSpec {
	return workload.TxnSpec{TPCC: &workload.TPCCSpec{Warehouses: catenaeServers, NewOrderProportion: 0.5}}
}

// catenaeFig430 is Fig. 4.30: TPC-C NewOrder and OrderStatus against the
// clients per server.
func catenaeFig430() *Experiment {
	return &Experiment{
		Name:  "catenae-fig4.30",
		Title: "Catenae vs 2PL and OCC under TPC-C NewOrder and OrderStatus against clients per server (thesis Fig. 4.30)",
		Description: "TPC-C subset (workload.TPCCSpec; docs/sim.md): 12 warehouses of 10 districts, 30 customers a district, " +
			"1,000 items; half NewOrder (read warehouse and customer, add 1 to the district's next order id, write the " +
			"order, and per 5–15 items read the item, add to its stock, write the order line), half OrderStatus (read " +
			"the customer, its last order and its lines). NewOrder is the run's read-write class (rw_*), OrderStatus " +
			"its read-only class (ro_*, read p50). 25–150 closed-loop clients per server; every NewOrder of a district " +
			"adds to one record, so contention grows with the clients.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.3.4, \"TPC-C\", Fig. 4.30 (values only on the figure)",
			Claims: []string{
				"Catenae is able to scale up from 25 clients/server to 100 clients/server under TPC-C NewOrder workload, after which its performance stays stable.",
				"2PL and OCC ... only achieve roughly half of the throughput comparing to Catenae, which causes the doubling of latency. With more than 100 clients/server, there is a drop of throughput in OCC and 2PL because of high contention.",
				"OCC suffers from constantly significant abort rates under the NewOrder workload.",
				"[OrderStatus] Catenae achieves more than twice the throughput of 2PL and OCC with nearly 70% less commit latency.",
			},
		},
		Workload: "TPC-C NewOrder + OrderStatus (1:1), 12 warehouses, closed loop, 20 s (2 s warm-up)",
		Base:     catenaeBase(25, catenaeTPCC()),
		Series:   catenaeSeries("", catenaeTPCC()),
		Sweep: &Sweep{
			Param:  "clients per server",
			Values: []float64{25, 50, 75, 100, 125, 150},
			Apply:  func(c *scenario.Config, v float64) { c.Clients = int(v) * catenaeServers },
			Metrics: []string{MetricRWPerSec, MetricRWP50, MetricRWFloor, MetricRWAbortPct,
				MetricROPerSec, MetricReadP50, MetricROFloor, MetricROAbortPct},
		},
		Figures: []Figure{FigSweep},
	}
}
