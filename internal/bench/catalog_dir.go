package bench

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// The directory-coherence thesis (seed 002, digest notes/002-003 Part A,
// A.6): SC (dirsc) and RC (dirrc) beside Cassandra at EACH_QUORUM writes and
// LOCAL_QUORUM reads, on its emulated setup — two DCs 100 ms apart one way,
// the directory 50 ms from each — with YCSB, 60,000 records, two clients
// (one per DC) of 5,000 operations each.

// dirNodesPerRegion is 3: the thesis ran 3-node Cassandra clusters in each
// DC (C* with 3 replicas per DC). SC and RC serve a DC from its first node
// (the Frontend, whose store is the DC's storage); SC's directory is a
// 3-replica Raft group on the directory site (the thesis's was one server).
const dirNodesPerRegion = 3

// dirWorld is the dir2 preset with 3 nodes per region; without the
// directory site when dirSite is false (the C* baseline has no directory).
func dirWorld(dirSite bool) *topo.World {
	w, err := topo.Preset("dir2")
	if err != nil {
		panic(err) // a shipped preset
	}
	w.NodesPerRegion = dirNodesPerRegion
	if !dirSite {
		w.Name = "dir2-dcs"
		w.Description = "dir2's two DCs without the directory site (the C* baseline)"
		w.Regions = slices.DeleteFunc(w.Regions, func(r topo.Region) bool { return r.Name == "dir" })
		w.Links = slices.DeleteFunc(w.Links, func(l topo.Link) bool { return l.From == "dir" || l.To == "dir" })
	}
	return w
}

// dirSeries are the three systems of every figure: SC, RC (one access per
// acquire/release pair, the thesis's default) and C*.
func dirSeries() []Series {
	return []Series{
		{Label: "SC", Apply: func(c *scenario.Config) { c.WorldDef = dirWorld(true); c.Use("sc") }},
		{Label: "RC", Apply: func(c *scenario.Config) { c.WorldDef = dirWorld(true); c.Use("rc") }},
		{Label: "C*", Apply: func(c *scenario.Config) {
			c.WorldDef = dirWorld(false)
			c.Use("quorum", "replicas_per_region=3", "read=LOCAL_QUORUM", "write=EACH_QUORUM")
		}},
	}
}

// dirWorkload is a YCSB workload over the thesis's 60,000 records.
func dirWorkload(preset, dist string, writeShare float64) map[string]any {
	m := map[string]any{"preset": preset, "record_count": 60000, "request_distribution": dist}
	if writeShare >= 0 {
		m["read_proportion"], m["update_proportion"] = 1-writeShare, writeShare
	}
	return m
}

// dirBase is the thesis's method: two clients, one per DC (clients go to
// the regions in order: dc1, dc2), 5,000 operations each, run together.
// SC's preload leaves every row Modified at dc1's frontend, the thesis's
// loader: dc1's client is SC-1 (best case), dc2's SC-2 (worst). The thesis
// throttled the loader's client so the runs overlap: closed-loop, SC-1's
// local operations (0.2 ms) would finish all 5,000 in a second, before
// SC-2 contends for a row. Here both clients are throttled alike: Poisson
// arrivals at 3 operations/s each (latency is measured from an operation's
// start, so queueing behind a slow one does not count), which spreads both
// clients' operations over the same ~28 minutes. Duration only caps it.
func dirBase(workload map[string]any) scenario.Config {
	return scenario.Config{
		Clients: 2, Rate: 2 * dirRatePerClient, OpsPerClient: 5000, Duration: 2 * time.Hour,
		ThresholdMs: 200, Workload: workloadNode(workload),
	}
}

// dirRatePerClient is each client's offered load, operations/s.
const dirRatePerClient = 3

const dirSource = "Directory-coherence thesis (seed 002) §5.2; digest notes/002-003 Part A.6"

var dirClaimsMethod = "Unless otherwise specified each workload consisted of 60,000 records with 5,000 operations from each of two clients. " +
	"The numbers used in this section are the average of the best and worst case scenarios."

// Table 5.2 metrics: p50/p90/p95/p99/mean/std, reads and writes, both
// clients; the means per client beside them.
var dirTableMetrics = []string{
	MetricReadP50, MetricReadP90, MetricReadP95, MetricReadP99, MetricReadMean, MetricReadStd,
	MetricWriteP50, MetricWriteP90, MetricWriteP95, MetricWriteP99, MetricWriteMean, MetricWriteStd,
	MetricIn("dc1", MetricReadMean), MetricIn("dc2", MetricReadMean),
	MetricIn("dc1", MetricWriteMean), MetricIn("dc2", MetricWriteMean),
}

