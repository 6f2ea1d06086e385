package bench

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// meteorSeries are the lines of every MeteorShower experiment: the quorum
// baseline (Cassandra, read and write QUORUM) and MeteorShower with θt = 0
// (M1) and θt at its upper bound (M2), writes at QUORUM, ε = 2 ms, status
// every 10 ms (§4.2.5).
func meteorSeries() []Series {
	return []Series{
		{Label: "quorum", Apply: func(c *scenario.Config) {
			c.Use("quorum", "replicas_per_region=1", "read=QUORUM", "write=QUORUM")
		}},
		{Label: "M1", Apply: func(c *scenario.Config) { c.Use("meteor", meteorSettings("M1")...) }},
		{Label: "M2", Apply: func(c *scenario.Config) { c.Use("meteor", meteorSettings("M2")...) }},
	}
}

// meteorSettings are MeteorShower's settings in the thesis' experiments:
// one replica per DC, writes at QUORUM, ε = 2 ms, a status every 10 ms
// stamped with its send time (closure_lead=0: the thesis' MsgTs, §4.2.3;
// the default promises closures ahead and reads wait less than the
// thesis' figures show), and the write lead these experiments were first
// run with (write_lead=10ms; the default is now 15ms, for closures ahead).
func meteorSettings(mode string) []string {
	return []string{"mode=" + mode, "replicas_per_region=1", "write=QUORUM", "max_clock_skew=2ms", "dispatch_interval=10ms", "closure_lead=0s", "write_lead=10ms"}
}

// meteorBase is the thesis' workload: YCSB 50% reads / 50% updates from 24
// closed-loop threads per DC (§4.2.5, "Workload Benchmark"), one replica per
// DC. The first 2 s are warm-up (every replica's first statuses).
func meteorBase() scenario.Config {
	return scenario.Config{
		Protocol: "meteor",
		Clients:  72, ClosedLoop: true, Duration: 20 * time.Second, Warmup: 2 * time.Second,
		ClientTimeout: 2 * time.Second, ThresholdMs: 300,
		Workload: workloadNode(map[string]any{"preset": "a", "record_count": 1000, "request_distribution": "uniform"}),
		// The global sequential-consistency checker on every run (~40,000
		// operations each; meteor's read view times make a witness).
		Check: "auto",
	}
}

var (
	// MetricStatusMsgsPerNodeSec and MetricStatusKBPerNodeSec are
	// MeteorShower's status-message overhead: meteor.status messages, and
	// their encoded kilobytes, sent per node per simulated second.
	MetricStatusMsgsPerNodeSec = defineKindMetric("status_msgs_per_node_s", "status messages per node per second", perNodeSecond, "meteor.status")
	MetricStatusKBPerNodeSec   = defineKindMetric("status_kb_per_node_s", "status KB per node per second", kbPerNodeSecond, "meteor.status")
)

var meteorOverhead = []string{MetricStatusMsgsPerNodeSec, MetricStatusKBPerNodeSec}

func meteorControlled() *Experiment {
	base := meteorBase()
	base.WorldDef = equalDelayWorld(50)
	return &Experiment{
		Name:  "meteor-controlled",
		Title: "MeteorShower vs quorum under an equal inter-DC delay sweep (thesis Figs. 4.18/4.19)",
		Description: "MeteorShower's controlled experiment: 3 DCs × 3 nodes, one replica per DC, the same one-way " +
			"delay d between every pair of DCs swept from 10 to 150 ms. Expected from the algorithm: quorum reads " +
			"take one round trip (2d); M1 reads wait for a status sent after the read began, about d + ε + half the " +
			"10 ms interval; M2 reads (θt = d − ε) wait only about ε + half the interval, whatever d — except a read " +
			"right after the client's own write, which waits until closures pass that write's stamp (about ε + " +
			"write_lead + the interval more); writes are " +
			"the same quorum write in all three (2d). Status overhead: every node sends one status to each of its " +
			"8 peers every interval.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.2.5, Figs. 4.18 (reads) and 4.19 (writes); values only on the figures' axes",
			Claims: []string{
				"The latency of read QUORUM and read ALL operations in Cassandra increases with the RTT between data centers.",
				"MeteorShower1 needs about one one-way trip plus the 10 ms dispatch interval; it is not suitable when the latency among data centers is less than 50 ms.",
				"MeteorShower2 read latency stays stable as the inter-DC latency grows.",
				"Writes of MeteorShower equal Cassandra's (QUORUM), with a slightly longer tail.",
			},
		},
		Workload: "YCSB 50% reads / 50% updates, 1,000 keys, 24 closed-loop threads per DC, 20 s (2 s warm-up)",
		Base:     base,
		Series:   meteorSeries(),
		Sweep: &Sweep{
			Param:   "one-way delay between DCs (ms)",
			Values:  []float64{10, 25, 50, 75, 100, 150},
			Apply:   func(c *scenario.Config, v float64) { c.WorldDef = equalDelayWorld(v) },
			Metrics: append([]string{MetricReadP50, MetricReadP99, MetricWriteP50, MetricWriteP99}, meteorOverhead...),
		},
	}
}

