package bench

import (
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// CRIC's prototype experiments on world cric5 (seed 001 §5.4.1): clients
// in the five Azure regions, YCSB with values padded to 1 KB
// (scenario.Config.PadValues).

// cricTailBase is the common run: closed-loop clients, 1 KB values, a
// Zipfian key choice with constant theta and read:write r:1.
func cricTailBase(theta, readsPerWrite float64, clients int) scenario.Config {
	read := readsPerWrite / (readsPerWrite + 1)
	return scenario.Config{
		World: "cric5", Protocol: "cric",
		Clients: clients, ClosedLoop: true, Duration: 20 * time.Second, Warmup: 2 * time.Second,
		ClientTimeout: 6 * time.Second, ThresholdMs: 500,
		Workload: workloadNode(map[string]any{"preset": "a", "record_count": 1000, "value_size": 1024,
			"read_proportion": read, "update_proportion": 1 - read,
			"request_distribution": "zipfian", "zipfian_constant": theta}),
		Check: "linearizable", PadValues: true,
	}
}

// cricFig511 is Fig. 5.11: latencies under low conflicts, flat majority
// quorums (one replica in each of the five regions) against hierarchical
// 3×3 quorums (three replicas in each of three regions).
func cricFig511() *Experiment {
	return &Experiment{
		Name:  "cric-fig5.11",
		Title: "CRIC read and write latency under low conflicts, flat vs hierarchical quorums (thesis Fig. 5.11)",
		Description: "cric5 (five Azure regions, storage services with median+70 ms GET and +200 ms PUT tails), " +
			"1 KB objects, read:write 30, Zipf 0.5 over 1,000 keys, 10 closed-loop clients. flat: one acceptor per region, " +
			"majority 3 of 5. hier-3x3: three replicas in each of East US, West US and West Europe, quorum 2 regions × 2 replicas. " +
			"Fast Paxos (acceptor processes, one per region) and pPaxos* (append-only acceptor logs) run beside it, flat.",
		Reference: Reference{
			Source: "Seed 001 §5.4.1, Fig. 5.11 (values only on the figure)",
			Claims: []string{
				"Fast Paxos, pPaxos*, and CRIC all offer similar read latencies.",
				"For writes, latencies with pPaxos* are double that with CRIC and Fast Paxos.",
				"For both reads and writes, CRIC's use of hierarchical quorum enables it to reduce the 99th percentile latency by over 100ms.",
			},
		},
		Workload: "YCSB 1 KB values, read:write 30, Zipf 0.5 over 1,000 keys, 10 closed-loop clients, 20 s (2 s warm-up)",
		Base:     cricTailBase(0.5, 30, 10),
		Series: []Series{
			{Label: "flat", Apply: func(c *scenario.Config) { c.Use("cric") }},
			{Label: "hier-3x3", Apply: func(c *scenario.Config) {
				c.Use("cric", "regions=[east-us, west-us, west-europe]", "replicas_per_region=3")
			}},
			{Label: "Fast Paxos", Apply: func(c *scenario.Config) { c.Use("fastpaxos") }},
			{Label: "pPaxos*", Apply: func(c *scenario.Config) { c.Use("ppaxos") }},
		},
		Metrics: []string{MetricReadP50, MetricReadP99, MetricWriteP50, MetricWriteP99,
			MetricIn("east-us", MetricReadP99), MetricIn("east-us", MetricWriteP99)},
	}
}

// metricWriteTput is write throughput: writes answered in the measured
// window per second of it (the run after the warm-up, drain included).
var metricWriteTput = defineFuncMetric("write_ops_per_s", "writes answered per second of the measured window", func(res *scenario.Result, _ int64) (float64, bool) {
	secs := res.SimSeconds - res.WarmupSeconds
	if secs <= 0 {
		return 0, false
	}
	var n int64
	for _, r := range res.Rows {
		if r.Region != "all" && r.Op == "update" {
			n += r.Count
		}
	}
	return float64(n) / secs, n > 0
})

// cricFig51213 is Figs. 5.12 and 5.13: writes under rising conflict
// (Zipf theta), with and without propose assistants. Write throughput is
// write_ops_per_s; the thesis normalizes each series by its throughput
// when conflicts are rare (theta 0.5 here), which NOTES.md computes.
func cricFig51213() *Experiment {
	return &Experiment{
		Name:  "cric-fig5.12-13",
		Title: "CRIC writes and reads under conflicts, with and without propose assistants (thesis Figs. 5.12, 5.13)",
		Description: "cric5, 1 KB objects, read:write 1, Zipf theta 0.5 to 0.99 over 100 keys, 20 closed-loop clients, flat " +
			"quorums; Fast Paxos (acceptor processes) beside it. Normalized write throughput = write_mean_ms at 0.5 / write_mean_ms at theta (closed loop).",
		Reference: Reference{
			Source: "Seed 001 §5.4.1, Figs. 5.12 and 5.13",
			Claims: []string{
				"When the Zipfian coefficient is 0.8, throughput when using CRIC without PVMs is less than half that achieved in the absence of conflicts.",
				"With PVMs, CRIC comes close to the throughput achieved with Fast Paxos, achieving a normalized throughput of 0.8.",
				"Having writers asynchronously mark their completed write as committed greatly improves read latencies.",
			},
		},
		Workload: "YCSB 1 KB values, read:write 1, Zipfian over 100 keys, 20 closed-loop clients, 20 s (2 s warm-up)",
		Base:     cricTailBase(0.5, 1, 20),
		Series: []Series{
			{Label: "no-pvm", Apply: func(c *scenario.Config) { c.Use("cric") }},
			{Label: "pvm", Apply: func(c *scenario.Config) { c.Use("cric", "propose_assistants=true") }},
			{Label: "Fast Paxos", Apply: func(c *scenario.Config) { c.Use("fastpaxos") }},
		},
		Sweep: &Sweep{
			Param:  "Zipfian constant",
			Values: []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.99},
			Apply: func(c *scenario.Config, v float64) {
				c.Workload = workloadNode(map[string]any{"preset": "a", "record_count": 100, "value_size": 1024,
					"read_proportion": 0.5, "update_proportion": 0.5,
					"request_distribution": "zipfian", "zipfian_constant": v})
			},
			Metrics: []string{metricWriteTput, MetricWriteMean, MetricWriteP99, MetricReadMean, MetricReadP99},
		},
	}
}
