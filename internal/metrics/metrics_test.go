package metrics

import (
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var testLabels = Labels{Node: "n1", Region: "eu", Keyspace: "ks", Protocol: "globlease"}

// scrape returns the text exposition of m's registry.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return string(body)
}

// series renders one series of a metric of testLabels' node as the text
// exposition does: identity and given labels sorted by name, except le,
// which comes last.
func series(name string, kv ...string) string {
	labels := map[string]string{
		"node": testLabels.Node, "region": testLabels.Region,
		"keyspace": testLabels.Keyspace, "protocol": testLabels.Protocol,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	le, hasLE := labels["le"]
	delete(labels, "le")
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	if hasLE {
		parts = append(parts, fmt.Sprintf("le=%q", le))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func TestScrapeShowsRecordedValues(t *testing.T) {
	m := New(testLabels)
	m.Request("get", "strong", 3*time.Millisecond, CodeOK)
	m.Request("get", "strong", 250*time.Millisecond, CodeOK)
	m.Request("put", "eventual", time.Second, CodeTimeout)
	m.MessageSent("lease_renew", 100)
	m.MessageSent("lease_renew", 50)
	m.MessageReceived("lease_ack", 30)
	m.Fsync(200 * time.Microsecond)
	m.InflightAdd(3)
	m.InflightAdd(-1)
	m.LoopBatch(8, 2*time.Millisecond)

	out := scrape(t, m)
	for _, want := range []string{
		series("lightcone_request_duration_seconds_count", "code", "ok", "level", "strong", "op", "get") + " 2",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "0.005") + " 1",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "0.3") + " 2",
		series("lightcone_requests_total", "code", "ok", "level", "strong", "op", "get") + " 2",
		series("lightcone_requests_total", "code", "timeout", "level", "eventual", "op", "put") + " 1",
		series("lightcone_messages_sent_total", "kind", "lease_renew") + " 2",
		series("lightcone_message_bytes_sent_total", "kind", "lease_renew") + " 150",
		series("lightcone_messages_received_total", "kind", "lease_ack") + " 1",
		series("lightcone_message_bytes_received_total", "kind", "lease_ack") + " 30",
		series("lightcone_fsync_duration_seconds_count") + " 1",
		series("lightcone_fsync_duration_seconds_bucket", "le", "0.00025") + " 1",
		series("lightcone_requests_inflight") + " 2",
		series("lightcone_loop_batch_events_bucket", "le", "8") + " 1",
		series("lightcone_loop_batch_events_sum") + " 8",
		series("lightcone_loop_batch_duration_seconds_count") + " 1",
		"go_goroutines",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q; got:\n%s", want, out)
		}
	}
}

func TestRequestBuckets(t *testing.T) {
	have := map[float64]bool{}
	for _, b := range requestBucketsSec {
		have[b] = true
	}
	for _, ms := range []float64{0.1, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10000} {
		if !have[ms/1000] {
			t.Errorf("request buckets lack %g ms; have %v", ms, requestBucketsSec)
		}
	}
	for i := 1; i < len(requestBucketsSec); i++ {
		if requestBucketsSec[i] <= requestBucketsSec[i-1] {
			t.Errorf("request buckets not increasing at %d: %v", i, requestBucketsSec)
		}
	}
}