// table52 are the thesis's Table 5.2 rows (ms), by system.
func table52() []RefNumber {
	var out []RefNumber
	add := func(series string, ms []string, vs ...float64) {
		for i, m := range ms {
			out = append(out, RefNumber{Series: series, Metric: m, Value: vs[i], Note: "Table 5.2"})
		}
	}
	read := []string{MetricReadP50, MetricReadP90, MetricReadP95, MetricReadP99, MetricReadMean, MetricReadStd}
	write := []string{MetricWriteP50, MetricWriteP90, MetricWriteP95, MetricWriteP99, MetricWriteMean, MetricWriteStd}
	add("SC", read, 2, 812, 823, 845, 253.42, 211.60)
	add("RC", read, 150, 319, 333, 400, 207.67, 112.01)
	add("C*", read, 1, 2, 3, 4, 2.56, 32.46)
	add("SC", write, 197, 211, 216, 228, 122.81, 61.05)
	add("RC", write, 293, 319, 334, 400, 226.65, 122.65)
	add("C*", write, 198, 211, 220, 292, 212.96, 29.43)
	return out
}

func dirTable52() *Experiment {
	return &Experiment{
		Name:  "dir-table5.2",
		Title: "SC and RC vs C* (EACH_QUORUM/LOCAL_QUORUM): latency percentiles (directory thesis Table 5.2)",
		Description: "World dir2 with 3 nodes per region (C*: the two DCs only, 3 replicas each). YCSB workload A " +
			"(50% updates, Zipfian; the thesis does not name Table 5.2's workload: it combines its runs), 60,000 " +
			"records, one closed-loop client per DC, 5,000 operations each. SC's rows start Modified at dc1 " +
			"(the loader); the per-client means (@dc1 = SC-1, @dc2 = SC-2) are shown beside the combined numbers, " +
			"which weigh both clients equally as the thesis's average does. RC: one access per acquire/release.",
		Reference: Reference{
			Source: dirSource + ", Table 5.2",
			Claims: []string{
				dirClaimsMethod,
				"From Table 5.2 we can see the average SC write latency is 122.81ms while C*'s is 212.96ms.",
				"None of the [RC] requests can finish faster than the delay to the Directory, which is around 100ms.",
			},
			Numbers: table52(),
		},
		Workload: "YCSB A (50% updates, Zipfian), 60,000 records, 2 clients × 5,000 operations",
		Base:     dirBase(dirWorkload("a", "zipfian", -1)),
		Series:   dirSeries(),
		Metrics:  dirTableMetrics,
	}
}

func dirFig54() *Experiment {
	return &Experiment{
		Name:  "dir-fig5.4",
		Title: "Mean latency against the write fraction: SC-1, SC-2, RC, C* (directory thesis Fig. 5.4)",
		Description: "Workload A's mix with the update share swept from 0 to 100% (Zipfian, 60,000 records, " +
			"2 clients × 5,000 operations). SC's mean is shown for each client: dc1 (SC-1, the loader) and " +
			"dc2 (SC-2).",
		Reference: Reference{
			Source: dirSource + ", Fig. 5.4 (values only on the figure)",
			Claims: []string{
				"SC-1, the loader, is mostly local; SC-2 contacts the Directory on practically every request.",
				"Every system approaches about 200 ms as writes increase.",
				"RC does not depend on the ratio.",
			},
		},
		Workload: "YCSB A mix, update share swept, Zipfian, 60,000 records, 2 clients × 5,000 operations",
		Base:     dirBase(dirWorkload("a", "zipfian", 0.5)),
		Series:   dirSeries(),
		Sweep: &Sweep{
			Param:  "write fraction (%)",
			Values: []float64{0, 5, 25, 50, 75, 100},
			Apply: func(c *scenario.Config, v float64) {
				c.Workload = workloadNode(dirWorkload("a", "zipfian", v/100))
			},
			Metrics: []string{MetricMean, MetricIn("dc1", MetricMean), MetricIn("dc2", MetricMean)},
		},
	}
}

