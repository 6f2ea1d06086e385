package bench

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// Default is the experiment catalog shipped with Lightcone. Adding an
// experiment is one declaration here.
func Default() *Catalog {
	c, err := NewCatalog(
		quorumGlobLeaseFig4(),
		quorumGlobLeaseFig5(),
		globLeaseFig4(), globLeaseFig5(), globLeaseFig6(), globLeaseFig7(), globLeaseFig8(),
		globLeaseFig9(), globLeaseFig10(),
		quorumMeteorControlled(),
		meteorControlled(),
		meteor3DC(),
		meteorStatusInterval(),
		cricFig511(), cricFig51213(), cricFig514(), cricFig51516(),
		dirTable52(), dirFig54(), dirFig55(), dirFig56(), dirFig57(), dirPlacement(),
		cricTable51(), cricTable52(),
		catenaeFig424(), catenaeFig428(), catenaeFig429(), catenaeFig430(),
		calibration("dir2", Reference{
			Source: "Directory-coherence thesis (seed 002) §5.1.1, Table 5.1",
			Claims: []string{
				"Table 5.1: Simulated Datacenter 201.2 ms mean, 190.6 min, 244.2 max, 9.9 std dev; Simulated Directory 101.3 mean, 95.6 min, 129.6 max, 5.6 std dev (200 pings).",
				"We chose to use a one way 100ms delay between datacenters and a 50ms delay from the Directory to each datacenter.",
			},
		}),
		calibration("globlease4", Reference{
			Source: "GlobLease paper (seed 003) §V.A; globlease4 preset (lightcone worlds globlease4)",
			Claims: []string{"Latency connecting data centers varies from 50 ms to 250 ms, which result in 100 ms to 500 ms round trip."},
		}),
	)
	if err != nil {
		panic(err) // the shipped catalog is checked by its tests
	}
	return c
}

// workloadNode builds a scenario workload override.
func workloadNode(fields map[string]any) yaml.Node {
	var n yaml.Node
	if err := n.Encode(fields); err != nil {
		panic(err)
	}
	return n
}

// globLeaseWorkload is GlobLease's Table II workload: 50 clients over the
// four regions, 10,000 keys of 10 KB, 1,000 requests/s in all (the rate of
// its Figs. 6–8), uniform keys.
func globLeaseWorkload(readShare float64) yaml.Node {
	return workloadNode(map[string]any{
		"preset": "b", "record_count": 10000, "value_size": 10240,
		"read_proportion": readShare, "update_proportion": 1 - readShare,
		"request_distribution": "uniform",
	})
}

func globLeaseBase(thresholdMs float64) scenario.Config {
	return scenario.Config{
		World: "globlease4", Protocol: "quorum",
		Set: []string{"replicas_per_region=1", "read=ONE", "write=ALL"},
		// GlobLease §V.A: "for read dominant workload, Cassandra reads from
		// one replica and writes to all replicas".
		Clients: 50, Rate: 1000, Duration: 60 * time.Second, ThresholdMs: thresholdMs,
		Workload: globLeaseWorkload(0.95),
	}
}

func readShareSeries(shares ...float64) []Series {
	var out []Series
	for _, s := range shares {
		s := s
		out = append(out, Series{Label: fmt.Sprintf("%.0f%% reads", 100*s), Apply: func(c *scenario.Config) { c.Workload = globLeaseWorkload(s) }})
	}
	return out
}

var globLeaseReal = &RealScale{ClientsPerRegion: 3, RatePerClient: 10, Duration: 20 * time.Second, Records: 1000}

func quorumGlobLeaseFig4() *Experiment {
	return &Experiment{
		Name:  "quorum-globlease-fig4",
		Title: "Cassandra-style quorum, R=ONE/W=ALL, GlobLease Fig. 4 workloads",
		Description: "The baseline line of GlobLease Fig. 4: Cassandra configured in favour of read-dominant " +
			"workloads (reads from one replica, writes to all) on the four GlobLease regions, at 85% and 95% reads. " +
			"Reads are local; every write waits for the farthest region.",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.B, Fig. 4",
			Claims: []string{
				"Under 85% and 95% read dominant workload, Cassandra experience 15% and 5% cross region communications, which are more than 500 ms latency.",
				"Cassandra always needs to wait for the longest latency among servers in different data centers to process a write operation.",
			},
			Numbers: []RefNumber{
				{Series: "85% reads", Metric: MetricAbove, Value: 15, Note: "share of requests above 500 ms"},
				{Series: "95% reads", Metric: MetricAbove, Value: 5, Note: "share of requests above 500 ms"},
			},
		},
		Workload: "GlobLease Table II (50 clients, 10,000 keys × 10 KB, 1,000 req/s, uniform), read share per series",
		Base:     globLeaseBase(500),
		Series:   readShareSeries(0.85, 0.95),
		Real:     globLeaseReal,
		Figures:  []Figure{FigCDF, FigRegionBars, FigTimeSeries},
	}
}