func TestMetricNamesPassLint(t *testing.T) {
	m := New(testLabels)
	m.Request("get", "strong", time.Millisecond, CodeOK)
	m.MessageSent("k", 1)
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatalf("GatherAndLint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestNilMetricsIsNoOp(t *testing.T) {
	var m *Metrics
	m.Request("get", "strong", time.Millisecond, CodeOK)
	m.MessageSent("k", 1)
	m.MessageReceived("k", 1)
	m.Fsync(time.Millisecond)
	m.InflightAdd(1)
	m.LoopBatch(1, time.Millisecond)
	reg := m.Registry()
	if reg == nil {
		t.Fatal("(*Metrics)(nil).Registry() = nil; want an empty registry")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if len(mfs) != 0 {
		t.Errorf("nil Metrics registry has %d families; want 0", len(mfs))
	}
}

func TestNodesDoNotShareRegistries(t *testing.T) {
	a := New(Labels{Node: "n1"})
	b := New(Labels{Node: "n2"})
	a.Request("get", "strong", time.Millisecond, CodeOK)
	if got := testutil.CollectAndCount(b.requestCount); got != 0 {
		t.Errorf("n2 has %d request series after a request on n1; want 0", got)
	}
	if got := testutil.ToFloat64(a.requestCount); got != 1 {
		t.Errorf("n1 requests = %g; want 1", got)
	}
}

func TestNegativeInputs(t *testing.T) {
	m := New(testLabels)
	m.Request("get", "strong", -time.Second, CodeOK)
	m.MessageSent("k", -5)
	m.LoopBatch(-1, -time.Second)
	m.Fsync(-time.Second)
	out := scrape(t, m)
	for _, want := range []string{
		series("lightcone_request_duration_seconds_sum", "code", "ok", "level", "strong", "op", "get") + " 0",
		series("lightcone_message_bytes_sent_total", "kind", "k") + " 0",
		series("lightcone_loop_batch_events_sum") + " 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

func TestSeriesAreBounded(t *testing.T) {
	m := New(testLabels)
	for i := range MaxRequestSeries + 100 {
		m.Request(fmt.Sprintf("op%d", i), "strong", time.Millisecond, CodeOK)
	}
	m.Request("op-new", "strong", time.Millisecond, "weird")
	for i := range MaxMessageKinds + 10 {
		m.MessageSent(fmt.Sprintf("kind%d", i), 1)
	}
	if got, want := testutil.CollectAndCount(m.requestCount), MaxRequestSeries+2; got != want {
		t.Errorf("request series = %d; want %d", got, want)
	}
	if got, want := testutil.CollectAndCount(m.msgSent), MaxMessageKinds+1; got != want {
		t.Errorf("message kinds = %d; want %d", got, want)
	}
	if got := testutil.ToFloat64(m.requestCount.WithLabelValues(overflow, overflow, CodeOK)); got != 100 {
		t.Errorf("overflow ok requests = %g; want 100", got)
	}
	if got := testutil.ToFloat64(m.requestCount.WithLabelValues(overflow, overflow, overflow)); got != 1 {
		t.Errorf("overflow requests with unknown code = %g; want 1", got)
	}
	if got := testutil.ToFloat64(m.msgSent.WithLabelValues(overflow)); got != 10 {
		t.Errorf("overflow messages = %g; want 10", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	m := New(testLabels)
	const goroutines, perG = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				op := fmt.Sprintf("op%d", i%7)
				m.InflightAdd(1)
				m.Request(op, "strong", time.Duration(i)*time.Microsecond, CodeOK)
				m.MessageSent(fmt.Sprintf("kind%d", (g+i)%5), i)
				m.MessageReceived("ack", i)
				m.Fsync(time.Microsecond)
				m.LoopBatch(i, time.Microsecond)
				m.InflightAdd(-1)
			}
		})
	}
	wg.Wait()
	var total float64
	for i := range 7 {
		total += testutil.ToFloat64(m.requestCount.WithLabelValues(fmt.Sprintf("op%d", i), "strong", CodeOK))
	}
	if total != goroutines*perG {
		t.Errorf("requests = %g; want %d", total, goroutines*perG)
	}
	if got := testutil.ToFloat64(m.inflight); got != 0 {
		t.Errorf("inflight = %g; want 0", got)
	}
}

func TestRequestDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	m := New(testLabels)
	m.Request("get", "strong", time.Millisecond, CodeOK)
	m.MessageSent("k", 1)
	if n := testing.AllocsPerRun(1000, func() {
		m.Request("get", "strong", time.Millisecond, CodeOK)
	}); n != 0 {
		t.Errorf("Request allocates %g times per call; want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		m.MessageSent("k", 10)
		m.MessageReceived("k", 10)
	}); n != 0 {
		t.Errorf("MessageSent+MessageReceived allocate %g times per call; want 0", n)
	}
}

func BenchmarkRequest(b *testing.B) {
	m := New(testLabels)
	ops := []string{"get", "put", "delete"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.Request(ops[i%len(ops)], "strong", time.Duration(i)*time.Microsecond, CodeOK)
			i++
		}
	})
}

func BenchmarkRequestNil(b *testing.B) {
	var m *Metrics
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Request("get", "strong", time.Duration(i), CodeOK)
	}
}

// TestRequestNIsNRequests: n requests recorded at once scrape as n
// recorded one by one, on a bound (le) and between bounds, in the same
// series, and the help and type are Prometheus's histogram's.
func TestRequestNIsNRequests(t *testing.T) {
	one, many := New(testLabels), New(testLabels)
	for _, d := range []time.Duration{5 * time.Millisecond, 7 * time.Millisecond, 20 * time.Second} {
		for range 16 {
			one.Request("get", "strong", d, CodeOK)
		}
		many.RequestN("get", "strong", d, CodeOK, 16)
	}
	a, b := scrape(t, one), scrape(t, many)
	for _, want := range []string{
		"# TYPE lightcone_request_duration_seconds histogram",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "0.002") + " 0",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "0.005") + " 16",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "0.01") + " 32",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "10") + " 32",
		series("lightcone_request_duration_seconds_bucket", "code", "ok", "level", "strong", "op", "get", "le", "+Inf") + " 48",
		series("lightcone_request_duration_seconds_sum", "code", "ok", "level", "strong", "op", "get") + " 320.192",
		series("lightcone_request_duration_seconds_count", "code", "ok", "level", "strong", "op", "get") + " 48",
		series("lightcone_requests_total", "code", "ok", "level", "strong", "op", "get") + " 48",
	} {
		if !strings.Contains(a, want) || !strings.Contains(b, want) {
			t.Errorf("one by one has %q: %v; at once: %v", want, strings.Contains(a, want), strings.Contains(b, want))
		}
	}
}
