package bench

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
)

// GlobLease's evaluation (seed 003 §V.B–E, Figs. 4–8): the lease protocol
// beside its quorum baseline in the same run, on globlease4 with the Table
// II workload. Every run starts with no leases, and a freshly started
// master counts every replica as a lease holder until (L+B)·(1+ρ)/(1−ρ) has
// passed (internal/protocol/lease doc.go), so each run measures only after
// a warm-up of two lease lengths (at least 60 s).
const (
	globLeaseKeys  = 10000
	globLeaseRate  = 1000.0 // requests/s, Figs. 6–8
	globLeaseLease = 60 * time.Second
	// globLeaseMeasured is the measured part of every run, after the warm-up.
	globLeaseMeasured = 60 * time.Second
	// globLeaseThreads: Table II's 50 clients send 1,000 requests/s. Our
	// simulated client runs one request at a time, and a GlobLease request
	// that renews a lease or writes takes 100–1,000 ms, so 50 of them could
	// not keep up: arrivals would queue and the offered rate would fall
	// (lease reuse with it). 2,000 threads at 0.5 requests/s each offer the
	// paper's rate with little queueing even when every request is a write.
	globLeaseThreads = 2000
	// globLeaseRegions is globlease4's region count: a key has one replica
	// per region, one of them its master.
	globLeaseRegions = 4
)

// globLeaseWarmup is the unmeasured start of a run with leases of length l.
func globLeaseWarmup(l time.Duration) time.Duration { return max(60*time.Second, 2*l) }

// globLeaseEval is the base of the GlobLease experiments: Table II's
// workload at 95% reads, 60 s leases with passive update when no lease is
// valid (the paper's write latency "from 0 ms to 500 ms depending on the
// number of non-master replicas with valid lease" is passive update), and
// the quorum baseline's levels for the series that run quorum.
func globLeaseEval(thresholdMs float64) scenario.Config {
	c := globLeaseBase(thresholdMs)
	c.Clients = globLeaseThreads
	c.Rate = globLeaseRate
	c.Warmup = globLeaseWarmup(globLeaseLease)
	c.Duration = c.Warmup + globLeaseMeasured
	return c
}

var (
	// MetricRenewalsPerRead is lease renewals per measured read: lease.renew
	// messages (one per renewal round, retries included) over reads. It is
	// what GlobLease's lease-overhead bound (§V.C) counts.
	MetricRenewalsPerRead = defineKindMetric("renewals_per_read", "lease renewals per read", perRead, "lease.renew")
	// MetricLeaseMsgsPerRead is lease-maintenance messages per measured
	// read: lease.renew + lease.grant + lease.grant_ack, the messages that
	// exist only to hold leases. Writes' updates are not counted: a quorum
	// write at ALL sends as many.
	MetricLeaseMsgsPerRead = defineKindMetric("lease_msgs_per_read", "lease messages per read", perRead,
		"lease.renew", "lease.grant", "lease.grant_ack")
)

// leaseSeries runs GlobLease; readShare > 0 also sets the workload's.
func leaseSeries(label string, readShare float64) Series {
	return Series{Label: label, Apply: func(c *scenario.Config) {
		c.Use("lease", fmt.Sprintf("lease_length=%s", globLeaseLease), "passive=true")
		if readShare > 0 {
			c.Workload = globLeaseWorkload(readShare)
		}
	}}
}

// quorumSeries runs the Cassandra-style baseline at read/write levels.
func quorumSeries(label, read, write string, readShare float64) Series {
	return Series{Label: label, Apply: func(c *scenario.Config) {
		c.Use("quorum", "replicas_per_region=1", "read="+read, "write="+write)
		if readShare > 0 {
			c.Workload = globLeaseWorkload(readShare)
		}
	}}
}

// glVsQuorum is a GlobLease series and a read-dominant quorum series
// (R=ONE/W=ALL) per read share.
func glVsQuorum(shares ...float64) []Series {
	var out []Series
	for _, s := range shares {
		out = append(out,
			leaseSeries(fmt.Sprintf("GlobLease %.0f%% reads", 100*s), s),
			quorumSeries(fmt.Sprintf("quorum ONE/ALL %.0f%% reads", 100*s), "ONE", "ALL", s))
	}
	return out
}

// leaseBound is GlobLease §V.C's bound on lease overhead per read:
// WriteThroughput/ReadThroughput + NumberOfKeys/(LeaseLength·ReadThroughput).
func leaseBound(readShare, rate float64, keys int, lease time.Duration) float64 {
	r, w := rate*readShare, rate*(1-readShare)
	return w/r + float64(keys)/(lease.Seconds()*r)
}

