package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Stat is one value a keyspace's protocol reports about itself: a counter
// (only ever grows while the node runs) or a gauge.
type Stat struct {
	// Name is the series name without the "lightcone_" prefix, e.g.
	// "lease_renewals_total". Counters end in _total.
	Name  string
	Help  string
	Gauge bool
	Value float64
}

// StatsFunc reads every keyspace's protocol statistics, by keyspace name.
// It is called at each scrape, from the scraping goroutine; an error
// exports nothing for that scrape.
type StatsFunc func() (map[string][]Stat, error)

// AddKeyspaceStats exports, at every scrape, what read returns: each Stat
// of keyspace ks as lightcone_<Name>{node, region, keyspace=ks}. The
// series are not declared in advance (an unchecked collector), so a
// protocol can add a counter without touching this package; a name must
// keep one help text and one type. On a nil *Metrics it does nothing.
func (m *Metrics) AddKeyspaceStats(read StatsFunc) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&statsCollector{read: read, constLabels: prometheus.Labels{"node": m.labels.Node, "region": m.labels.Region}})
}

// statsCollector is the collector AddKeyspaceStats registers.
type statsCollector struct {
	read        StatsFunc
	constLabels prometheus.Labels
}

// Describe sends nothing: the collector is unchecked.
func (c *statsCollector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the statistics once and sends them, keyspaces in name
// order.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	stats, err := c.read()
	if err != nil {
		return
	}
	names := make([]string, 0, len(stats))
	for ks := range stats {
		names = append(names, ks)
	}
	slices.Sort(names)
	for _, ks := range names {
		for _, s := range stats[ks] {
			d := prometheus.NewDesc("lightcone_"+s.Name, s.Help, []string{"keyspace"}, c.constLabels)
			t := prometheus.CounterValue
			if s.Gauge {
				t = prometheus.GaugeValue
			}
			mt, err := prometheus.NewConstMetric(d, t, s.Value, ks)
			if err != nil {
				mt = prometheus.NewInvalidMetric(d, err)
			}
			ch <- mt
		}
	}
}
