package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// ledger is an engine whose Sync takes a while (an fsync) and that
// records which sync made every value written durable, so a test can
// check, whenever a reply or message leaves, that the write it depends on
// would survive a crash at that moment. Everything but the sync counters
// runs on the loop; the counters are read by the test too, under mu.
type ledger struct {
	mem     *store.Mem
	written []string // values put since the last Sync
	in      map[string]int
	delay   time.Duration // how long each Sync takes

	mu      sync.Mutex
	syncs   int // syncs begun, numbered from 1
	durable int // syncs 1..durable have returned
	puts    int // Puts so far
}

func newLedger() *ledger { return &ledger{mem: store.NewMem(), in: map[string]int{}} }

func (l *ledger) Get(key string) (store.Record, bool, error) { return l.mem.Get(key) }
func (l *ledger) Put(key string, rec store.Record) error {
	l.written = append(l.written, string(rec.Value))
	l.mu.Lock()
	l.puts++
	l.mu.Unlock()
	return l.mem.Put(key, rec)
}
func (l *ledger) Close() error { return nil }

func (l *ledger) Sync() error {
	return l.begin().Wait()
}

// begin starts a sync of the values written since the last one.
func (l *ledger) begin() ledgerSync {
	l.mu.Lock()
	l.syncs++
	c := l.syncs
	for _, v := range l.written {
		l.in[v] = c
	}
	l.mu.Unlock()
	l.written = l.written[:0]
	_ = l.mem.Sync()
	return ledgerSync{l, c}
}

// ledgerSync is a sync begun: Wait takes the delay (the fsync), then marks
// it durable.
type ledgerSync struct {
	l *ledger
	c int
}

func (w ledgerSync) Wait() error {
	time.Sleep(w.l.delay) // the fsync
	w.l.mu.Lock()
	w.l.durable = w.c
	w.l.mu.Unlock()
	return nil
}

// asyncLedger is a ledger whose syncs run beside the loop
// (store.AsyncEngine): SyncStart begins the sync and returns at once.
type asyncLedger struct{ *ledger }

func (l asyncLedger) SyncStart() (store.Pending, error) {
	if len(l.written) == 0 {
		return nil, nil
	}
	return l.begin(), nil
}

// check returns why value v is not durable, or "".
func (l *ledger) check(v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.in[v]
	switch {
	case !ok:
		return fmt.Sprintf("%q is not even being synced", v)
	case c > l.durable:
		return fmt.Sprintf("%q is in sync %d, but only 1..%d have returned", v, c, l.durable)
	}
	return ""
}

func (l *ledger) stats() (syncs, puts int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncs, l.puts
}

// echoMsg carries the value a handler wrote or read to node 1.
type echoMsg struct{ value string }

func (*echoMsg) Kind() string { return "test.echo" }

// writeReader puts a fresh value on OpPut and reads the key otherwise; the
// reply and a message to node 1 both carry the value written or read. With
// early, a read's reply goes through env.ReplyRead.
type writeReader struct {
	n     *int
	early bool
}

func (writeReader) Start(env.Env)                       {}
func (writeReader) Step(env.Env, wire.NodeID, wire.Msg) {}
func (writeReader) Timer(env.Env, any)                  {}
func (w writeReader) Request(e env.Env, req *wire.Request) {
	var v string
	if req.Op == wire.OpPut {
		*w.n++
		v = fmt.Sprintf("%s#%d", req.Key, *w.n)
		_ = e.Store().Put(req.Key, store.Record{Value: []byte(v)})
	} else if r, ok, _ := e.Store().Get(req.Key); ok {
		v = string(r.Value)
	}
	if v != "" {
		e.Send(1, &echoMsg{v})
	}
	if w.early && req.Op != wire.OpPut {
		env.ReplyRead(e, &wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(v)})
		return
	}
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Value: []byte(v)})
}

// checkingTransport reports every message whose value is not durable when
// it is sent.
type checkingTransport struct {
	l    *ledger
	mu   sync.Mutex
	sent int
	bad  []string
}

func (c *checkingTransport) Send(_ wire.NodeID, m wire.Msg) {
	why := c.l.check(m.(*echoMsg).value)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent++
	if why != "" {
		c.bad = append(c.bad, "message sent while "+why)
	}
}