func dirFig55() *Experiment {
	return &Experiment{
		Name:  "dir-fig5.5",
		Title: "SC read latency over time on workload C, Zipfian (directory thesis Fig. 5.5)",
		Description: "SC alone on YCSB C (reads only, Zipfian), 60,000 records, 2 clients × 5,000 operations. " +
			"dc1's client reads rows its frontend holds Modified (local); dc2's first read of a row misses " +
			"(directory + sync from dc1), later reads of it are local while its Shared grant lasts " +
			"(share_lease, 2 s, renewed by the next miss): the time series shows whether latency falls as rows " +
			"become Shared.",
		Reference: Reference{
			Source: dirSource + ", Fig. 5.5 (5 s buckets, linear regression; values only on the figure)",
			Claims: []string{
				"As more of the rows at the Frontend become Shared, latency decreases since reads can be made locally instead.",
				"The Zipfian distribution has a very long tail, so the Frontend still must synchronize on rows it has not accessed before.",
			},
		},
		Workload: "YCSB C (100% reads, Zipfian), 60,000 records, 2 clients × 5,000 operations",
		Base:     dirBase(dirWorkload("c", "zipfian", -1)),
		Series:   dirSeries()[:1],
		Metrics:  []string{MetricReadMean, MetricIn("dc1", MetricReadMean), MetricIn("dc2", MetricReadMean), MetricReadP50, MetricReadP99},
		Figures:  []Figure{FigCDF, FigTimeSeries},
	}
}

// dirModel is the thesis's Eq. 5.1, t = (D + R + B·L)/B ms per operation,
// with D = 100, R = 200, L = 0.45.
func dirModel(b float64) float64 { return (100 + 200 + b*0.45) / b }

func dirFig56() *Experiment {
	bs := []float64{1, 2, 4, 8, 16, 32, 64}
	var refs []RefNumber
	for _, b := range bs {
		refs = append(refs, RefNumber{Series: "RC", X: b, Metric: MetricPerOpMean, Value: dirModel(b), Note: "Eq. 5.1, D=100 R=200 L=0.45"})
	}
	base := dirBase(map[string]any{"preset": "f", "record_count": 60000, "request_distribution": "zipfian",
		"read_proportion": 0, "read_modify_write_proportion": 1})
	// "For each B we used at least 2,000 batch operations": 1,000 per client.
	// Closed loop: a hold costs about the same from either DC, and the
	// model has no waiting for the row.
	base.OpsPerClient, base.Rate, base.ClosedLoop = 1000, 0, true
	return &Experiment{
		Name:  "dir-fig5.6",
		Title: "RC time per operation against the batch size B, beside Eq. 5.1 (directory thesis Fig. 5.6)",
		Description: "RC on workload F with read-modify-writes only: each hold (acquire … release) runs B " +
			"read-modify-writes of one row; the hold's latency divided by B is the time per operation. " +
			"2 clients × 1,000 holds per B, Zipfian over 60,000 records. The model's D is the round trip to the " +
			"directory (100 ms), R the round trip to the other DC's frontend for a sync (200 ms), L a local access.",
		Reference: Reference{
			Source: dirSource + ", Fig. 5.6 and Eq. 5.1",
			Claims: []string{
				"Figure 5.6 shows Equation 5.1 with D = 100, R = 200, and L = 0.45 along with the experimental values.",
				"The latency of the batch operation is divided by B to calculate the average per request.",
				"The experimental values were slightly better than predicted (digest).",
			},
			Numbers: refs,
		},
		Workload: "YCSB F, read-modify-writes only, B per hold, Zipfian, 60,000 records, 2 clients × 1,000 holds",
		Base:     base,
		Series:   dirSeries()[1:2],
		Sweep: &Sweep{
			Param:   "batch size B (operations per acquire)",
			Values:  bs,
			Apply:   func(c *scenario.Config, v float64) { c.Batch = int(v) },
			Metrics: []string{MetricPerOpMean},
		},
	}
}

// dirDistributions are Fig. 5.7's request distributions, by sweep value.
var dirDistributions = []string{"zipfian", "latest", "uniform"}

