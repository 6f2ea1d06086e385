package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// CRIC's cost and tail-versus-cost results (seed 001 §5.4.2, §5.4.3;
// digest §3.6): Fig. 5.14, the cost of CRIC against Fast Paxos and
// pPaxos*, and Figs. 5.15/5.16, the tail gap and its cost with flat and
// hierarchical quorums.

// cricCostRate is fig5.14's offered load, in operations per second. The
// declared VMs (one per acceptor region) are charged for the window, so
// their part of the cost per operation is their price over this rate: it
// halves when the same VMs serve twice the load (NOTES.md).
const cricCostRate = 50

// cricCostVMSize is the baselines' acceptor VM (Azure D2s v3, the
// catalogue's only Azure size).
const cricCostVMSize = "d2s_v3"

// The baselines keep their acceptors' state in the nodes' stores, so the
// accountant sees no storage request of theirs. The thesis's baselines
// ran on VMs that "proxy requests to cloud storage" (§5.4.1): these
// metrics model the storage requests those VMs would issue, from the
// protocol's own counters (cric.OpCosts), and price them with the run's
// catalogue (docs/cost.md). The model, per acceptor (every phase goes to
// all of them):
//   - Fast Paxos: a write's Accept stores the value (one put); its other
//     rounds (Prepare, recovery) and its commit bit change only the
//     acceptor's state, a metadata write (put_meta): write rounds − 1 + 1;
//     each read round reads the state and value (get).
//   - pPaxos*: a write phase is an Append (put) and a log read (get), two
//     round trips; the commit is one more Append (put); a read is a log
//     read (get).
//
// CPaxos's requests are measured, not modelled: for cric the metric is its
// measured request cost.
var (
	metricProxyRequestCost = defineFuncMetric("proxy_request_cost_usd_per_million_ops",
		"storage requests, USD per million ops (baselines: modelled from their acceptor round trips)", proxyRequestCost)
	metricCostWithProxy = defineFuncMetric("cost_with_proxy_usd_per_million_ops",
		"whole bill with the baselines' modelled storage requests, USD per million ops", costWithProxy)
	metricCostWithProxyNoVMs = defineFuncMetric("cost_with_proxy_no_vms_usd_per_million_ops",
		"as cost_with_proxy without VMs (the thesis ignored pPaxos*'s append VMs), USD per million ops", costWithProxyNoVMs)
)

// proxiedRequests models a baseline's storage requests by operation class
// (nil for cric, whose requests are measured).
func proxiedRequests(res *scenario.Result) map[string]float64 {
	proto, _, _ := strings.Cut(res.Policy, " ")
	c := res.Counters
	switch proto {
	case "fastpaxos":
		return map[string]float64{
			"put":      cricAcceptors * c["writes_total"],
			"put_meta": cricAcceptors * c["write_rounds_total"],
			"get":      cricAcceptors * c["read_rounds_total"],
		}
	case "ppaxos":
		phases := c["write_rounds_total"] / 2
		return map[string]float64{
			"put": cricAcceptors * (phases + c["writes_total"]),
			"get": cricAcceptors * (phases + c["read_rounds_total"]),
		}
	}
	return nil
}

// proxyUSD prices proxiedRequests, each region's acceptor taking an equal
// share.
func proxyUSD(res *scenario.Result) (float64, bool) {
	reqs := proxiedRequests(res)
	if reqs == nil {
		return 0, true
	}
	rates, err := ratesFor(res.World)
	if err != nil || res.Cost == nil {
		return 0, false
	}
	n := len(res.Cost.Regions)
	usd := 0.0
	for op, count := range reqs {
		for r := range n {
			p, err := rates.RequestUSD(r, op)
			if err != nil {
				return 0, false
			}
			usd += p * count / float64(n)
		}
	}
	return usd, true
}

func proxyRequestCost(res *scenario.Result, ops int64) (float64, bool) {
	if reqs := proxiedRequests(res); reqs == nil {
		v, ok, _ := costMetric(res, MetricRequestCostPerMil, ops)
		return v, ok
	}
	usd, ok := proxyUSD(res)
	if !ok || ops == 0 {
		return 0, false
	}
	return usd / float64(ops) * 1e6, true
}

func costWithProxy(res *scenario.Result, ops int64) (float64, bool) {
	total, ok, _ := costMetric(res, MetricCostPerMillion, ops)
	if !ok {
		return 0, false
	}
	usd, ok := proxyUSD(res)
	return total + usd/float64(ops)*1e6, ok
}