func quorumGlobLeaseFig5() *Experiment {
	return &Experiment{
		Name:  "quorum-globlease-fig5",
		Title: "Cassandra-style quorum, R=ONE/W=ALL: requests above 300 ms at 75/85/95% reads (GlobLease Fig. 5)",
		Description: "The Cassandra bars of GlobLease Fig. 5: the share of high-latency requests (above 300 ms) " +
			"under three read-dominant workloads. With R=ONE/W=ALL every write crosses to the farthest region, " +
			"so the share equals the write share.",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.B, Fig. 5",
			Claims: []string{
				"Fig. 5 zooms in on the high latency requests (above 300 ms) in Fig. 4 under three read dominant workloads (75%, 85% and 95%).",
				"GlobLease significantly reduces (around 50%) high latency requests comparing to Cassandra.",
			},
			Numbers: []RefNumber{
				{Series: "75% reads", Metric: MetricAbove, Value: 25, Note: "inferred: every Cassandra write is cross-region (§V.B); the figure's bars are not in the text"},
				{Series: "85% reads", Metric: MetricAbove, Value: 15, Note: "§V.B text (above 500 ms)"},
				{Series: "95% reads", Metric: MetricAbove, Value: 5, Note: "§V.B text (above 500 ms)"},
			},
		},
		Workload: "GlobLease Table II (50 clients, 10,000 keys × 10 KB, 1,000 req/s, uniform), read share per series",
		Base:     globLeaseBase(300),
		Series:   readShareSeries(0.75, 0.85, 0.95),
		Real:     globLeaseReal,
	}
}

// equalDelayWorld is MeteorShower's controlled setting: three DCs of three
// nodes with the same one-way delay between every pair (netem in the thesis).
func equalDelayWorld(oneWayMs float64) *topo.World {
	w := &topo.World{
		Name:           fmt.Sprintf("meteor-controlled-%gms", oneWayMs),
		Description:    "three DCs, equal one-way delay between each pair (MeteorShower §4.2 controlled experiment)",
		NodesPerRegion: 3,
		Regions:        []topo.Region{{Name: "dc1", Provider: "emulated"}, {Name: "dc2", Provider: "emulated"}, {Name: "dc3", Provider: "emulated"}},
	}
	for _, p := range [][2]string{{"dc1", "dc2"}, {"dc2", "dc3"}, {"dc1", "dc3"}} {
		w.Links = append(w.Links, topo.Link{From: p[0], To: p[1], OneWayMs: oneWayMs, Jitter: topo.Jitter{Dist: "exponential", MeanMs: 0.5}})
	}
	return w
}

func quorumMeteorControlled() *Experiment {
	return &Experiment{
		Name:  "quorum-meteor-controlled",
		Title: "Quorum reads under an equal inter-DC delay sweep (MeteorShower Figs. 4.18/4.19 baseline)",
		Description: "MeteorShower's controlled experiment with the Cassandra baseline: 3 DCs × 3 nodes, one replica " +
			"per DC, the same one-way delay between every pair of DCs swept from 10 to 150 ms; YCSB 50% reads / 50% " +
			"updates from 24 closed-loop threads per DC. Quorum reads pay a round trip to the nearest other DC; ALL " +
			"reads to the farthest (here the same); writes at QUORUM likewise.",
		Reference: Reference{
			Source: "PhD thesis (seed 000) §4.2, Figs. 4.18 (reads) and 4.19 (writes)",
			Claims: []string{
				"The latency of read QUORUM and read ALL operations in Cassandra increases with the RTT between data centers.",
				"Writes of MeteorShower equal Cassandra's (QUORUM), with a slightly longer tail.",
			},
		},
		Workload: "YCSB 50% reads / 50% updates, 1,000 keys, 24 closed-loop threads per DC",
		Base: scenario.Config{
			WorldDef: equalDelayWorld(50), Protocol: "quorum",
			Set:     []string{"replicas_per_region=1", "read=QUORUM", "write=QUORUM"},
			Clients: 72, ClosedLoop: true, Duration: 20 * time.Second, ThresholdMs: 300,
			Workload: workloadNode(map[string]any{"preset": "a", "record_count": 1000, "request_distribution": "uniform"}),
		},
		Series: []Series{
			{Label: "read QUORUM", Apply: func(c *scenario.Config) { c.With("read=QUORUM") }},
			{Label: "read ALL", Apply: func(c *scenario.Config) { c.With("read=ALL") }},
		},
		Sweep: &Sweep{
			Param:   "one-way delay between DCs (ms)",
			Values:  []float64{10, 25, 50, 75, 100, 150},
			Apply:   func(c *scenario.Config, v float64) { c.WorldDef = equalDelayWorld(v) },
			Metrics: []string{MetricReadP50, MetricReadP99, MetricWriteP50},
		},
		Real: &RealScale{ClientsPerRegion: 4, Duration: 10 * time.Second, Records: 500, SweepValues: []float64{25, 100}},
	}
}

// calibration checks the real runtime's WAN emulation against a world:
// every region pair's measured round trip beside the configured one.
func calibration(world string, ref Reference) *Experiment {
	return &Experiment{
		Name:  "calibration-" + world,
		Title: "WAN emulation calibration: measured vs configured round trips, world " + world,
		Description: "Starts the world's cluster on this machine (one process per region, WAN emulation on), pings " +
			"every link through the transport every 100 ms, and compares the measured round trips with the world's " +
			"latency model, as seed 002 checked its netem setup with pings (Table 5.1).",
		Workload:  "none (link pings only)",
		Reference: ref,
		Base:      scenario.Config{World: world, Protocol: "quorum"},
		Calibrate: true,
		Real:      &RealScale{Duration: 10 * time.Second},
	}
}
