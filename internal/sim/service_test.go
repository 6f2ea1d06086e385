package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// svcWorld: regions a and b 40 ms apart (no jitter); b's storage service
// answers reads in 10 ms and writes in 20 ms (constant, or log-normal with
// the given p99s).
func svcWorld(t *testing.T, readP99, writeP99 float64) *topo.Topology {
	w, err := topo.Parse(fmt.Appendf(nil, `
name: svc
nodes_per_region: 1
regions: [{name: a}, {name: b}]
intra: {one_way_ms: 1}
links: [{from: a, to: b, one_way_ms: 40}]
storage_services:
  - {region: b, read: {median_ms: 10, p99_ms: %g}, write: {median_ms: 20, p99_ms: %g}}
`, readP99, writeP99))
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

// creator is a protocol client of a storage service: node 0 creates keys
// k0..k(n-1) in region 1's service one at a time with create-only Puts,
// retrying after a timeout under a new request ID. A retry answered
// "precondition failed" means an earlier attempt took effect though its
// answer never came: the outcome a lost answer leaves unknown, found out.
type creator struct {
	to      wire.NodeID // the service's address; 0: region 1's
	n       int
	timeout time.Duration
	cur     int    // key being created
	id      uint64 // its current attempt's request ID
	tries   int    // attempts at the current key
	sentAt  int64
	res     *creatorResult
}

type creatorResult struct {
	created, foundOut, stale, timeouts int
	rtts                               []time.Duration // first-attempt round trips
	getRTT                             time.Duration
	errs                               []error
}

func (c *creator) Start(e env.Env) {
	if e.Self() == 0 {
		c.send(e)
	}
}

func (c *creator) addr() wire.NodeID {
	if c.to == 0 {
		return storagesvc.Addr(1)
	}
	return c.to
}

func (c *creator) send(e env.Env) {
	c.id++
	c.tries++
	c.sentAt = e.Now()
	if c.cur == c.n { // last: one read
		e.Send(c.addr(), &storagesvc.Request{ID: c.id, Op: storagesvc.OpGet, Key: "k0"})
	} else {
		e.Send(c.addr(), &storagesvc.Request{ID: c.id, Op: storagesvc.OpPut, Key: fmt.Sprint("k", c.cur),
			Data: []byte("v"), Meta: storagesvc.Meta{"n": fmt.Sprint(c.cur)}, Cond: storagesvc.Cond{IfNoneMatch: true}})
	}
	e.SetTimer(c.timeout, c.id)
}

func (c *creator) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	r, ok := m.(*storagesvc.Response)
	if !ok || from != c.addr() {
		c.res.errs = append(c.res.errs, fmt.Errorf("got %s from n%d", m.Kind(), from))
		return
	}
	if r.ID != c.id {
		c.res.stale++ // a duplicate, or the answer to an attempt given up on
		return
	}
	rtt := time.Duration(e.Now() - c.sentAt)
	first := c.tries == 1
	switch {
	case c.cur == c.n:
		c.res.getRTT = rtt
		if err := r.Err(); err != nil || string(r.Data) != "v" {
			c.res.errs = append(c.res.errs, fmt.Errorf("get k0: %v %q", err, r.Data))
		}
		c.cur++
		return
	case r.Code == storagesvc.OK:
		c.res.created++
		if first {
			c.res.rtts = append(c.res.rtts, rtt)
		}
	case errors.Is(r.Err(), storagesvc.ErrPreconditionFailed):
		// An earlier attempt, or a duplicate of this one, created the
		// key; its own answer was lost or is still on its way.
		c.res.foundOut++
	default:
		c.res.errs = append(c.res.errs, fmt.Errorf("k%d: %v", c.cur, r.Err()))
	}
	c.cur++
	c.tries = 0
	c.send(e)
}

func (c *creator) Timer(e env.Env, p any) {
	if p.(uint64) != c.id || c.cur > c.n {
		return
	}
	c.res.timeouts++
	c.send(e)
}

func (c *creator) Request(env.Env, *wire.Request) {}

func runCreator(t *testing.T, seed uint64, tp *topo.Topology, net NetConfig, n int) (*Sim, *creatorResult) {
	return runCreatorAt(t, seed, tp, net, n, 0)
}

