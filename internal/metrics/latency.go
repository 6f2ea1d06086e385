package metrics

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latency is one series of lightcone_request_duration_seconds: a histogram
// over requestBucketsSec that takes n observations of one duration in one
// step, which prometheus.Histogram cannot. The node records the replies of
// a pipeline, which share their arrival and their release, that way: one
// step per pipeline instead of a Histogram.Observe (a few atomic
// operations and a compare-and-swap loop for the sum) per request.
type latency struct {
	// counts[i] counts the observations in bucket i alone (not
	// cumulative); the last is +Inf.
	counts [len(requestBucketsSecArr) + 1]atomic.Uint64
	sumNs  atomic.Int64 // the durations' sum, in nanoseconds
}

// requestBucketsSecArr fixes the number of request buckets for latency's
// array; requestBucketsSec is its slice.
var requestBucketsSecArr = [...]float64{
	0.0001, 0.0002, 0.0005,
	0.001, 0.002, 0.005,
	0.01, 0.02, 0.05,
	0.1, 0.2, 0.3, 0.5,
	1, 2, 5, 10,
}

// observeN records n observations of d (a negative d counts as zero).
func (l *latency) observeN(d time.Duration, n int) {
	d = max(d, 0)
	// The first bucket whose upper bound is at or above d: Prometheus
	// buckets count observations less than or equal to their bound.
	i := sort.SearchFloat64s(requestBucketsSec, d.Seconds())
	l.counts[i].Add(uint64(n))
	l.sumNs.Add(int64(d) * int64(n))
}

// latencyCollector exposes every request series' latency (the series are
// those of Metrics.requests, with its bound and its overflow series).
type latencyCollector struct {
	m    *Metrics
	desc *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector. Each bucket is read once, and
// the count is their total, so a scrape is a consistent histogram even
// while observations land (each at most one scrape late).
func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m.requests.m.Load()
	if m == nil {
		return
	}
	for k, child := range *m { // the registry sorts what it gathers
		l := child.dur
		buckets := make(map[float64]uint64, len(requestBucketsSec))
		var cum uint64
		for i, ub := range requestBucketsSec {
			cum += l.counts[i].Load()
			buckets[ub] = cum
		}
		cum += l.counts[len(requestBucketsSec)].Load()
		ch <- prometheus.MustNewConstHistogram(c.desc, cum, float64(l.sumNs.Load())/1e9, buckets, k.op, k.level, k.code)
	}
}