func costWithProxyNoVMs(res *scenario.Result, ops int64) (float64, bool) {
	total, ok := costWithProxy(res, ops)
	vms, ok2, _ := costMetric(res, MetricVMCostPerMil, ops)
	return total - vms, ok && ok2
}

// cricCostValueSizes are Fig. 5.14's object sizes, in bytes.
var cricCostValueSizes = []int{256, 1024, 100 * 1024}

func sizeLabel(b int) string {
	if b >= 1024 {
		return fmt.Sprintf("%d KB", b/1024)
	}
	return fmt.Sprintf("%d B", b)
}

// cricCostWorkload is Fig. 5.14's YCSB mix.
func cricCostWorkload(valueSize int, readsPerWrite float64) workloadSpec {
	read := readsPerWrite / (readsPerWrite + 1)
	return workloadSpec{"preset": "a", "record_count": 1000, "value_size": valueSize,
		"read_proportion": read, "update_proportion": 1 - read,
		"request_distribution": "zipfian", "zipfian_constant": 0.5}
}

type workloadSpec = map[string]any

// cricFig514 is Fig. 5.14: the cost of reads and writes with CRIC, Fast
// Paxos (acceptor VMs) and pPaxos* (append VMs), for read:write 30, 10
// and 1 and objects of 256 B, 1 KB and 100 KB.
func cricFig514() *Experiment {
	var series []Series
	for _, p := range cricProtocols {
		for _, size := range cricCostValueSizes {
			series = append(series, Series{Label: p.label + " " + sizeLabel(size), Apply: func(c *scenario.Config) {
				c.Use(p.name)
				c.Workload = workloadNode(cricCostWorkload(size, 1))
				if p.name == "cric" {
					return
				}
				role := map[string]string{"fastpaxos": "fast paxos acceptor", "ppaxos": "ppaxos append"}[p.name]
				c.VMs = nil
				for _, r := range []string{"east-us", "west-us", "japan-east", "west-europe", "southeast-asia"} {
					c.VMs = append(c.VMs, scenario.VMFleet{Region: r, Role: role, Size: cricCostVMSize, Count: 1})
				}
			}})
		}
	}
	return &Experiment{
		Name:  "cric-fig5.14",
		Title: "CRIC cost per million operations vs Fast Paxos and pPaxos* (thesis Fig. 5.14)",
		Description: "cric5 with Azure prices (internal/cost/prices/azure.yaml; japaneast's and southeastasia's Blob prices, " +
			"inter-continental and Asian internet egress, and VMs outside eastus are assumptions: docs/cost.md). Open loop, " + fmt.Sprint(cricCostRate) + " ops/s from 25 clients (5 a region), " +
			"1,000 keys, Zipf 0.5, flat quorums (one acceptor a region), classic path. Fast Paxos and pPaxos* declare one " +
			cricCostVMSize + " VM per acceptor region (scenario.Config.VMs). Measured: storage requests, stored bytes, " +
			"egress (storage requests and answers, and node-to-node messages, at their encoded size), VMs. Modelled: the " +
			"baselines' VMs' own storage requests (proxy_request_cost; catalog_cric_cost.go).",
		Reference: Reference{
			Source: "Seed 001 §5.4.2, Fig. 5.14 (values only on the figure)",
			Claims: []string{
				"CRIC reduces cost by 20–50% compared to Fast Paxos and pPaxos* in our target setting: conflicts are rare and objects are small.",
				"CRIC's cost savings over Fast Paxos stem from more efficient use of VMs, and the savings compared to pPaxos* are due to efficient use of storage and network resources.",
				"Only if both objects are large and the read-to-write ratio is low, do CRIC's cost benefits reduce.",
				"pPaxos* may result in higher cost than Fast Paxos when objects are large.",
			},
		},
		Workload: "YCSB, Zipf 0.5 over 1,000 keys, " + fmt.Sprint(cricCostRate) + " ops/s open loop, 25 clients, 30 s (2 s warm-up)",
		Base: scenario.Config{
			World: "cric5", Protocol: "cric", Clients: 25, Rate: cricCostRate,
			Duration: 30 * time.Second, Warmup: 2 * time.Second, ClientTimeout: 6 * time.Second,
			Workload: workloadNode(cricCostWorkload(1024, 1)), Check: "none", PadValues: true,
		},
		Series: series,
		Sweep: &Sweep{
			Param:  "read:write ratio",
			Values: []float64{1, 10, 30},
			Apply: func(c *scenario.Config, v float64) {
				var m map[string]any
				if err := c.Workload.Decode(&m); err != nil {
					panic(err)
				}
				c.Workload = workloadNode(cricCostWorkload(m["value_size"].(int), v))
			},
			Metrics: []string{metricCostWithProxy, MetricCostPerMillion},
		},
		Metrics: []string{metricCostWithProxy, metricCostWithProxyNoVMs, MetricCostPerMillion, metricProxyRequestCost,
			MetricRequestCostPerMil, MetricEgressCostPerMil, MetricStorageCostPerMil, MetricVMCostPerMil,
			MetricRequestsPerOp, MetricEgressBytesPerOp, MetricWriteP50},
		Figures: []Figure{FigSweep},
	}
}

