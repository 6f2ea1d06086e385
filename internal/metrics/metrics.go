package metrics

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Request outcome codes, the values of the code label of
// lightcone_request_duration_seconds and lightcone_requests_total.
const (
	CodeOK          = "ok"
	CodeTimeout     = "timeout"
	CodeUnavailable = "unavailable"
	CodeInvalid     = "invalid"
)

// Limits on the number of distinct label combinations one node records; see
// the package documentation for what happens beyond them.
const (
	// MaxRequestSeries bounds the distinct (op, level, code) combinations.
	MaxRequestSeries = 1024
	// MaxMessageKinds bounds the distinct message kinds.
	MaxMessageKinds = 256
)

// overflow is the label value that stands for every value past a limit.
const overflow = "other"

// Labels identify the node whose metrics a Metrics records. Every
// lightcone_* series carries them as constant labels.
type Labels struct {
	Node     string // node ID, e.g. "n1"
	Region   string // region the node runs in, e.g. "eu"
	Keyspace string // keyspace the node serves
	Protocol string // replication protocol the node runs, e.g. "globlease"
}

// Bucket boundaries, in the unit of the metric they belong to.
var (
	// requestBucketsSec spans 0.1 ms to 10 s, roughly ×2–2.5 apart, with
	// 300 ms added because it is a typical cross-continent RTT.
	requestBucketsSec = requestBucketsSecArr[:]
	// fsyncBucketsSec spans 50 µs (NVMe with a write cache) to 1 s (a
	// struggling network disk).
	fsyncBucketsSec = []float64{
		0.00005, 0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5, 1,
	}
	// batchBucketsSec spans 10 µs (an in-memory store) to 1 s.
	batchBucketsSec = []float64{
		0.00001, 0.000025, 0.00005,
		0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5, 1,
	}
	// batchBucketsEvents are powers of two from 1 to 4096.
	batchBucketsEvents = prometheus.ExponentialBuckets(1, 2, 13)
)

// Metrics records one node's metrics in the node's own registry. A nil
// *Metrics is valid and records nothing. All methods are safe for
// concurrent use.
type Metrics struct {
	reg    *prometheus.Registry
	labels Labels // as given to New, made valid UTF-8

	requestDur   *latencyCollector
	requestCount *prometheus.CounterVec
	inflight     prometheus.Gauge

	msgSent      *prometheus.CounterVec
	msgSentBytes *prometheus.CounterVec
	msgRecv      *prometheus.CounterVec
	msgRecvBytes *prometheus.CounterVec

	fsync       prometheus.Observer
	batchEvents prometheus.Observer
	batchDur    prometheus.Observer

	requests cowMap[requestKey, *requestChild]
	messages cowMap[string, messageChild]
	// lastRequest is the series Request used last: most requests in a
	// row share their labels, and comparing three strings that are
	// mostly the same constants costs less than hashing them for the map.
	lastRequest atomic.Pointer[requestChild]
}

// requestKey is one combination of the per-call labels of Request.
type requestKey struct{ op, level, code string }

// requestChild holds the resolved series of one requestKey.
type requestChild struct {
	key   requestKey
	dur   *latency
	count prometheus.Counter
}

// messageChild holds the resolved series of one message kind.
type messageChild struct {
	sent, sentBytes, recv, recvBytes prometheus.Counter
}

// New returns the metrics of the node that l describes, registered, along
// with the Go runtime and process collectors, in a new registry.
func New(l Labels) *Metrics {
	constLabels := prometheus.Labels{
		"node":     strings.ToValidUTF8(l.Node, "\uFFFD"),
		"region":   strings.ToValidUTF8(l.Region, "\uFFFD"),
		"keyspace": strings.ToValidUTF8(l.Keyspace, "\uFFFD"),
		"protocol": strings.ToValidUTF8(l.Protocol, "\uFFFD"),
	}
	requestLabels := []string{"op", "level", "code"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		labels: Labels{Node: constLabels["node"], Region: constLabels["region"],
			Keyspace: constLabels["keyspace"], Protocol: constLabels["protocol"]},
		requestCount: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lightcone_requests_total",
			Help:        "Client requests finished.",
			ConstLabels: constLabels,
		}, requestLabels),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "lightcone_requests_inflight",
			Help:        "Client requests accepted and not yet answered.",
			ConstLabels: constLabels,
		}),
		msgSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lightcone_messages_sent_total",
			Help:        "Protocol messages sent to other nodes.",
			ConstLabels: constLabels,
		}, []string{"kind"}),
		msgSentBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lightcone_message_bytes_sent_total",
			Help:        "Encoded bytes of protocol messages sent to other nodes.",
			ConstLabels: constLabels,
		}, []string{"kind"}),
		msgRecv: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lightcone_messages_received_total",
			Help:        "Protocol messages received from other nodes.",
			ConstLabels: constLabels,
		}, []string{"kind"}),
		msgRecvBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lightcone_message_bytes_received_total",
			Help:        "Encoded bytes of protocol messages received from other nodes.",
			ConstLabels: constLabels,
		}, []string{"kind"}),
	}
	fsync := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "lightcone_fsync_duration_seconds",
		Help:        "Duration of one fsync of the node's store.",
		ConstLabels: constLabels,
		Buckets:     fsyncBucketsSec,
	})
	batchEvents := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "lightcone_loop_batch_events",
		Help:        "Events the event loop handled in one group commit.",
		ConstLabels: constLabels,
		Buckets:     batchBucketsEvents,
	})
	batchDur := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "lightcone_loop_batch_duration_seconds",
		Help:        "Duration of one event-loop group commit, fsync included.",
		ConstLabels: constLabels,
		Buckets:     batchBucketsSec,
	})
	m.fsync, m.batchEvents, m.batchDur = fsync, batchEvents, batchDur
	m.requestDur = &latencyCollector{m: m, desc: prometheus.NewDesc("lightcone_request_duration_seconds",
		"Latency of client requests, from arrival at the node to reply.", requestLabels, constLabels)}
	m.requests.max = MaxRequestSeries
	m.messages.max = MaxMessageKinds

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requestDur, m.requestCount, m.inflight,
		m.msgSent, m.msgSentBytes, m.msgRecv, m.msgRecvBytes,
		fsync, batchEvents, batchDur,
	)
	return m
}

