package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// timerReplica answers a request after the delay named by its value,
// through a timer; "cancel" sets and cancels one; "self" messages itself.
type timerReplica struct {
	pending map[env.TimerID]*wire.Request
}

type selfMsg struct{ req *wire.Request }

func (*selfMsg) Kind() string { return "test.self" }

func (r *timerReplica) Start(e env.Env) { r.pending = map[env.TimerID]*wire.Request{} }
func (r *timerReplica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	req := m.(*selfMsg).req
	_ = e.Store().Put(req.Key, store.Record{Value: []byte("written")})
	v := "via self"
	if strings.HasPrefix(req.Key, "self-") {
		v = req.Key
	}
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(v)})
}
func (r *timerReplica) Request(e env.Env, req *wire.Request) {
	switch string(req.Value) {
	case "now":
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(req.Key)})
	case "twice":
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(req.Key)})
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte("again")})
	case "self":
		e.Send(e.Self(), &selfMsg{req})
	case "cancel":
		id := e.SetTimer(time.Millisecond, req)
		e.CancelTimer(id)
		r.pending[e.SetTimer(30*time.Millisecond, req)] = req
	default:
		d, _ := time.ParseDuration(string(req.Value))
		r.pending[e.SetTimer(d, req)] = req
	}
}
func (r *timerReplica) Timer(e env.Env, p any) {
	req := p.(*wire.Request)
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(req.Key)})
}

type syncCounter struct {
	*store.Mem
	mu    sync.Mutex
	syncs int
}

func (s *syncCounter) Sync() error {
	s.mu.Lock()
	s.syncs++
	s.mu.Unlock()
	return s.Mem.Sync()
}

func newTestNode(t *testing.T) (*Node, *syncCounter) {
	eng := &syncCounter{Mem: store.NewMem()}
	return startTestNode(t, Config{Engine: eng}), eng
}

