package lease_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// casRun is one seeded run of read-modify-write clients on a lease
// keyspace: each client reads a key and writes the next value of its
// counter with a conditional write expecting the version it read (now and
// then a conditional delete instead), over and over, while nodes crash and
// restart, regions are cut off and the network loses, duplicates and
// reorders messages. The history holds the conditional writes only: lease
// reads are not linearizable (doc.go), the conditional writes must be.
type casRun struct {
	t       testing.TB
	s       *sim.Sim
	tp      *topo.Topology
	rng     *rand.Rand
	hist    check.History
	nextID  wire.RequestID
	pending map[wire.RequestID]*casStep
	stopAt  int64
	keys    []string
	// What happened: conditional writes that succeeded, conflicted, had
	// an unknown outcome; crashes.
	ok, conflicts, unknown, crashes int
}

type casClient struct {
	id      int64
	gateway wire.NodeID
	seq     int
}

// casStep is a client's request in flight: a read, or the conditional
// write that follows it (op, as the history will record it).
type casStep struct {
	c    *casClient
	key  string
	read bool
	op   check.Op
}

// casTimeout is how long a client waits for a reply (its gateway may have
// crashed) before it gives up: a write's outcome is then unknown.
const casTimeout = 5 * time.Second

func runCAS(t testing.TB, seed uint64, unsafe func(*lease.Config)) *casRun {
	r := rand.New(rand.NewPCG(seed, 0xca5))
	cfg := lease.Config{
		LeaseLength: time.Duration(50+r.IntN(400)) * time.Millisecond, MaxDriftPPM: 20_000,
		RenewTimeout: 300 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
		Passive:     r.IntN(2) == 0,
		MasterLease: time.Duration(200+r.IntN(600)) * time.Millisecond, ElectionTimeout: time.Duration(400+r.IntN(600)) * time.Millisecond,
		AutoMigrate: r.IntN(2) == 0, MigrateWindow: time.Duration(200+r.IntN(400)) * time.Millisecond,
		MigrateThreshold: 0.51, MigrateMinWrites: 1,
	}
	if unsafe != nil {
		unsafe(&cfg)
	}
	run := &casRun{t: t, rng: r, tp: topo.NewTopology(world(t)), pending: map[wire.RequestID]*casStep{}}
	ks, err := lease.NewKeyspace(run.tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run.s = sim.New(sim.Config{Seed: seed, Topology: run.tp, Factory: ks.Factory(), OnReply: run.onReply,
		Codec: sim.MustCodec(lease.MessageTypes()),
		Net:   sim.NetConfig{Loss: r.Float64() * 0.03, Duplicate: r.Float64() * 0.03, Reorder: r.Float64() * 0.05}})
	for i := range 1 + r.IntN(3) {
		run.keys = append(run.keys, fmt.Sprintf("counter%d", i))
	}
	const start = 2 * time.Second
	run.stopAt = int64(start + 4*time.Second)
	for i, n := range run.tp.Nodes {
		c := &casClient{id: int64(i + 1), gateway: n.ID}
		run.s.At(int64(start)+r.Int64N(int64(50*time.Millisecond)), func() { run.read(c) })
	}
	// Faults: a few crashes (restarted after a while) and a region cut
	// off, each at a random time within the run.
	for range 1 + r.IntN(3) {
		id := run.tp.Nodes[r.IntN(len(run.tp.Nodes))].ID
		at := int64(start) + r.Int64N(int64(3*time.Second))
		run.s.At(at, func() {
			if run.s.Up(id) {
				run.crashes++
				run.s.Crash(id)
			}
		})
		run.s.At(at+int64(200*time.Millisecond)+r.Int64N(int64(time.Second)), func() { run.s.Restart(id) })
	}
	if r.IntN(2) == 0 {
		cut := run.tp.ByRegion[r.IntN(len(run.tp.ByRegion))]
		var rest []wire.NodeID
		for _, n := range run.tp.Nodes {
			if run.tp.RegionOf(n.ID) != run.tp.RegionOf(cut[0]) {
				rest = append(rest, n.ID)
			}
		}
		at := int64(start) + r.Int64N(int64(3*time.Second))
		run.s.At(at, func() { run.s.Partition(cut, rest) })
		run.s.At(at+r.Int64N(int64(1500*time.Millisecond)), func() { run.s.Unpartition(cut, rest) })
	}
	run.s.Run(run.stopAt + int64(30*time.Second))
	if len(run.pending) != 0 {
		t.Fatalf("seed %d: %d requests still pending after the run", seed, len(run.pending))
	}
	return run
}

func (run *casRun) submit(st *casStep, req *wire.Request) {
	run.nextID++
	id := run.nextID
	req.ID, req.Client = id, wire.ClientID(st.c.id)
	run.pending[id] = st
	st.op.Call = run.s.Now()
	run.s.Submit(run.tp.RegionOf(st.c.gateway), st.c.gateway, req)
	run.s.After(casTimeout, func() {
		if run.pending[id] == st {
			run.onReply(&wire.Reply{ID: id, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "client gave up"}})
		}
	})
}

// read starts a client's next increment, unless the run is over.
func (run *casRun) read(c *casClient) {
	if run.s.Now() >= run.stopAt {
		return
	}
	key := run.keys[run.rng.IntN(len(run.keys))]
	run.submit(&casStep{c: c, key: key, read: true}, &wire.Request{Op: wire.OpGet, Key: key})
}