// ledgerRun is how a ledger test runs its node: early makes reads reply
// through env.ReplyRead on a node with EarlyReads; async makes the engine
// an AsyncEngine (asyncLedger); unsafe switches the persist-before-send
// rule off, unsafeReads the early reads' check of what they read (teeth).
type ledgerRun struct {
	early, async, unsafe, unsafeReads bool
	maxBatch                          int      // Config.MaxBatch (0: the default)
	obs                               Observer // Config.Observer
}

// startLedgerNode runs a node of writeReaders on l.
func startLedgerNode(t *testing.T, l *ledger, o ledgerRun) (*Node, *checkingTransport, context.CancelFunc, chan error) {
	t.Helper()
	w, err := topo.Parse([]byte("name: two\nnodes_per_region: 2\nregions: [{name: r}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &checkingTransport{l: l}
	var puts int
	var eng store.Engine = l
	if o.async {
		eng = asyncLedger{l}
	}
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return writeReader{&puts, o.early} },
		Engine: eng, Transport: tr, EarlyReads: o.early, MaxBatch: o.maxBatch, Observer: o.obs})
	if err != nil {
		t.Fatal(err)
	}
	n.asyncOK = true // whatever the machine's cores
	n.unsafeReleaseEarly = o.unsafe
	n.unsafeCleanReads = o.unsafeReads
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	return n, tr, cancel, done
}

// TestGroupCommitPersistsBeforeSend: many clients write and read a few
// keys while every sync takes a while. Whenever a reply or a message
// leaves, the value it carries (written, or read) is durable, so a crash
// at that moment would keep it; and the writes share syncs (group commit).
func TestGroupCommitPersistsBeforeSend(t *testing.T) {
	l := newLedger()
	bad, _ := ledgerClients(t, l, ledgerRun{})
	for _, b := range bad {
		t.Error(b)
	}
	if syncs, puts := l.stats(); syncs >= puts {
		t.Errorf("%d puts in %d syncs; want writes to share syncs", puts, syncs)
	}
}

// TestEarlyReadsPersistBeforeSend: the same, with reads replying through
// env.ReplyRead on a node with EarlyReads, over an engine that syncs on
// the loop and over one whose syncs run beside it (the disk engine's way,
// with several in flight). Some read replies leave while writes handled
// before them still wait for their sync, and every reply and message
// carries a durable value when it leaves: a read of a key whose last write
// is not yet durable waits for that write's sync, and writes share syncs.
func TestEarlyReadsPersistBeforeSend(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			l := newLedger()
			bad, early := ledgerClients(t, l, ledgerRun{early: true, async: async})
			for _, b := range bad {
				t.Error(b)
			}
			t.Logf("%d read replies left before their batch's sync", early)
			if early == 0 {
				t.Error("no read's reply left before its batch's sync; want early reads")
			}
			if syncs, puts := l.stats(); syncs >= puts {
				t.Errorf("%d puts in %d syncs; want writes to share syncs", puts, syncs)
			}
		})
	}
}

// batchObserver records the largest group commit the node reports.
type batchObserver struct {
	countingObserver
	mu      sync.Mutex
	largest int
	batches int
}

func (o *batchObserver) LoopBatch(events int, _ time.Duration) {
	o.mu.Lock()
	o.largest = max(o.largest, events)
	o.batches++
	o.mu.Unlock()
}

// TestGatherStaysWithinMaxBatch: a batch of writes whose sync holds the
// loop gathers the requests submitted meanwhile into its sync (Run), and
// still never handles more than MaxBatch events in one group commit, nor
// lets anything leave before it is durable.
func TestGatherStaysWithinMaxBatch(t *testing.T) {
	l := newLedger()
	obs := &batchObserver{}
	bad, _ := ledgerClients(t, l, ledgerRun{early: true, maxBatch: 3, obs: obs})
	for _, b := range bad {
		t.Error(b)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	t.Logf("%d group commits, the largest %d events", obs.batches, obs.largest)
	if obs.largest > 3 {
		t.Errorf("a group commit handled %d events; MaxBatch is 3", obs.largest)
	}
	if syncs, puts := l.stats(); syncs >= puts {
		t.Errorf("%d puts in %d syncs; want writes to share syncs", puts, syncs)
	}
}

// TestTeethEarlyReadsOfUnsyncedWrites: with early reads that do not check
// what they read, replies carry values a crash would lose.
func TestTeethEarlyReadsOfUnsyncedWrites(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			bad, _ := ledgerClients(t, newLedger(), ledgerRun{early: true, async: async, unsafeReads: true})
			if len(bad) == 0 {
				t.Fatal("no reply left before its value was durable; want the check to catch early reads of unsynced writes")
			}
			t.Logf("%d caught, e.g. %s", len(bad), bad[0])
		})
	}
}