// oneNodeWorld is a world of one node.
func oneNodeWorld(t *testing.T) *topo.Topology {
	t.Helper()
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

// newIdleNode builds a node of cfg, by default of one timerReplica in a
// one-node world over a Mem store, without running it: a test may drive
// it by hand on its own goroutine.
func newIdleNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	if cfg.Topology == nil {
		cfg.Topology = oneNodeWorld(t)
	}
	if cfg.Factory == nil {
		cfg.Factory = func(wire.NodeID) env.Replica { return &timerReplica{} }
	}
	if cfg.Engine == nil {
		cfg.Engine = store.NewMem()
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// startTestNode runs a node of cfg (newIdleNode's defaults) until the test
// ends.
func startTestNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	n := newIdleNode(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return n
}

// TestTimersFireInDeadlineOrder: timers fire in deadline order, not set
// order, and a cancelled timer never fires.
func TestTimersFireInDeadlineOrder(t *testing.T) {
	n, _ := newTestNode(t)
	got := make(chan string, 4)
	submit := func(key, delay string) {
		n.Submit(&wire.Request{ID: wire.RequestID(len(key)), Client: n.NewClientID(), Key: key, Value: []byte(delay)},
			func(r *wire.Reply) { got <- string(r.Value) })
	}
	submit("third", "60ms")
	submit("first", "10ms")
	submit("second", "cancel") // its 1ms timer is cancelled; its 30ms one fires
	var order []string
	for i := 0; i < 3; i++ {
		select {
		case v := <-got:
			order = append(order, v)
		case <-time.After(5 * time.Second):
			t.Fatalf("timers fired %v, then nothing for 5s", order)
		}
	}
	if want := []string{"first", "second", "third"}; order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("fired %v; want %v", order, want)
	}
}

// TestRepliesFindTheirRequests: whatever the order of the replies (in
// the batch, out of it through a message to self, in a later batch
// through a timer, a second reply to one request), each request's done
// runs once, with its own reply.
func TestRepliesFindTheirRequests(t *testing.T) {
	n, _ := newTestNode(t)
	kinds := []string{"now", "self", "5ms", "now", "twice", "now", "1ms", "self", "now", "now"}
	type answer struct{ key, value string }
	got := make(chan answer, 1000)
	var want []string
	for round := range 20 {
		client := n.NewClientID()
		var reqs []*wire.Request
		for i, kind := range kinds[round%3:] {
			key := fmt.Sprintf("%s-%d-%d", kind, round, i)
			want = append(want, key)
			reqs = append(reqs, &wire.Request{ID: wire.RequestID(i + 1), Client: client, Key: key, Value: []byte(kind)})
		}
		keyOf := map[wire.RequestID]string{}
		for _, r := range reqs {
			keyOf[r.ID] = r.Key
		}
		n.SubmitBatch(reqs, func(r *wire.Reply) { got <- answer{keyOf[r.ID], string(r.Value)} })
	}
	seen := map[string]bool{}
	for range want {
		select {
		case a := <-got:
			if a.value != a.key || seen[a.key] {
				t.Fatalf("request %q answered %q (answered before: %v)", a.key, a.value, seen[a.key])
			}
			seen[a.key] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d requests answered, then nothing for 5s", len(seen), len(want))
		}
	}
	select {
	case a := <-got:
		t.Fatalf("extra answer %q to %q", a.value, a.key)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestSelfMessagesPersistBeforeReply: a reply sent by a handler of a
// message to self leaves only after the store synced that handler's write.
func TestSelfMessagesPersistBeforeReply(t *testing.T) {
	n, eng := newTestNode(t)
	got := make(chan *wire.Reply, 1)
	n.Submit(&wire.Request{ID: 1, Client: n.NewClientID(), Key: "k", Value: []byte("self")}, func(r *wire.Reply) {
		if eng.Unsynced() != 0 {
			t.Error("reply released before the write it depends on was synced")
		}
		got <- r
	})
	select {
	case r := <-got:
		if string(r.Value) != "via self" {
			t.Fatalf("reply %q; want %q", r.Value, "via self")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
}

// failingEngine fails every Sync after the first n.
type failingEngine struct {
	*store.Mem
	ok int
}

func (f *failingEngine) Sync() error {
	if f.ok <= 0 {
		return errors.New("disk on fire")
	}
	f.ok--
	return f.Mem.Sync()
}

// asyncFailingEngine is a store.AsyncEngine whose syncs fail: the first
// one started fails when waited for (as an fsync that fails), every later
// SyncStart at once (the failure sticks, as the disk engine's).
type asyncFailingEngine struct {
	*store.Mem
	failed bool
}

type failedSync struct{}

func (failedSync) Wait() error { return errors.New("disk on fire") }

func (f *asyncFailingEngine) SyncStart() (store.Pending, error) {
	if f.failed {
		return nil, errors.New("disk on fire")
	}
	f.failed = true
	return failedSync{}, nil
}

type recordingTransport struct {
	mu   sync.Mutex
	sent int
}

func (r *recordingTransport) Send(wire.NodeID, wire.Msg) { r.mu.Lock(); r.sent++; r.mu.Unlock() }

// sender writes and messages the other node on every request.
type sender struct{}

func (sender) Start(env.Env)                       {}
func (sender) Step(env.Env, wire.NodeID, wire.Msg) {}
func (sender) Timer(env.Env, any)                  {}
func (sender) Request(e env.Env, req *wire.Request) {
	_ = e.Store().Put(req.Key, store.Record{Value: []byte("x")})
	e.Send(1, &selfMsg{req})
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client})
}

// TestFailedSyncReleasesNothing: when the store cannot sync, the handler's
// message and reply never leave — not even during shutdown — and the
// client learns the outcome is unknown. The node stays up: later requests
// are refused with ErrUnavailable naming the failure, status queries still
// run, and Run returns only when cancelled.
// With an AsyncEngine (syncs beside the loop), the same.
func TestFailedSyncReleasesNothing(t *testing.T) {
	t.Run("sync", func(t *testing.T) { failedSyncReleasesNothing(t, &failingEngine{Mem: store.NewMem()}) })
	t.Run("async", func(t *testing.T) { failedSyncReleasesNothing(t, &asyncFailingEngine{Mem: store.NewMem()}) })
}

func failedSyncReleasesNothing(t *testing.T, eng store.Engine) {
	w, _ := topo.Parse([]byte("name: two\nnodes_per_region: 2\nregions: [{name: r}]\n"))
	tr := &recordingTransport{}
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return sender{} },
		Engine: eng, Transport: tr, EarlyReads: true})
	if err != nil {
		t.Fatal(err)
	}
	n.asyncOK = true // whatever the machine's cores
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	got := make(chan *wire.Reply, 2)
	n.Submit(&wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "k"}, func(r *wire.Reply) { got <- r })
	if r := <-got; r.Err == nil || r.Err.Code != wire.ErrTimeout {
		t.Fatalf("reply %+v; want ErrTimeout (outcome unknown)", r)
	}
	n.Submit(&wire.Request{ID: 2, Client: 1, Op: wire.OpGet, Key: "k"}, func(r *wire.Reply) { got <- r })
	if r := <-got; r.Err == nil || r.Err.Code != wire.ErrUnavailable || !strings.Contains(r.Err.Msg, "disk on fire") {
		t.Fatalf("reply after the failure %+v; want ErrUnavailable naming it", r.Err)
	}
	if err := n.Inspect(ctx, func(env.Replica, int64) {}); err != nil {
		t.Fatalf("Inspect after the failure: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v after the store failed; want it to keep serving refusals", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel = %v", err)
	}
	if tr.sent != 0 {
		t.Fatalf("%d messages left after the failed sync; want 0", tr.sent)
	}
}

