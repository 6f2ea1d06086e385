package node

import (
	"context"
	"errors"
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

// ledger is a store.Committer that records which commit holds every value
// written and which commits are durable, so a test can check, whenever a
// reply or message leaves, that the write it depends on would survive a
// crash at that moment. Get and Put run on the loop; the durable funcs on
// the syncer; everything the two share is under mu.
type ledger struct {
	mem     *store.Mem // loop only
	written []string   // loop only: values put since the last commit

	mu      sync.Mutex
	commits int            // commits so far, numbered from 1
	durable int            // commits 1..durable are durable
	in      map[string]int // value → the commit holding it
	puts    int            // Puts so far
	overlap int            // Puts made while a commit was syncing
	// gate, if set, is received from by each durable func before it
	// reports (a test holds the fsync); fail makes it report this error.
	gate chan error
	// delay is how long each durable func takes otherwise.
	delay time.Duration
}

func newLedger() *ledger { return &ledger{mem: store.NewMem(), in: map[string]int{}} }

func (l *ledger) Get(key string) (store.Record, bool, error) { return l.mem.Get(key) }
func (l *ledger) Put(key string, rec store.Record) error {
	l.written = append(l.written, string(rec.Value))
	l.mu.Lock()
	l.puts++
	if l.commits > l.durable {
		l.overlap++
	}
	l.mu.Unlock()
	return l.mem.Put(key, rec)
}
func (l *ledger) Sync() error  { return errors.New("ledger: the node must use Commit") }
func (l *ledger) Close() error { return nil }

func (l *ledger) Commit() (func() error, error) {
	if len(l.written) == 0 {
		return nil, nil
	}
	_ = l.mem.Sync() // visible either way; the ledger decides what is durable
	l.mu.Lock()
	l.commits++
	c := l.commits
	for _, v := range l.written {
		l.in[v] = c
	}
	gate, delay := l.gate, l.delay
	l.mu.Unlock()
	l.written = l.written[:0]
	return func() error {
		if gate != nil {
			if err := <-gate; err != nil {
				return err
			}
		} else {
			time.Sleep(delay)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if c != l.durable+1 {
			return fmt.Errorf("ledger: commit %d reported durable after %d", c, l.durable)
		}
		l.durable = c
		return nil
	}, nil
}

// check returns why value v is not durable, or "".
func (l *ledger) check(v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.in[v]
	switch {
	case !ok:
		return fmt.Sprintf("%q is not even committed", v)
	case c > l.durable:
		return fmt.Sprintf("%q is in commit %d, but only 1..%d are durable", v, c, l.durable)
	}
	return ""
}

func (l *ledger) stats() (commits, puts, overlap int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commits, l.puts, l.overlap
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

func (c *checkingTransport) report(t *testing.T) int {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bad {
		t.Error(b)
	}
	return c.sent
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
// keys while every commit takes a while to become durable. Whenever a
// reply or a message leaves, the value it carries (written, or read) is in
// a durable commit, so a crash at that moment would keep it. And the
// loop handled writes while a commit was syncing (it does not wait for the
// fsync), which the next commit took together: fewer commits than writes.
func TestGroupCommitPersistsBeforeSend(t *testing.T) {
	l := newLedger()
	bad := ledgerClients(t, l, false)
	for _, b := range bad {
		t.Error(b)
	}
	commits, puts, overlap := l.stats()
	if overlap == 0 || commits >= puts {
		t.Errorf("%d puts in %d commits, %d made while one was syncing; want the loop to go on while a commit syncs and the next commit to take what it did", puts, commits, overlap)
	}
}

// TestTeethGroupCommitReleaseEarly: with the rule off (a batch's output
// leaves when it is committed, before its fsync returns), the same run
// shows replies and messages that a crash at that moment would orphan.
func TestTeethGroupCommitReleaseEarly(t *testing.T) {
	bad := ledgerClients(t, newLedger(), true)
	if len(bad) == 0 {
		t.Fatal("no reply or message left before its write was durable; want the check to catch the broken rule")
	}
	t.Logf("%d caught, e.g. %s", len(bad), bad[0])
}

// ledgerClients runs 8 clients of 150 random puts and gets on 4 keys
// against a node on l, whose commits take 300µs to become durable, and
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
	commits, puts, overlap := l.stats()
	t.Logf("%d replies, %d messages, %d puts in %d commits, %d puts made while a commit was syncing", replies, sent, puts, commits, overlap)
	if replies != clients*each {
		t.Errorf("%d replies; want %d", replies, clients*each)
	}
	return bad
}

// submitAndWait submits req and waits until the loop has handled it.
func submitAndWait(t *testing.T, n *Node, req *wire.Request, got chan *wire.Reply) {
	t.Helper()
	n.Submit(req, func(r *wire.Reply) { got <- r })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Do(ctx, func() {}); err != nil { // the loop is FIFO
		t.Fatal(err)
	}
}

// nothingLeaves fails if a reply arrives within 20 ms.
func nothingLeaves(t *testing.T, got chan *wire.Reply, why string) {
	t.Helper()
	select {
	case r := <-got:
		t.Fatalf("reply %d (%q) left %s", r.ID, r.Value, why)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestGroupCommitHoldsUntilDurable, step by step: while the first
// commit's fsync is held, the loop handles a second write and a read;
// nothing leaves. When the fsync returns, the first write's reply leaves,
// and the second write and the read are committed together; their replies
// leave, in order, when that fsync returns.
func TestGroupCommitHoldsUntilDurable(t *testing.T) {
	l := newLedger()
	l.gate = make(chan error)
	n, tr, cancel, done := startLedgerNode(t, l, false)
	defer func() {
		cancel()
		close(l.gate) // an open gate reports success
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	got := make(chan *wire.Reply, 3)
	submitAndWait(t, n, &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "a"}, got)
	submitAndWait(t, n, &wire.Request{ID: 2, Client: 1, Op: wire.OpPut, Key: "b"}, got)
	submitAndWait(t, n, &wire.Request{ID: 3, Client: 1, Op: wire.OpGet, Key: "a"}, got)
	nothingLeaves(t, got, "before any fsync returned")
	if c, puts, _ := l.stats(); c != 1 || puts != 2 {
		t.Fatalf("%d commits of %d puts while the first fsync runs; want 1 of 2", c, puts)
	}
	l.gate <- nil // the first commit is durable
	if r := <-got; r.ID != 1 {
		t.Fatalf("reply %d (%q); want 1", r.ID, r.Value)
	}
	nothingLeaves(t, got, "before the second fsync returned")
	l.gate <- nil
	for _, want := range []wire.RequestID{2, 3} {
		if r := <-got; r.ID != want {
			t.Fatalf("reply %d (%q); want %d", r.ID, r.Value, want)
		}
	}
	if c, _, _ := l.stats(); c != 2 {
		t.Errorf("%d commits; want 2", c)
	}
	if sent := tr.report(t); sent != 3 {
		t.Errorf("%d messages sent; want 3", sent)
	}
}

// TestGroupCommitFailedSyncReleasesNothing: when a commit's fsync fails,
// neither its replies and messages nor those of the batches handled
// while it ran leave; their requests get ErrTimeout (outcome unknown),
// later ones ErrUnavailable, and nothing is committed any more.
func TestGroupCommitFailedSyncReleasesNothing(t *testing.T) {
	l := newLedger()
	l.gate = make(chan error, 1)
	n, tr, cancel, done := startLedgerNode(t, l, false)
	got := make(chan *wire.Reply, 3)
	submitAndWait(t, n, &wire.Request{ID: 1, Client: 1, Op: wire.OpPut, Key: "a"}, got)
	submitAndWait(t, n, &wire.Request{ID: 2, Client: 1, Op: wire.OpPut, Key: "b"}, got)
	l.gate <- errors.New("disk on fire")
	for range 2 {
		if r := <-got; r.Err == nil || r.Err.Code != wire.ErrTimeout {
			t.Fatalf("reply %d: %+v; want ErrTimeout", r.ID, r)
		}
	}
	n.Submit(&wire.Request{ID: 3, Client: 1, Op: wire.OpGet, Key: "a"}, func(r *wire.Reply) { got <- r })
	if r := <-got; r.Err == nil || r.Err.Code != wire.ErrUnavailable {
		t.Fatalf("reply after the failure: %+v; want ErrUnavailable", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sent := tr.report(t); sent != 0 {
		t.Errorf("%d messages left after the failed fsync; want 0", sent)
	}
	if c, _, _ := l.stats(); c != 1 {
		t.Errorf("%d commits; want 1 (none after the failure)", c)
	}
}