// next schedules c's next increment after a short pause.
func (run *casRun) next(c *casClient) {
	run.s.After(time.Duration(run.rng.IntN(20))*time.Millisecond, func() { run.read(c) })
}

func (run *casRun) onReply(rep *wire.Reply) {
	st := run.pending[rep.ID]
	if st == nil {
		return // an answer after the client gave up
	}
	delete(run.pending, rep.ID)
	if st.read {
		if rep.Err != nil {
			run.next(st.c)
			return
		}
		run.write(st, rep)
		return
	}
	op := st.op
	op.Return, op.Outcome = run.s.Now(), check.OK
	switch {
	case rep.Err == nil:
		run.ok++
	case rep.Err.Code == wire.ErrConflict:
		op.Conflict = true
		run.conflicts++
	case rep.Err.Code == wire.ErrTimeout:
		op.Outcome, op.Return = check.Unknown, check.Never
		run.unknown++
	default:
		op.Outcome = check.Failed // refused: nothing written
	}
	run.hist.Ops = append(run.hist.Ops, op)
	run.next(st.c)
}

// write sends the conditional write that follows a read: the counter plus
// one (each value unique: count:client:seq), or now and then a delete,
// expecting the version read — the zero version if the key was absent, so
// that "absent" means one thing to the protocol and to the checker.
func (run *casRun) write(read *casStep, rep *wire.Reply) {
	c := read.c
	c.seq++
	count := 0
	if rep.Found {
		count, _ = strconv.Atoi(strings.SplitN(string(rep.Value), ":", 2)[0])
	}
	st := &casStep{c: c, key: read.key, op: check.Op{Client: c.id, Key: read.key, Kind: check.CondWrite,
		ExpectFound: rep.Found, Expect: string(rep.Value), Found: true, Value: fmt.Sprintf("%d:%d:%d", count+1, c.id, c.seq)}}
	req := &wire.Request{Op: wire.OpPut, Key: read.key, Value: []byte(st.op.Value), Cond: true}
	if rep.Found {
		req.Expected = rep.Version
	}
	if rep.Found && run.rng.IntN(10) == 0 {
		req.Op, req.Value, st.op.Found, st.op.Value = wire.OpDelete, nil, false, ""
	}
	run.submit(st, req)
}

// TestConditionalIncrementsLinearizable: concurrent conditional
// increments (and deletes) on one to three keys, from a client at every
// node, through crashes, a region cut off, loss, duplication and
// reordering, elections and (in half the seeds) migrations: the
// conditional writes, successes and conflicts alike, must be linearizable
// (doc.go, "Conditional writes").
func TestConditionalIncrementsLinearizable(t *testing.T) {
	first, n := uint64(1), uint64(simtest.Seeds(20, 5))
	if s := simtest.Seed(); s != 0 {
		first, n = s, 1
	}
	var ok, conflicts, unknown, crashes int
	for seed := first; seed < first+n; seed++ {
		run := runCAS(t, seed, nil)
		if res := check.Linearizable(run.hist, time.Minute); res.Verdict != check.Pass {
			t.Fatalf("seed %d: %v\nreplay: %s", seed, res, simtest.Replay(t, seed))
		}
		ok, conflicts, unknown, crashes = ok+run.ok, conflicts+run.conflicts, unknown+run.unknown, crashes+run.crashes
	}
	t.Logf("%d seeds: %d conditional writes applied, %d conflicts, %d unknown outcomes; %d crashes", n, ok, conflicts, unknown, crashes)
	// The runs must have raced: many writes, many of them losing.
	if ok < 20*int(n) || conflicts < 5*int(n) || crashes == 0 {
		t.Fatalf("the runs did not exercise contention and faults: %d applied, %d conflicts, %d crashes", ok, conflicts, crashes)
	}
}

// teethCAS finds a seed among the first seeds whose run with unsafe the
// linearizability checker rejects, failing t if there is none.
func teethCAS(t *testing.T, seeds uint64, unsafe func(*lease.Config)) {
	first, last := uint64(1), seeds
	if s := simtest.Seed(); s != 0 {
		first, last = s, s
	}
	for seed := first; seed <= last; seed++ {
		run := runCAS(t, seed, unsafe)
		if res := check.Linearizable(run.hist, time.Minute); res.Verdict == check.Violation {
			t.Logf("rejected: seed %d: %v", seed, res)
			return
		}
	}
	t.Fatalf("seeds %d..%d with the rule off all passed: the checker has no teeth\nreplay: %s", first, last, simtest.Replay(t, 0))
}

// TestTeethConditionIgnored: a master that applies conditional writes
// without checking them lets two increments from the same value both
// succeed; the linearizability checker must reject such a run.
func TestTeethConditionIgnored(t *testing.T) { teethCAS(t, 20, lease.UnsafeIgnoreCond) }

// TestTeethEagerConflicts: a master that answers a conflict against a
// record not yet on a majority (doc.go, "Conditional writes") reports a
// write that a later master may drop — after which a write expecting the
// version before it succeeds. The checker must reject such a run (seed 60
// of the first hundred does it).
func TestTeethEagerConflicts(t *testing.T) { teethCAS(t, 100, lease.UnsafeEagerConflicts) }