// TestAdmitRefusesWritesOnly: a write Admit refuses gets Admit's error and
// never reaches the protocol; reads are not asked and are served.
func TestAdmitRefusesWritesOnly(t *testing.T) {
	w, _ := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
	full := &wire.Error{Code: wire.ErrNoSpace, Msg: "disk full"}
	var asked []wire.Op
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return &timerReplica{} }, Engine: store.NewMem(),
		Admit: func(r *wire.Request) *wire.Error { asked = append(asked, r.Op); return full }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = n.Run(ctx) }()
	got := make(chan *wire.Reply, 1)
	for _, op := range []wire.Op{wire.OpPut, wire.OpDelete, wire.OpMigrate, wire.OpGet} {
		n.Submit(&wire.Request{ID: wire.RequestID(op), Client: 1, Op: op, Key: "k", Value: []byte("1ms")}, func(r *wire.Reply) { got <- r })
		r := <-got
		if op == wire.OpGet {
			if r.Err != nil || string(r.Value) != "k" {
				t.Errorf("%s: reply %+v; want served", op, r)
			}
			continue
		}
		if r.Err != full {
			t.Errorf("%s: error %v; want Admit's %v", op, r.Err, full)
		}
	}
	var asks []wire.Op
	_ = n.Do(ctx, func() { asks = append(asks, asked...) })
	if len(asks) != 3 {
		t.Errorf("Admit asked about %v; want the three writes only", asks)
	}
}

// TestShutdownAnswersEveryRequest: requests racing with shutdown each get
// exactly one answer.
func TestShutdownAnswersEveryRequest(t *testing.T) {
	for round := 0; round < 50; round++ {
		w, _ := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
		n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return &timerReplica{} }, Engine: store.NewMem(), InboxSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { _ = n.Run(ctx); close(ran) }()
		var wg sync.WaitGroup
		var mu sync.Mutex
		answers := map[wire.RequestID]int{}
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					id := wire.RequestID(g*100 + i)
					n.Submit(&wire.Request{ID: id, Client: 1, Key: "k", Value: []byte("1h")}, func(*wire.Reply) {
						mu.Lock()
						answers[id]++
						mu.Unlock()
					})
				}
			}(g)
		}
		cancel()
		wg.Wait()
		<-ran
		mu.Lock()
		if len(answers) != 80 {
			t.Fatalf("round %d: %d of 80 requests answered", round, len(answers))
		}
		for id, c := range answers {
			if c != 1 {
				t.Fatalf("round %d: request %d answered %d times", round, id, c)
			}
		}
		mu.Unlock()
	}
}

// TestInspectSeesTheLoopsReplica: Inspect hands fn the replica the loop
// drives, after the requests submitted before it (the loop is FIFO), and
// fails once the node has stopped.
func TestInspectSeesTheLoopsReplica(t *testing.T) {
	n, _ := newTestNode(t)
	got := make(chan *wire.Reply, 1)
	n.Submit(&wire.Request{ID: 1, Client: n.NewClientID(), Key: "k", Value: []byte("1h")}, func(r *wire.Reply) { got <- r })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var pending int
	var now int64
	if err := n.Inspect(ctx, func(r env.Replica, t int64) { pending, now = len(r.(*timerReplica).pending), t }); err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if pending != 1 {
		t.Errorf("Inspect saw %d pending timers; want 1 (the request submitted before it)", pending)
	}
	if d := time.Since(time.Unix(0, now)); d < 0 || d > 5*time.Second {
		t.Errorf("Inspect's now is %v from the wall clock; want the node's clock", d)
	}
}

// halter writes, messages node 1 and replies on every request; on a
// request whose value is "halt" it then fail-stops, twice, and tries to
// write again.
type halter struct{ sender }

func (h halter) Request(e env.Env, req *wire.Request) {
	h.sender.Request(e, req)
	if string(req.Value) == "halt" {
		e.FailStop(errors.New("disk on fire"))
		e.FailStop(errors.New("a second cause"))
		if err := e.Store().Put("after", store.Record{Value: []byte("x")}); err == nil {
			panic("a write after FailStop succeeded")
		}
	}
}