func runCreatorAt(t *testing.T, seed uint64, tp *topo.Topology, net NetConfig, n int, to wire.NodeID) (*Sim, *creatorResult) {
	res := &creatorResult{}
	// The client runs inside the keyspace mux, as in a server, and every
	// message travels encoded: the runtime unwraps the envelope to reach
	// the request and wraps the answer back to the keyspace.
	factory, err := keyspace.NewFactory([]keyspace.Def{{Name: "default", Factory: func(wire.NodeID) env.Replica {
		return &creator{to: to, n: n, timeout: 400 * time.Millisecond, res: res}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	inner := MustCodec(storagesvc.MessageTypes())
	s := New(Config{Seed: seed, Topology: tp, Factory: factory, Net: net, Log: slog.New(slog.DiscardHandler),
		Codec: MustCodec(keyspace.MessageTypes(inner))})
	s.Run(int64(time.Hour))
	for _, err := range res.errs {
		t.Errorf("seed %d: %v", seed, err)
	}
	return s, res
}

// TestServiceReplicas: replica 2 of region b's service is its own store,
// answering from its own address with region b's service times; replica 0
// (the region's service) holds nothing of it.
func TestServiceReplicas(t *testing.T) {
	to := wire.StorageReplica(1, 2)
	s, res := runCreatorAt(t, 1, svcWorld(t, 0, 0), NetConfig{}, 3, to)
	if res.created != 3 || len(res.rtts) != 3 || res.rtts[0] != 100*time.Millisecond {
		t.Fatalf("created %d, first-attempt round trips %v; want 3 of 100ms", res.created, res.rtts)
	}
	if s.ServiceAt(to).Len() != 3 || s.Service(1).Len() != 0 || s.ServiceAt(wire.StorageReplica(1, 1)).Len() != 0 {
		t.Errorf("replica 2 holds %d objects, replica 0 %d, replica 1 %d; want 3, 0, 0",
			s.ServiceAt(to).Len(), s.Service(1).Len(), s.ServiceAt(wire.StorageReplica(1, 1)).Len())
	}
	if s.ServiceAt(wire.StorageReplica(5, 0)) != nil {
		t.Error("ServiceAt a region the world lacks is not nil")
	}
}

// TestServiceRoundTripLatency: a request to another region's service takes
// the one-way delay there, the service time (writes 20 ms, reads 10 ms)
// and the delay back.
func TestServiceRoundTripLatency(t *testing.T) {
	s, res := runCreator(t, 1, svcWorld(t, 0, 0), NetConfig{}, 3)
	if res.created != 3 || len(res.rtts) != 3 || res.timeouts != 0 {
		t.Fatalf("created %d (first-attempt %d, timeouts %d); want 3 at once", res.created, len(res.rtts), res.timeouts)
	}
	for _, d := range res.rtts {
		if d != 100*time.Millisecond {
			t.Errorf("put round trip %v; want 100ms (40 + 20 + 40)", d)
		}
	}
	if res.getRTT != 90*time.Millisecond {
		t.Errorf("get round trip %v; want 90ms (40 + 10 + 40)", res.getRTT)
	}
	if st := s.Service(1).Stats(); st.Requests[storagesvc.OpPut] != 3 || st.Requests[storagesvc.OpGet] != 1 || s.Service(0).Len() != 0 {
		t.Errorf("region b's service served %v, region a's holds %d objects; want 3 puts, 1 get, none in a", st.Requests, s.Service(0).Len())
	}
	counts := map[string]int{}
	for _, c := range s.MessageCounts() {
		counts[c.Kind] = c.Count
	}
	if counts["storagesvc.request"] != 4 || counts["storagesvc.response"] != 4 {
		t.Errorf("message counts %v; want 4 requests and 4 responses", counts)
	}
}

// TestServiceTail: with a log-normal write model (median 20 ms, p99
// 200 ms) the round trips spread around 100 ms with a tail.
func TestServiceTail(t *testing.T) {
	_, res := runCreator(t, 2, svcWorld(t, 100, 200), NetConfig{}, 400)
	var over, under int
	for _, d := range res.rtts {
		if d > 180*time.Millisecond { // service time above ~100 ms: beyond p95
			over++
		}
		if d < 80*time.Millisecond {
			t.Fatalf("put round trip %v below the 80 ms of network", d)
		}
		if d < 100*time.Millisecond {
			under++
		}
	}
	if under < 150 || under > 250 || over == 0 || over > 40 {
		t.Fatalf("of %d round trips %d under the median's 100 ms and %d in the tail beyond 180 ms; want about half, and a few", len(res.rtts), under, over)
	}
}

// TestServiceLossAndDuplication: with a lossy, duplicating network every
// key is created exactly once; some answers are lost (the retry finds the
// key created: outcome unknown, then found out), some duplicated (a
// duplicated create-only request is applied twice: the second copy fails,
// and if its answer comes first the client finds out the same way), and
// the run replays exactly from its seed.
func TestServiceLossAndDuplication(t *testing.T) {
	const n = 200
	var hash uint64
	for run := range 2 {
		s, res := runCreator(t, 7, svcWorld(t, 20, 60), NetConfig{Loss: 0.2, Duplicate: 0.2}, n)
		t.Logf("created %d, found out after a lost answer %d, stale answers %d, timeouts %d", res.created, res.foundOut, res.stale, res.timeouts)
		if res.created+res.foundOut != n || s.Service(1).Len() != n {
			t.Fatalf("created %d + found out %d, service holds %d; want %d keys, each once", res.created, res.foundOut, s.Service(1).Len(), n)
		}
		if res.foundOut == 0 || res.stale == 0 || res.timeouts == 0 {
			t.Fatalf("no lost answer found out (%d), no stale answer (%d) or no timeout (%d): the faults were not exercised", res.foundOut, res.stale, res.timeouts)
		}
		if run == 1 && s.TraceHash() != hash {
			t.Fatalf("seed 7 ran twice with trace hashes %x and %x", hash, s.TraceHash())
		}
		hash = s.TraceHash()
	}
}

// TestServiceDown: requests reaching a service during an outage get no
// answer; after it they do.
func TestServiceDown(t *testing.T) {
	res := &creatorResult{}
	s := New(Config{Seed: 1, Topology: svcWorld(t, 0, 0), Log: slog.New(slog.DiscardHandler),
		Factory: func(wire.NodeID) env.Replica { return &creator{n: 1, timeout: 400 * time.Millisecond, res: res} }})
	s.SetServiceDown(1, true)
	s.Run(int64(time.Second))
	if res.created != 0 || res.timeouts < 2 {
		t.Fatalf("during the outage: created %d, timeouts %d; want none created and retries", res.created, res.timeouts)
	}
	s.SetServiceDown(1, false)
	s.Run(int64(3 * time.Second))
	if res.created != 1 {
		t.Fatalf("after the outage: created %d; want 1", res.created)
	}
}
