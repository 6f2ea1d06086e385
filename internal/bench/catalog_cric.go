package bench

import (
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// CRIC's Tables 5.1 and 5.2 (seed 001 §5.1.2; digest §3.2), measured on
// world cric5 (the thesis's five Azure regions) for CPaxos (cric) and the
// two baselines of §5.4.1 in the same harness: pPaxos* (ppaxos) and Fast
// Paxos with replica VMs (fastpaxos), whose classic path is Classic
// Paxos's. The protocols count, per finished operation, the round trips
// to acceptors on its path and the value bytes it moved
// (cric.OpCosts), and the metrics below are ratios of those counters.

var (
	metricWriteRounds = defineCounterMetric("write_rtts", "round trips per write", "write_rounds_total", "writes_total", 1)
	metricReadRounds  = defineCounterMetric("read_rtts", "round trips per read", "read_rounds_total", "reads_total", 1)
	// metricCopies divides by the five acceptors of cric5: the thesis
	// counts copies per replica ("1" for Classic Paxos, which sends the
	// value to each acceptor once).
	metricCopies = defineCounterMetric("copies_per_write", "copies of the value moved per write and acceptor", "write_data_bytes_total", "write_value_bytes_total", 1.0/cricAcceptors)
)

// cricAcceptors is cric5's acceptors: one per region.
const cricAcceptors = 5

// cricProtocols are the three systems, by label and protocol name.
var cricProtocols = []struct{ label, name string }{
	{"CPaxos", "cric"}, {"pPaxos*", "ppaxos"}, {"Fast Paxos", "fastpaxos"},
}

func cricBase(regionKeys float64, readShare float64) scenario.Config {
	return scenario.Config{
		World: "cric5", Clients: 5, ClosedLoop: true, Duration: 20 * time.Second, ClientTimeout: 10 * time.Second,
		RegionKeys: regionKeys, Check: "linearizable",
		Workload: workloadNode(map[string]any{
			"preset": "a", "record_count": 10, "read_proportion": readShare, "update_proportion": 1 - readShare,
			"request_distribution": "uniform",
		}),
	}
}

func cricTable51() *Experiment {
	var series []Series
	for _, p := range cricProtocols {
		for _, fast := range []bool{true, false} {
			label, set := p.label+" fast path", "fast_round=true"
			if !fast {
				label, set = p.label+" slow path", "fast_round=false"
			}
			series = append(series, Series{Label: label, Apply: func(c *scenario.Config) { c.Use(p.name, set) }})
		}
	}
	ref := func(series string, m string, v float64, note string) RefNumber {
		return RefNumber{Series: series, Metric: m, Value: v, Note: note}
	}
	return &Experiment{
		Name:  "cric-table5.1",
		Title: "CRIC Table 5.1: round trips per write (fast and slow path) and per read",
		Description: "One client per region writes and reads its own region's rows (region_keys 1: no conflicts; " +
			"each row is created by its region's first write, so proposers' caches are warm). The slow path is " +
			"forced with fast_round=false. Round trips are counted by the protocols on each acknowledged " +
			"operation's path (sequential phases × round trips per phase), not inferred from latency.",
		Workload: "YCSB-style, 50% reads / 50% updates, 10 rows per region, uniform, 5 closed-loop clients, 20 s",
		Reference: Reference{
			Source: "Seed 001 (Wu, thesis) §5.1.2, Table 5.1 (no request conflict)",
			Claims: []string{"Disk Paxos 2/4/1, pPaxos 2/4/1, Classic Paxos 1/2/1, CPaxos 1/2/1 (write fast path / write slow path / read, in RTTs)."},
			Numbers: []RefNumber{
				ref("CPaxos fast path", metricWriteRounds, 1, ""), ref("CPaxos slow path", metricWriteRounds, 2, ""),
				ref("pPaxos* fast path", metricWriteRounds, 2, "pPaxos"), ref("pPaxos* slow path", metricWriteRounds, 4, "pPaxos"),
				ref("Fast Paxos fast path", metricWriteRounds, 1, "Classic Paxos's row"), ref("Fast Paxos slow path", metricWriteRounds, 2, "Classic Paxos's row"),
				ref("", metricReadRounds, 1, "every protocol"),
			},
		},
		Base:    cricBase(1, 0.5),
		Series:  series,
		Metrics: []string{metricWriteRounds, metricReadRounds, MetricWriteP50, MetricReadP50},
		Figures: []Figure{FigCDF},
	}
}

func cricTable52() *Experiment {
	var series []Series
	for _, p := range cricProtocols {
		series = append(series, Series{Label: p.label, Apply: func(c *scenario.Config) { c.Use(p.name, "fast_round=false") }})
	}
	return &Experiment{
		Name:  "cric-table5.2",
		Title: "CRIC Table 5.2: copies of the value transferred per write, alone and with n concurrent proposers",
		Description: "n clients (spread over the five regions, each at its region's node) write one shared row " +
			"back to back on the classic path; n = 1 is the no-conflict column. Copies = value bytes sent to or " +
			"received from acceptors by acknowledged writes (failed attempts and re-reads included) ÷ bytes of " +
			"the values they wrote ÷ 5 acceptors.",
		Workload: "one row, 100% updates, n closed-loop clients, 20 s",
		Reference: Reference{
			Source: "Seed 001 (Wu, thesis) §5.1.2, Table 5.2 (copies of the object's data transferred per write attempt; pPaxos with older versions garbage collected once a new one is globally accepted)",
			Claims: []string{"No conflict: Disk Paxos O(m), pPaxos 3, Classic Paxos 1, CPaxos 1. n concurrent proposers: Disk Paxos O(m), pPaxos O(n), Classic Paxos 1, CPaxos O(1)."},
			Numbers: []RefNumber{
				{Series: "CPaxos", X: 1, Metric: metricCopies, Value: 1},
				{Series: "pPaxos*", X: 1, Metric: metricCopies, Value: 3, Note: "pPaxos; O(n) with n proposers"},
				{Series: "Fast Paxos", Metric: metricCopies, Value: 1, Note: "Classic Paxos's row"},
			},
		},
		Base: func() scenario.Config {
			c := cricBase(0, 0)
			c.Workload = workloadNode(map[string]any{"preset": "a", "record_count": 1, "read_proportion": 0, "update_proportion": 1, "request_distribution": "uniform"})
			return c
		}(),
		Series: series,
		Sweep: &Sweep{
			Param:   "concurrent proposers on one row",
			Values:  []float64{1, 2, 4, 8},
			Apply:   func(c *scenario.Config, v float64) { c.Clients = int(v) },
			Metrics: []string{metricCopies},
		},
		Metrics: []string{metricCopies, metricWriteRounds, MetricWriteP50},
	}
}
