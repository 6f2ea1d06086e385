package node

import (
	"context"
	"fmt"
	"math/rand/v2"
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
	l.mu.Lock()
	l.syncs++
	c := l.syncs
	for _, v := range l.written {
		l.in[v] = c
	}
	l.mu.Unlock()
	l.written = l.written[:0]
	time.Sleep(l.delay) // the fsync
	_ = l.mem.Sync()
	l.mu.Lock()
	l.durable = c
	l.mu.Unlock()
	return nil
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
// reply and a message to node 1 both carry the value written or read.
type writeReader struct{ n *int }

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

// startLedgerNode runs a node of writeReaders on l; unsafe switches the
// persist-before-send rule off (teeth).
func startLedgerNode(t *testing.T, l *ledger, unsafe bool) (*Node, *checkingTransport, context.CancelFunc, chan error) {
	t.Helper()
	w, err := topo.Parse([]byte("name: two\nnodes_per_region: 2\nregions: [{name: r}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &checkingTransport{l: l}
	var puts int
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return writeReader{&puts} },
		Engine: l, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	n.unsafeReleaseEarly = unsafe
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
	for _, b := range ledgerClients(t, l, false) {
		t.Error(b)
	}
	if syncs, puts := l.stats(); syncs >= puts {
		t.Errorf("%d puts in %d syncs; want writes to share syncs", puts, syncs)
	}
}

// TestTeethGroupCommitReleaseEarly: with the rule off (a batch's output
// leaves before its sync), the same run shows replies and messages that a
// crash at that moment would orphan.
func TestTeethGroupCommitReleaseEarly(t *testing.T) {
	bad := ledgerClients(t, newLedger(), true)
	if len(bad) == 0 {
		t.Fatal("no reply or message left before its write was durable; want the check to catch the broken rule")
	}
	t.Logf("%d caught, e.g. %s", len(bad), bad[0])
}

// ledgerClients runs 8 clients of 150 random puts and gets on 4 keys
// against a node on l, whose syncs take 300µs, and
// returns every reply or message that left before the value it carries
// was durable.
func ledgerClients(t *testing.T, l *ledger, unsafe bool) []string {
	t.Helper()
	l.delay = 300 * time.Microsecond
	n, tr, cancel, done := startLedgerNode(t, l, unsafe)
	const clients, each = 8, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
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
	return bad
}