// The tail-gap simulation (Figs. 5.15, 5.16) runs on world10's ten AWS
// regions (delays derived from distance: world10.yaml) with cric5's
// storage-service model in every region, reordered per access set so
// that the access set's regions come first and hold the clients.

// cricTailWorld is world10 with storage services, its regions reordered
// so that access (names) come first, named after the access set's seed.
func cricTailWorld(seed uint64) (*topo.World, []string) {
	base, err := topo.Preset("world10")
	if err != nil {
		panic(err)
	}
	svc, err := topo.Preset("cric5")
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x616363)) // "acc"
	perm := rng.Perm(len(base.Regions))
	access := perm[:cricTailAccessSet]
	w := &topo.World{
		Name: fmt.Sprintf("world10-access%d", seed), NodesPerRegion: 1, Intra: base.Intra, Links: base.Links,
		Description: "world10 with cric5's storage-service model, access set first",
		Source:      base.Source + "; storage services: " + svc.StorageServices[0].Source,
	}
	var names []string
	for _, i := range access {
		names = append(names, base.Regions[i].Name)
	}
	for _, i := range access {
		w.Regions = append(w.Regions, base.Regions[i])
	}
	for i, r := range base.Regions {
		if !slices.Contains(access, i) {
			w.Regions = append(w.Regions, r)
		}
	}
	for _, r := range w.Regions {
		s := svc.StorageServices[0]
		s.Region = r.Name
		w.StorageServices = append(w.StorageServices, s)
	}
	if err := w.Validate(); err != nil {
		panic(err)
	}
	generatedWorlds.Store(w.Name, w)
	return w, names
}

// cricTailAccessSet is the number of regions an object is accessed from.
const cricTailAccessSet = 3