// GaugeFunc exports f, read at each scrape, as the gauge name with the
// node's identity labels. On a nil *Metrics it does nothing.
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: m.constLabels()}, f))
}

// constLabels are the node's identity labels.
func (m *Metrics) constLabels() prometheus.Labels {
	return prometheus.Labels{"node": m.labels.Node, "region": m.labels.Region, "keyspace": m.labels.Keyspace, "protocol": m.labels.Protocol}
}

// Registry returns the node's registry, to be served over HTTP. On a nil
// *Metrics it returns a new, empty registry.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return prometheus.NewRegistry()
	}
	return m.reg
}

// Request records one finished client request: its operation, consistency
// level, latency and outcome code (one of the Code* constants). A negative
// d counts as zero.
func (m *Metrics) Request(op, level string, d time.Duration, code string) {
	m.RequestN(op, level, d, code, 1)
}

// RequestN records n finished client requests of one operation, level and
// outcome that took d each: a pipeline's requests, which share their
// arrival and their reply. It costs what one Request costs.
func (m *Metrics) RequestN(op, level string, d time.Duration, code string, n int) {
	if m == nil || n <= 0 {
		return
	}
	c := m.request(requestKey{op, level, code})
	c.dur.observeN(d, n)
	c.count.Add(float64(n))
}

// request returns the series of k, building it if needed.
func (m *Metrics) request(k requestKey) *requestChild {
	c := m.lastRequest.Load()
	if c == nil || c.key != k {
		var ok bool
		c, ok = m.requests.load(k)
		if !ok {
			c = m.requests.loadOrBuild(k, requestOverflow(k.code), m.newRequestChild)
		}
		m.lastRequest.Store(c)
	}
	return c
}

// requestOverflow returns the key under which a request past
// MaxRequestSeries is recorded. It keeps a known code, as the outcome is the
// most useful label to keep, and folds an unknown one too, so the overflow
// series stay bounded.
func requestOverflow(code string) requestKey {
	switch code {
	case CodeOK, CodeTimeout, CodeUnavailable, CodeInvalid:
		return requestKey{overflow, overflow, code}
	}
	return requestKey{overflow, overflow, overflow}
}

func (m *Metrics) newRequestChild(k requestKey) *requestChild {
	return &requestChild{
		key:   k,
		dur:   new(latency),
		count: m.requestCount.WithLabelValues(k.op, k.level, k.code),
	}
}

// MessageSent records one protocol message of the given kind and encoded
// size sent to another node.
func (m *Metrics) MessageSent(kind string, bytes int) {
	if m == nil {
		return
	}
	c := m.message(kind)
	c.sent.Inc()
	if bytes > 0 {
		c.sentBytes.Add(float64(bytes))
	}
}

// MessageReceived records one protocol message of the given kind and
// encoded size received from another node.
func (m *Metrics) MessageReceived(kind string, bytes int) {
	if m == nil {
		return
	}
	c := m.message(kind)
	c.recv.Inc()
	if bytes > 0 {
		c.recvBytes.Add(float64(bytes))
	}
}

func (m *Metrics) message(kind string) messageChild {
	if c, ok := m.messages.load(kind); ok {
		return c
	}
	return m.messages.loadOrBuild(kind, overflow, m.newMessageChild)
}

func (m *Metrics) newMessageChild(kind string) messageChild {
	return messageChild{
		sent:      m.msgSent.WithLabelValues(kind),
		sentBytes: m.msgSentBytes.WithLabelValues(kind),
		recv:      m.msgRecv.WithLabelValues(kind),
		recvBytes: m.msgRecvBytes.WithLabelValues(kind),
	}
}

// Fsync records the duration of one fsync of the node's store.
func (m *Metrics) Fsync(d time.Duration) {
	if m == nil {
		return
	}
	m.fsync.Observe(seconds(d))
}

// InflightAdd adds delta (negative when requests finish) to the number of
// client requests in flight.
func (m *Metrics) InflightAdd(delta int) {
	if m == nil {
		return
	}
	m.inflight.Add(float64(delta))
}

// LoopBatch records one group commit of the node's event loop: the number
// of events it handled and how long it took.
func (m *Metrics) LoopBatch(events int, d time.Duration) {
	if m == nil {
		return
	}
	m.batchEvents.Observe(float64(max(events, 0)))
	m.batchDur.Observe(seconds(d))
}

// seconds converts d to seconds, counting a negative duration (a clock
// stepping back under the caller) as zero.
func seconds(d time.Duration) float64 {
	return max(d, 0).Seconds()
}