// renewalModel is the renewals per read our protocol should show with
// uniform keys and Poisson reads: each of a key's regions-1 non-master
// replicas renews at its first read after its lease expired, so a renewal
// cycle lasts L plus the wait for the next read, 1/λ, with λ the reads per
// second on that replica; reads at the master never renew.
func renewalModel(readShare, rate float64, keys, regions int, lease time.Duration) float64 {
	lambda := rate * readShare / float64(keys*regions)
	return float64(regions-1) / float64(regions) / (1 + lambda*lease.Seconds())
}

const renewalModelNote = "our model, not the seed's: each of a key's 3 non-master replicas renews at its first read after its lease expired; " +
	"with uniform keys and Poisson reads at λ = reads/s ÷ (10,000 keys × 4 replicas), renewals per read = (3/4)/(1 + λ·L)"

func globLeaseFig4() *Experiment {
	cross := MetricAboveMs(50)
	return &Experiment{
		Name:  "globlease-fig4",
		Title: "GlobLease vs Cassandra-style quorum (R=ONE/W=ALL): latency CDF at 85% and 95% reads (GlobLease Fig. 4)",
		Description: "GlobLease Fig. 4 in virtual time: the lease protocol (60 s leases, passive update when no lease is " +
			"valid) and the quorum baseline configured for reads (R=ONE, W=ALL) on the four GlobLease regions, uniform keys. " +
			"A GlobLease read is local when its region's replica is the key's master or holds a valid lease, and otherwise " +
			"renews the lease from the master (one round trip); a write goes to the master, which waits for every valid " +
			"lease holder (and, unless no lease is valid, a majority). The share above 50 ms is the share of requests " +
			"that crossed regions (globlease4's shortest round trip is 104 ms).",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.B, Fig. 4",
			Claims: []string{
				"Under 85% and 95% read dominant workload, Cassandra experience 15% and 5% cross region communications, which are more than 500 ms latency.",
				"GlobLease pays around 5% to 15% overhead in maintaining leases (cross region communication) in 85% and 95% read dominant workloads as shown in the figure. From the CDF, around 1/3 of the cross region communication in GlobLease are around 100 ms, another 1/3 are around 200 ms and the rest are, like Cassandra, around 500 ms.",
				"As a result, GlobLease outperforms Cassandra after 200 ms as shown in Fig. 4.",
			},
			Numbers: []RefNumber{
				{Series: "quorum ONE/ALL 85% reads", Metric: MetricAbove, Value: 15, Note: "§V.B text: Cassandra's share above 500 ms"},
				{Series: "quorum ONE/ALL 95% reads", Metric: MetricAbove, Value: 5, Note: "§V.B text: Cassandra's share above 500 ms"},
				{Series: "GlobLease 85% reads", Metric: cross, Value: 15, Note: "§V.B text: GlobLease's cross-region share, 5–15% (15% read at 85% reads, 5% at 95%)"},
				{Series: "GlobLease 95% reads", Metric: cross, Value: 5, Note: "§V.B text: GlobLease's cross-region share, 5–15% (15% read at 85% reads, 5% at 95%)"},
				{Series: "GlobLease 85% reads", Metric: MetricAbove, Value: 5, Note: "inferred: about 1/3 of GlobLease's cross-region requests are near 500 ms"},
				{Series: "GlobLease 95% reads", Metric: MetricAbove, Value: 1.7, Note: "inferred: about 1/3 of GlobLease's cross-region requests are near 500 ms"},
			},
		},
		Workload: "GlobLease Table II (10,000 keys × 10 KB, 1,000 req/s from 2,000 client threads, uniform), read share per series; 120 s warm-up, 60 s measured",
		Base:     globLeaseEval(500),
		Series:   glVsQuorum(0.85, 0.95),
		Metrics:  []string{cross, MetricAboveMs(200), MetricAbove, MetricReadMean, MetricWriteMean, MetricRenewalsPerRead},
		Figures:  []Figure{FigCDF, FigRegionBars, FigTimeSeries},
		// The real runtime at reduced scale: one process per region, WAN
		// emulated, 1,000 records primed with one read per region.
		Real: globLeaseReal,
	}
}