// TestFailStopStopsTheNode: a replica that fail-stops stops its node. The
// failing batch's messages never leave and its writes are never synced;
// the request it took gets ErrTimeout (outcome unknown), the request after
// it in the same batch and every later one ErrUnavailable; Run returns the
// cause, which is logged once.
func TestFailStopStopsTheNode(t *testing.T) {
	w, _ := topo.Parse([]byte("name: two\nnodes_per_region: 2\nregions: [{name: r}]\n"))
	tr := &recordingTransport{}
	eng := store.NewMem()
	var logs strings.Builder
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return halter{} },
		Engine: eng, Transport: tr, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(context.Background()) }()
	got := make(chan *wire.Reply, 3)
	n.SubmitBatch([]*wire.Request{
		{ID: 1, Client: 1, Op: wire.OpPut, Key: "k", Value: []byte("halt")},
		{ID: 2, Client: 1, Op: wire.OpPut, Key: "k2", Value: []byte("v")},
	}, func(r *wire.Reply) { got <- r })
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "fail-stop: disk on fire") {
		t.Fatalf("Run returned %v; want the fail-stop's cause", err)
	}
	n.Submit(&wire.Request{ID: 3, Client: 1, Op: wire.OpGet, Key: "k"}, func(r *wire.Reply) { got <- r })
	want := map[wire.RequestID]wire.ErrorCode{1: wire.ErrTimeout, 2: wire.ErrUnavailable, 3: wire.ErrUnavailable}
	for range 3 {
		r := <-got
		if r.Err == nil || r.Err.Code != want[r.ID] {
			t.Errorf("request %d: reply %+v; want %s", r.ID, r, want[r.ID])
		}
	}
	if tr.sent != 0 {
		t.Fatalf("%d messages left a fail-stopped node; want 0", tr.sent)
	}
	if eng.Unsynced() != 1 {
		t.Fatalf("%d unsynced writes; want 1, the failing handler's, never synced", eng.Unsynced())
	}
	for _, k := range []string{"k2", "after"} {
		if _, ok, _ := eng.Get(k); ok {
			t.Errorf("write %q reached the store", k)
		}
	}
	if c := strings.Count(logs.String(), "fail-stopped"); c != 1 {
		t.Fatalf("the fail-stop was logged %d times; want once:\n%s", c, logs.String())
	}
}

// countingObserver sums what the node reports.
type countingObserver struct {
	mu       sync.Mutex
	inflight int
	requests int
}

func (o *countingObserver) RequestN(_, _ string, _ time.Duration, _ string, n int) {
	o.mu.Lock()
	o.requests += n
	o.mu.Unlock()
}
func (o *countingObserver) InflightAdd(d int) {
	o.mu.Lock()
	o.inflight += d
	o.mu.Unlock()
}
func (o *countingObserver) LoopBatch(int, time.Duration) {}

// TestInflightGaugeCountsEachRequestOnce: the in-flight gauge, updated once
// per batch of replies, is back at zero once every request is answered,
// whatever the path of its reply (in its batch, a later one, a second reply
// to the same request), and every request is counted once.
func TestInflightGaugeCountsEachRequestOnce(t *testing.T) {
	obs := &countingObserver{}
	n := startTestNode(t, Config{Observer: obs})
	kinds := []string{"now", "self", "2ms", "twice", "now", "self", "now"}
	got := make(chan struct{}, 1000)
	total := 0
	for round := range 30 {
		client := n.NewClientID()
		var reqs []*wire.Request
		for i, kind := range kinds[round%4:] {
			reqs = append(reqs, &wire.Request{ID: wire.RequestID(i + 1), Client: client, Key: fmt.Sprint(kind, round, i), Value: []byte(kind)})
		}
		total += len(reqs)
		n.SubmitBatch(reqs, func(*wire.Reply) { got <- struct{}{} })
	}
	for i := range total {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d requests answered, then nothing for 5s", i, total)
		}
	}
	// On the loop, after the batch that sent the last reply has finished.
	if err := n.Do(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.inflight != 0 || obs.requests != total {
		t.Fatalf("in flight %d, %d requests counted; want 0 and %d", obs.inflight, obs.requests, total)
	}
}

// TestProcsDecidesAsyncSyncs: Config.Procs, when given, decides whether an
// AsyncEngine's syncs may run beside the loop, whatever GOMAXPROCS is at
// New (a storage engine may have raised it for a compaction: disk's
// SpareProc).
func TestProcsDecidesAsyncSyncs(t *testing.T) {
	w, _ := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
	for _, procs := range []int{1, 2} {
		n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return sender{} },
			Engine: store.NewMem(), Procs: procs})
		if err != nil {
			t.Fatal(err)
		}
		if want := procs > 1; n.asyncOK != want {
			t.Errorf("Procs %d: asyncOK %v; want %v", procs, n.asyncOK, want)
		}
	}
}
