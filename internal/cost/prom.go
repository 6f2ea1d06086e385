package cost

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	descRequests = prometheus.NewDesc("lightcone_storage_requests_total",
		"Storage-service requests executed, by the service's region and operation (storagesvc operations for hosted services; an S3 backend's S3 requests, as s3:<API>).",
		[]string{"region", "op"}, nil)
	descTransfer = prometheus.NewDesc("lightcone_storage_transfer_bytes_total",
		"Bytes sent between regions for storage requests and answers (from_region sends, to_region receives; \"internet\" is outside the world).",
		[]string{"from_region", "to_region"}, nil)
	descStored = prometheus.NewDesc("lightcone_storage_stored_bytes",
		"Bytes stored by a region's storage service (hosted backends only: an S3 backend's are not known).",
		[]string{"region"}, nil)
)

// Collector exposes the accountant's counts as Prometheus metrics (register
// it on a node's registry): lightcone_storage_requests_total{region,op},
// lightcone_storage_transfer_bytes_total{from_region,to_region} and
// lightcone_storage_stored_bytes{region}. Series appear once non-zero.
func (a *Accountant) Collector() prometheus.Collector { return collector{a} }

type collector struct{ a *Accountant }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRequests
	ch <- descTransfer
	ch <- descStored
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	a.mu.Lock()
	defer a.mu.Unlock()
	name := func(i int) string {
		if i == len(a.names) {
			return "internet"
		}
		return a.names[i]
	}
	for r, m := range a.requests {
		for _, op := range sortedKeys(m) {
			ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(m[op]), a.names[r], op)
		}
		for to, b := range a.transfer[r] {
			if b > 0 {
				ch <- prometheus.MustNewConstMetric(descTransfer, prometheus.CounterValue, float64(b), a.names[r], name(to))
			}
		}
		if a.stored[r] > 0 {
			ch <- prometheus.MustNewConstMetric(descStored, prometheus.GaugeValue, float64(a.stored[r]), a.names[r])
		}
	}
}