// nearestRegions are the n regions of w with the least mean base delay
// from the access set (affinity placement; the thesis also spread
// replicas over the access set's continents at random).
func nearestRegions(w *topo.World, access []string, n int) []string {
	type rd struct {
		name string
		ms   float64
	}
	var all []rd
	for i, r := range w.Regions {
		sum := 0.0
		for _, a := range access {
			sum += float64(w.BaseDelay(w.RegionIndex(a), i)) / 1e6
		}
		all = append(all, rd{r.Name, sum})
	}
	slices.SortStableFunc(all, func(a, b rd) int {
		switch {
		case a.ms < b.ms:
			return -1
		case a.ms > b.ms:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, r := range all[:n] {
		out = append(out, r.name)
	}
	return out
}

// regionsNearest is a setting placeholder a series sets and the access
// set's sweep point resolves: "regions=nearest:3".
const regionsNearest = "regions=nearest:"

// Tail gaps: the median over the access set's client regions of one
// region's p99 − p50 (the thesis: "for every client ... the absolute
// latency difference between the 99th percentile and median latencies",
// reported at the median client).
var (
	metricReadGap  = defineFuncMetric("read_gap_ms", "read p99 − p50 at the median client region, ms", func(res *scenario.Result, _ int64) (float64, bool) { return medianGap(res, "read") })
	metricWriteGap = defineFuncMetric("write_gap_ms", "write p99 − p50 at the median client region, ms", func(res *scenario.Result, _ int64) (float64, bool) { return medianGap(res, "update") })
)

func medianGap(res *scenario.Result, op string) (float64, bool) {
	var gaps []float64
	for _, r := range res.Rows {
		if r.Region != "all" && r.Op == op && r.Count > 0 {
			gaps = append(gaps, r.P99-r.P50)
		}
	}
	if len(gaps) == 0 {
		return 0, false
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], true
}

// cricFig51516 is Figs. 5.15 and 5.16: the tail gap and the cost of flat
// quorums over more regions against hierarchical quorums over three.
func cricFig51516() *Experiment {
	flat := func(dcs int) Series {
		return Series{Label: fmt.Sprintf("flat %d DCs", dcs), Apply: func(c *scenario.Config) {
			c.Use("cric", fmt.Sprint(regionsNearest, dcs))
		}}
	}
	hier := func(n int) Series {
		return Series{Label: fmt.Sprintf("hier 3×%d", n), Apply: func(c *scenario.Config) {
			c.Use("cric", fmt.Sprint(regionsNearest, 3), fmt.Sprint("replicas_per_region=", n))
		}}
	}
	var seeds []float64
	for s := 1; s <= 12; s++ {
		seeds = append(seeds, float64(s))
	}
	return &Experiment{
		Name:  "cric-fig5.15-16",
		Title: "CRIC tail gap (p99 − p50) and cost, flat vs hierarchical quorums (thesis Figs. 5.15, 5.16)",
		Description: "world10 (ten AWS regions, delays derived from distance, world10.yaml) with cric5's storage-service " +
			"model in every region (GET median 10 / p99 80 ms, PUT 20 / 220 ms, log-normal). Each sweep point is an access " +
			"set: three regions drawn at random by the point's seed, one closed-loop client in each. Replicas go to the " +
			"regions nearest the access set (least mean delay). flat N DCs: one acceptor in each of N regions, majority " +
			"quorums. hier 3×n: n acceptors in each of the 3 nearest regions, majority of regions × majority of replicas. " +
			"Read:write 30, the thesis's low-conflict workload (§5.4.1): its simulation replays measured latencies, not conflicts. " +
			"Gap = p99 − p50 at the median client region. Cost: AWS prices (aws.yaml; S3 and transfer prices per region, " +
			"some from 2024 snapshots: docs/cost.md).",
		Reference: Reference{
			Source: "Seed 001 §5.4.3, Figs. 5.15 and 5.16 (39 DCs, measured samples, 2000 access sets)",
			Claims: []string{
				"Issuing requests to all replicas and waiting for the first majority responses can reduce tail latency by 42ms in the median case, [but] there remains a 45ms gap between the tail and median latencies.",
				"Hierarchical quorum can reduce the gap between tail and median latencies to less than 30ms in the median case.",
				"Hierarchical quorums can provide the same tail latency performance at much lower cost, or better tail latencies at the same cost.",
			},
			Numbers: []RefNumber{
				{Series: "hier 3×3", Metric: metricReadGap, Value: 30, Note: "< 30 ms, median client"},
				{Series: "flat 9 DCs", Metric: metricReadGap, Value: 45, Note: "median client"},
				{Series: "flat 7 DCs", Metric: metricReadGap, Value: 45, Note: "median client, ~"},
			},
		},
		Workload: "YCSB 1 KB values, read:write 30, Zipf 0.5 over 1,000 keys, 3 closed-loop clients, 120 s (5 s warm-up)",
		Base: scenario.Config{
			World: "world10", Protocol: "cric", Clients: cricTailAccessSet, ClosedLoop: true,
			Duration: 120 * time.Second, Warmup: 5 * time.Second, ClientTimeout: 6 * time.Second,
			Workload: workloadNode(map[string]any{"preset": "a", "record_count": 1000, "value_size": 1024,
				"read_proportion": 30.0 / 31, "update_proportion": 1.0 / 31, "request_distribution": "zipfian", "zipfian_constant": 0.5}),
			Check: "none", PadValues: true,
		},
		Series: []Series{flat(3), flat(5), flat(7), flat(9), hier(2), hier(3), hier(5)},
		Sweep: &Sweep{
			Param:  "access set (seed)",
			Values: seeds,
			Apply: func(c *scenario.Config, v float64) {
				w, access := cricTailWorld(uint64(v))
				c.World, c.WorldDef = w.Name, w
				set := slices.Clone(c.Set)
				for i, s := range set {
					if n, ok := strings.CutPrefix(s, regionsNearest); ok {
						var dcs int
						fmt.Sscan(n, &dcs)
						set[i] = "regions=[" + strings.Join(nearestRegions(w, access, dcs), ", ") + "]"
					}
				}
				c.Set = set
			},
			Metrics: []string{metricReadGap, metricWriteGap, MetricCostPerMillion},
		},
		Metrics: []string{metricReadGap, metricWriteGap, MetricReadP50, MetricReadP99, MetricWriteP50, MetricWriteP99,
			MetricCostPerMillion, MetricRequestsPerOp},
		Figures: []Figure{FigSweep},
	}
}