func globLeaseFig5() *Experiment {
	var refs []RefNumber
	for _, s := range []float64{0.75, 0.85, 0.95} {
		w := 100 * (1 - s)
		refs = append(refs,
			RefNumber{Series: fmt.Sprintf("quorum ONE/ALL %.0f%% reads", 100*s), Metric: MetricAbove, Value: w,
				Note: "Cassandra's share = its write share: every write waits for the farthest region (§V.B; 85%/95% in its text, 75% inferred)"},
			RefNumber{Series: fmt.Sprintf("GlobLease %.0f%% reads", 100*s), Metric: MetricAbove, Value: w / 2,
				Note: "inferred: \"around 50%\" fewer high-latency requests than Cassandra (§V.B)"})
	}
	return &Experiment{
		Name:  "globlease-fig5",
		Title: "GlobLease vs quorum R=ONE/W=ALL: requests above 300 ms at 75/85/95% reads (GlobLease Fig. 5)",
		Description: "GlobLease Fig. 5 in virtual time: the share of high-latency requests (above 300 ms) of the lease " +
			"protocol and of the quorum baseline under three read-dominant workloads, in the same run. In globlease4 a " +
			"round trip above 300 ms is one of the 504 ms links (Ireland to US West and Japan, US East to Japan), so " +
			"GlobLease's share is its renewals and writes that cross one of them.",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.B, Fig. 5",
			Claims: []string{
				"Fig. 5 zooms in on the high latency requests (above 300 ms) in Fig. 4 under three read dominant workloads (75%, 85% and 95%).",
				"GlobLease significantly reduces (around 50%) high latency requests comparing to Cassandra.",
			},
			Numbers: refs,
		},
		Workload: "GlobLease Table II (10,000 keys × 10 KB, 1,000 req/s from 2,000 client threads, uniform), read share per series; 120 s warm-up, 60 s measured",
		Base:     globLeaseEval(300),
		Series:   glVsQuorum(0.75, 0.85, 0.95),
		Metrics:  []string{MetricAbove, MetricAboveMs(50), MetricRenewalsPerRead},
	}
}

// readShareSweep sweeps the Table II workload's read share (values in %).
func readShareSweep(percents []float64, metrics ...string) *Sweep {
	return &Sweep{
		Param:   "reads (%)",
		Values:  percents,
		Apply:   func(c *scenario.Config, v float64) { c.Workload = globLeaseWorkload(v / 100) },
		Metrics: metrics,
	}
}

// readSharePercents are the read shares (%) of the read/write sweeps.
var readSharePercents = []float64{50, 75, 85, 95, 99}

func globLeaseFig6() *Experiment {
	var refs []RefNumber
	for _, x := range readSharePercents {
		refs = append(refs,
			RefNumber{Series: "GlobLease", X: x, Metric: MetricRenewalsPerRead, Value: leaseBound(x/100, globLeaseRate, globLeaseKeys, globLeaseLease),
				Note: "the seed's bound W/R + Keys/(Lease·R) at 1,000 req/s, 10,000 keys, 60 s leases (§V.C)"},
			RefNumber{Series: "GlobLease", X: x, Metric: MetricRenewalsPerRead, Value: renewalModel(x/100, globLeaseRate, globLeaseKeys, globLeaseRegions, globLeaseLease),
				Note: renewalModelNote})
	}
	return &Experiment{
		Name:  "globlease-fig6",
		Title: "GlobLease lease-maintenance overhead vs the paper's bound, read/write ratio sweep (GlobLease Fig. 6)",
		Description: "GlobLease Fig. 6 in virtual time: lease-maintenance overhead per read as the read share varies, at " +
			"1,000 req/s with 60 s leases, beside the quorum baseline (R=ONE/W=ALL) in the same run. Renewals per read " +
			"counts lease.renew messages (one per renewal round; retries after a lost grant included) over measured " +
			"reads: it is what the paper's bound counts, a write's cost there being the renewal its invalidation causes. " +
			"Our writes update lease holders instead of invalidating them, so every renewal here is a lease that expired. " +
			"Lease messages per read counts lease.renew + lease.grant + lease.grant_ack, the messages that exist only to " +
			"hold leases (writes' update messages are not counted: a quorum write at ALL sends as many). Messages per " +
			"operation counts every message between nodes, for both systems: GlobLease's minus the baseline's is the " +
			"paper's y-axis, extra messages compared to Cassandra.",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.C, Fig. 6",
			Claims: []string{
				"The increasing portion of write request imposes more lease maintenance overhead on GlobLease since writes trigger lease invalidation and cause future lease renewals.",
				"The y-axis in Fig. 6 shows the extra lease maintenance messages comparing to Cassandra under throughput of 1000 request per second and 60 second lease. The overhead of lease maintenance is bounded by WriteThroughput/ReadThroughput + NumberOfKeys/(LeaseLength·ReadThroughput).",
			},
			Numbers: refs,
		},
		Workload: "GlobLease Table II (10,000 keys × 10 KB, 1,000 req/s from 2,000 client threads, uniform), read share swept; 120 s warm-up, 60 s measured",
		Base:     globLeaseEval(500),
		Series: []Series{
			leaseSeries("GlobLease", 0),
			quorumSeries("quorum ONE/ALL", "ONE", "ALL", 0),
		},
		Sweep: readShareSweep(readSharePercents, MetricRenewalsPerRead, MetricLeaseMsgsPerRead, MetricMsgsPerOp),
	}
}