func dirFig57() *Experiment {
	return &Experiment{
		Name:  "dir-fig5.7",
		Title: "Workload B under Zipfian, Latest and Uniform keys: SC, RC, C* (directory thesis Fig. 5.7)",
		Description: "YCSB B (95% reads, 5% updates), 60,000 records, 2 clients × 5,000 operations, with the " +
			"request distribution swept: 0 = Zipfian, 1 = Latest, 2 = Uniform. Mean of reads and writes combined.",
		Reference: Reference{
			Source: dirSource + ", Fig. 5.7 (values only on the figure)",
			Claims: []string{
				"C* is barely affected, and RC not much (at batch size 1).",
				"SC is heavily affected by the Zipfian distribution.",
			},
		},
		Workload: "YCSB B, distribution swept, 60,000 records, 2 clients × 5,000 operations",
		Base:     dirBase(dirWorkload("b", "zipfian", -1)),
		Series:   dirSeries(),
		Sweep: &Sweep{
			Param:  "request distribution (0 Zipfian, 1 Latest, 2 Uniform)",
			Values: []float64{0, 1, 2},
			Apply: func(c *scenario.Config, v float64) {
				c.Workload = workloadNode(dirWorkload("b", dirDistributions[int(v)], -1))
			},
			Metrics: []string{MetricMean, MetricIn("dc1", MetricMean), MetricIn("dc2", MetricMean)},
		},
	}
}

// dirPlacementShards is the sharded series' directory_shards: each DC's
// rows (region_keys' "<region>/" prefix) have a 3-replica directory group
// in that DC; the shared rows stay with the directory in the far region.
const dirPlacementShards = `directory_shards=[{prefix: "dc1/", region: dc1}, {prefix: "dc2/", region: dc2}]`

// dirPlacementSeries are the three placements, for SC and RC: the
// directory in the far region (dir2's default, 50 ms from each DC), all
// of it in dc1 (the thesis's §5.4: dc1 favoured, dc2 penalised), and
// sharded, each DC's rows' directory in that DC.
func dirPlacementSeries() []Series {
	var out []Series
	for _, proto := range []struct{ label, name string }{{"SC", "sc"}, {"RC", "rc"}} {
		for _, pl := range []struct {
			label string
			set   []string
		}{
			{"far", nil},
			{"@dc1", []string{"directory_region=dc1"}},
			{"sharded", []string{dirPlacementShards}},
		} {
			out = append(out, Series{Label: proto.label + " " + pl.label, Apply: func(c *scenario.Config) {
				c.WorldDef = dirWorld(true)
				c.Use(proto.name, pl.set...)
			}})
		}
	}
	return out
}

// dirPlacementRegionKeys is the share of each client's operations on its
// own DC's rows; the rest are on rows both DCs use.
const dirPlacementRegionKeys = 0.9

func dirPlacement() *Experiment {
	base := dirBase(dirWorkload("a", "zipfian", -1))
	base.RegionKeys = dirPlacementRegionKeys
	region := func(m string) []string { return []string{MetricIn("dc1", m), MetricIn("dc2", m)} }
	metrics := []string{MetricMean}
	for _, m := range []string{MetricMean, MetricP50, MetricP99} {
		metrics = append(metrics, region(m)...)
	}
	return &Experiment{
		Name:  "dir-placement",
		Title: "Directory placement: far, in one DC, or sharded by the DC that uses the rows (directory thesis §5.4)",
		Description: "World dir2 with 3 nodes per region: dc1 and dc2 100 ms apart (one way), the dir region 50 ms " +
			"from each. YCSB A (50% updates, Zipfian) over 60,000 records, one client per DC, 5,000 operations " +
			"each at 3/s (as dir-table5.2). 90% of each client's operations are on its own DC's rows (region_keys: " +
			"the key prefixed \"dc1/\" or \"dc2/\", created by their DC's first write), 10% on rows both DCs use " +
			"(preloaded Modified at dc1, the thesis's loader). Three placements of the directory for SC and for RC: " +
			"\"far\", all of it in the dir region (the thesis's setup); \"@dc1\", all of it in dc1 (directory_region: " +
			"dc1, the placement §5.4 says gives dc1 priority); \"sharded\", each DC's rows' directory a 3-replica " +
			"group in that DC (directory_shards), the shared rows' in the dir region.",
		Reference: Reference{
			Source: "Directory-coherence thesis (seed 002) §5.4 Directory Placement (discussed, never measured); digest notes/002-003 Part A.6",
			Claims: []string{
				"Both directory-based systems can give priority to selected datacenters by placing the Directory server geographically closer to those datacenters.",
				"This is effectively giving priority to those regions since the communication delay between the Directory will decrease.",
				"However, the latency between datacenters will remain the same so the cost of synchronizing data will still be high.",
			},
		},
		Workload: "YCSB A (50% updates, Zipfian), 60,000 records per DC and shared, 90% of each client's operations on its DC's rows, 2 clients × 5,000 operations",
		Base:     base,
		Series:   dirPlacementSeries(),
		Metrics:  metrics,
	}
}