// TestTeethGroupCommitReleaseEarly: with the rule off (a batch's output
// leaves before its sync), the same run shows replies and messages that a
// crash at that moment would orphan.
func TestTeethGroupCommitReleaseEarly(t *testing.T) {
	bad, _ := ledgerClients(t, newLedger(), ledgerRun{unsafe: true})
	if len(bad) == 0 {
		t.Fatal("no reply or message left before its write was durable; want the check to catch the broken rule")
	}
	t.Logf("%d caught, e.g. %s", len(bad), bad[0])
}

// ledgerClients runs 8 clients of 150 random puts and gets on 4 keys
// against a node on l, whose syncs take 300µs, and returns every reply or
// message that left before the value it carries was durable, and how many
// replies left before their batch's sync (ReplyRead).
func ledgerClients(t *testing.T, l *ledger, o ledgerRun) (bad []string, early int) {
	t.Helper()
	l.delay = 300 * time.Microsecond
	n, tr, cancel, done := startLedgerNode(t, l, o)
	const clients, each = 8, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	replies := 0
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			got := make(chan *wire.Reply, 1)
			for i := range each {
				op := wire.OpGet
				if rng.IntN(2) == 0 {
					op = wire.OpPut
				}
				req := &wire.Request{ID: wire.RequestID(i), Client: wire.ClientID(c + 1), Op: op, Key: fmt.Sprint("k", rng.IntN(4))}
				n.Submit(req, func(r *wire.Reply) {
					// On the loop, as the reply is released: the check
					// sees the ledger as a crash now would.
					if v := string(r.Value); v != "" {
						if why := l.check(v); why != "" {
							mu.Lock()
							bad = append(bad, fmt.Sprintf("reply to %s %s released while %s", req.Op, req.Key, why))
							mu.Unlock()
						}
					}
					got <- r
				})
				if r := <-got; r.Err != nil {
					t.Errorf("%s %s: %v", req.Op, req.Key, r.Err)
				}
				mu.Lock()
				replies++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := n.Do(context.Background(), func() { early = n.earlyLeft }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	bad = append(bad, tr.bad...)
	sent := tr.sent
	tr.mu.Unlock()
	syncs, puts := l.stats()
	t.Logf("%d replies, %d messages, %d puts in %d syncs", replies, sent, puts, syncs)
	if replies != clients*each {
		t.Errorf("%d replies; want %d", replies, clients*each)
	}
	return bad, early
}

// holdRecorder is a Mem engine that records each HoldThread before a Sync.
type holdRecorder struct {
	*store.Mem
	hold  bool
	syncs []bool // the hold in force at each Sync
}

func (h *holdRecorder) HoldThread(hold bool) { h.hold = hold }
func (h *holdRecorder) Sync() error {
	h.syncs = append(h.syncs, h.hold)
	return h.Mem.Sync()
}

// TestHoldThreadOnlyWhenEveryReplyWaits: the loop lets an engine's fsync
// hold the thread (store.ThreadHolder) only for a batch whose replies all
// wait for it; a batch from which a read's reply left early lets go.
func TestHoldThreadOnlyWhenEveryReplyWaits(t *testing.T) {
	eng := &holdRecorder{Mem: store.NewMem()}
	n := newIdleNode(t, Config{Engine: eng, EarlyReads: true}) // driven by hand: no loop runs
	batch := func(read bool) {
		if read {
			n.touched = false
			n.ReplyRead(&wire.Reply{ID: 1, Client: 1})
		}
		n.touched = false
		if err := n.Store().Put("k", store.Record{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		n.Reply(&wire.Reply{ID: 2, Client: 1})
		if err := n.flush(); err != nil {
			t.Fatal(err)
		}
	}
	batch(false)
	batch(true)
	batch(false)
	if want := []bool{true, false, true}; !slices.Equal(eng.syncs, want) {
		t.Errorf("hold at each sync %v; want %v (held only where no reply left early)", eng.syncs, want)
	}
}