func globLeaseFig7() *Experiment {
	return &Experiment{
		Name:  "globlease-fig7",
		Title: "GlobLease vs quorum: average latency as the read/write ratio varies at 1,000 req/s (GlobLease Fig. 7)",
		Description: "GlobLease Fig. 7 in virtual time: mean latency of the lease protocol and of both quorum baselines " +
			"(R=ONE/W=ALL, the paper's choice for read-dominant workloads, and R=ALL/W=ONE, its choice for write-dominant " +
			"ones) from 5% to 95% reads, in the same run. No master migration: each key's master stays where it hashes " +
			"(the paper's write-dominant runs migrated masters to the writing region, §V.B).",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.D, Fig. 7",
			Claims: []string{
				"As shown in Fig. 7, GlobLease has larger average latency comparing to Cassandra when the write ratio is low. This is because that GlobLease pays overhead to maintain leases as evaluated in Fig. 6.",
				"However, GlobLease outperforms Cassandra when the write ratio grows.",
			},
		},
		Workload: "GlobLease Table II (10,000 keys × 10 KB, 1,000 req/s from 2,000 client threads, uniform), read share swept; 120 s warm-up, 60 s measured",
		Base:     globLeaseEval(300),
		Series: []Series{
			leaseSeries("GlobLease", 0),
			quorumSeries("quorum ONE/ALL", "ONE", "ALL", 0),
			quorumSeries("quorum ALL/ONE", "ALL", "ONE", 0),
		},
		Sweep:   readShareSweep([]float64{5, 25, 50, 75, 95}, MetricMean, MetricReadMean, MetricWriteMean, MetricAbove),
		Figures: []Figure{FigSweep},
	}
}

func globLeaseFig8() *Experiment {
	return &Experiment{
		Name:  "globlease-fig8",
		Title: "GlobLease: read and write latency as the lease length varies (GlobLease Fig. 8)",
		Description: "GlobLease Fig. 8 in virtual time: mean read and write latency of the lease protocol at 95% reads " +
			"(read-dominant) and 5% reads (write-dominant) as the lease length varies, at 1,000 req/s, beside the quorum " +
			"baseline for each workload (R=ONE/W=ALL and R=ALL/W=ONE; they do not depend on the lease length). The " +
			"warm-up is two lease lengths (at least 60 s), so every point is measured once leases have turned over.",
		Reference: Reference{
			Source: "GlobLease paper (seed 003) §V.E, Fig. 8",
			Claims: []string{
				"With the increasing length of the lease, average read latency improves significantly since, in a valid leasing time, more read accesses can be completed locally. In contrast, average write latency increases since more cross-region updates are needed if there are valid leases in non-master nodes.",
				"With the increasing length of the lease, they approximate the same steady value. Specifically, this steady value, which is around 60s in our case, is also influenced by the throughput of the system and the number of key entries.",
			},
		},
		Workload: "GlobLease Table II (10,000 keys × 10 KB, 1,000 req/s from 2,000 client threads, uniform), 95% or 5% reads; warm-up max(60 s, 2 leases), 60 s measured",
		Base:     globLeaseEval(500),
		Series: []Series{
			leaseSeries("GlobLease 95% reads", 0.95),
			leaseSeries("GlobLease 5% reads", 0.05),
			quorumSeries("quorum ONE/ALL 95% reads", "ONE", "ALL", 0.95),
			quorumSeries("quorum ALL/ONE 5% reads", "ALL", "ONE", 0.05),
		},
		Sweep: &Sweep{
			Param:  "lease length (s)",
			Values: []float64{5, 15, 30, 60, 120},
			Apply: func(c *scenario.Config, v float64) {
				lease := time.Duration(v * float64(time.Second))
				c.WithIfHas(fmt.Sprintf("lease_length=%s", lease))
				c.Warmup = globLeaseWarmup(lease)
				c.Duration = c.Warmup + globLeaseMeasured
			},
			Metrics: []string{MetricReadMean, MetricWriteMean, MetricRenewalsPerRead},
		},
		Figures: []Figure{FigSweep},
	}
}