func meteor3DC() *Experiment {
	base := meteorBase()
	base.World = "meteor3"
	return &Experiment{
		Name:  "meteor-3dc",
		Title: "MeteorShower vs quorum on Europe / US / Asia (thesis Figs. 4.21–4.23)",
		Description: "The thesis' real three-DC deployment in the meteor3 world (Europe–US 50 ms, US–Asia 75 ms, " +
			"Europe–Asia 105 ms one way), one replica per region. θt under M2 is the median one-way latency from " +
			"the gateway's region less ε: 48 ms for Europe and the US, 73 ms for Asia, so M2 reads wait about the " +
			"same everywhere while quorum and M1 reads depend on the distance to the nearest other region.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.2.5, Figs. 4.20–4.23; values only on the figures",
			Claims: []string{
				"The read latency ranking is MeteorShower2 < MeteorShower1 < Cassandra.",
				"θt bounds are around 50ms−2ms for requests in Europe and the U.S. and 75ms−2ms for requests in Asia.",
				"Under MeteorShower2, Asia's read QUORUM latency equals the other regions'.",
				"MeteorShower has a longer tail than Cassandra.",
			},
		},
		Workload: "YCSB 50% reads / 50% updates, 1,000 keys, 24 closed-loop threads per region, 20 s (2 s warm-up)",
		Base:     base,
		Series:   meteorSeries(),
		Metrics:  append([]string{MetricReadP50, MetricReadP99, MetricWriteP50, MetricWriteP99}, meteorOverhead...),
	}
}

// meteorStatusInterval is the status-message overhead against the dispatch
// interval, and what the interval costs reads.
func meteorStatusInterval() *Experiment {
	base := meteorBase()
	base.World = "meteor3"
	return &Experiment{
		Name:  "meteor-status-interval",
		Title: "MeteorShower status-message overhead and read latency against the dispatch interval (meteor3)",
		Description: "Each node sends a status to every peer each interval, even when empty, so messages per node " +
			"per second are (nodes − 1) / interval; bytes grow with the writes each status carries and its " +
			"Redundant (3) repeated payloads. Reads wait for the next status, about half an interval more on average.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.2.3–4.2.4",
			Claims: []string{
				"A status message is sent out to all the MeteorShower peers every interval even when there is no entry during an interval.",
				"Redundant is configurable, i.e., the number of previous status messages to be included, to tolerate status message lost.",
			},
		},
		Workload: "YCSB 50% reads / 50% updates, 1,000 keys, 24 closed-loop threads per region, 20 s (2 s warm-up)",
		Base:     base,
		Series:   meteorSeries(),
		Sweep: &Sweep{
			Param:  "status dispatch interval (ms)",
			Values: []float64{2, 5, 10, 20, 50, 100},
			Apply: func(c *scenario.Config, v float64) {
				c.WithIfHas(fmt.Sprintf("dispatch_interval=%s", time.Duration(v*float64(time.Millisecond))))
			},
			Metrics: append([]string{MetricReadP50, MetricReadP99}, meteorOverhead...),
		},
	}
}
