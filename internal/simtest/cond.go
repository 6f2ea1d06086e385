package simtest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Increments is a seeded run of read-modify-write clients, the way the
// RESP front end's INCR uses conditional writes (wire.Request.Cond): a
// client at every node (ClientsPerNode, default 1) reads a key and
// writes its counter's next value
// with a conditional write expecting the version it read (now and then a
// conditional delete instead), over and over, on one to three keys, for
// four simulated seconds — while, with Faults, nodes crash and restart, a
// region is cut off for a while and the network loses, duplicates and
// reorders messages. Now and then a client writes a plain value instead.
// Its history holds the writes only (successes, conflicts and unknown
// outcomes): a protocol that applies conditional writes must make them
// linearizable with the plain ones, whatever its reads promise.
type Increments struct {
	Topology       *topo.Topology
	Factory        env.Factory
	Codec          sim.Codec
	Faults         bool
	ClientsPerNode int
}

// IncrementsResult is one run's history of conditional writes and what
// happened: writes applied, conflicts, unknown outcomes, crashes.
type IncrementsResult struct {
	History                     check.History
	Applied, Conflicts, Unknown int
	Crashes                     int
}

// incrTimeout is how long a client waits for a reply (its gateway may have
// crashed) before it gives up: a write's outcome is then unknown.
const incrTimeout = 5 * time.Second

type incrRun struct {
	s       *sim.Sim
	tp      *topo.Topology
	rng     *rand.Rand
	nextID  wire.RequestID
	pending map[wire.RequestID]*incrStep
	stopAt  int64
	keys    []string
	res     IncrementsResult
}

type incrClient struct {
	id      int64
	gateway wire.NodeID
	seq     int
}

// incrStep is a client's request in flight: a read, or the conditional
// write that follows it (op, as the history will record it).
type incrStep struct {
	c    *incrClient
	key  string
	read bool
	op   check.Op
}

// Run runs seed and returns its history; it fails tb if a request is
// still unanswered when the run is over.
func (in Increments) Run(tb testing.TB, seed uint64) IncrementsResult {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 0xca5))
	run := &incrRun{rng: r, tp: in.Topology, pending: map[wire.RequestID]*incrStep{}}
	cfg := sim.Config{Seed: seed, Topology: in.Topology, Factory: in.Factory, OnReply: run.onReply, Codec: in.Codec}
	if in.Faults {
		cfg.Net = sim.NetConfig{Loss: r.Float64() * 0.03, Duplicate: r.Float64() * 0.03, Reorder: r.Float64() * 0.05}
	}
	run.s = sim.New(cfg)
	for i := range 1 + r.IntN(3) {
		run.keys = append(run.keys, fmt.Sprintf("counter%d", i))
	}
	const start = 2 * time.Second
	run.stopAt = int64(start + 4*time.Second)
	for i := range len(run.tp.Nodes) * max(in.ClientsPerNode, 1) {
		c := &incrClient{id: int64(i + 1), gateway: run.tp.Nodes[i%len(run.tp.Nodes)].ID}
		run.s.At(int64(start)+r.Int64N(int64(50*time.Millisecond)), func() { run.read(c) })
	}
	if in.Faults {
		run.faults(int64(start))
	}
	run.s.Run(run.stopAt + int64(30*time.Second))
	if len(run.pending) != 0 {
		tb.Fatalf("seed %d: %d requests still pending after the run\nreplay: %s", seed, len(run.pending), Replay(tb, seed))
	}
	return run.res
}

// faults schedules a few crashes, each restarted after a while, and (in
// half the seeds) a region cut off, at random times within the run.
func (run *incrRun) faults(start int64) {
	r := run.rng
	for range 1 + r.IntN(3) {
		id := run.tp.Nodes[r.IntN(len(run.tp.Nodes))].ID
		at := start + r.Int64N(int64(3*time.Second))
		run.s.At(at, func() {
			if run.s.Up(id) {
				run.res.Crashes++
				run.s.Crash(id)
			}
		})
		run.s.At(at+int64(200*time.Millisecond)+r.Int64N(int64(time.Second)), func() { run.s.Restart(id) })
	}
	if len(run.tp.ByRegion) > 1 && r.IntN(2) == 0 {
		reg := r.IntN(len(run.tp.ByRegion))
		cut := run.tp.ByRegion[reg]
		var rest []wire.NodeID
		for _, n := range run.tp.Nodes {
			if run.tp.RegionOf(n.ID) != reg {
				rest = append(rest, n.ID)
			}
		}
		at := start + r.Int64N(int64(3*time.Second))
		run.s.At(at, func() { run.s.Partition(cut, rest) })
		run.s.At(at+r.Int64N(int64(1500*time.Millisecond)), func() { run.s.Unpartition(cut, rest) })
	}
}

func (run *incrRun) submit(st *incrStep, req *wire.Request) {
	run.nextID++
	id := run.nextID
	req.ID, req.Client = id, wire.ClientID(st.c.id)
	run.pending[id] = st
	st.op.Call = run.s.Now()
	run.s.Submit(run.tp.RegionOf(st.c.gateway), st.c.gateway, req)
	run.s.After(incrTimeout, func() {
		if run.pending[id] == st {
			run.onReply(&wire.Reply{ID: id, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "client gave up"}})
		}
	})
}

// read starts a client's next increment, unless the run is over.
func (run *incrRun) read(c *incrClient) {
	if run.s.Now() >= run.stopAt {
		return
	}
	key := run.keys[run.rng.IntN(len(run.keys))]
	if run.rng.IntN(8) == 0 {
		// Now and then a plain write, resetting the counter: conditional
		// writes must be linearizable among plain writes too. (Active,
		// where a protocol has update modes: a lease keyspace's passive
		// write may be lost with its master, lease/doc.go.)
		c.seq++
		v := fmt.Sprintf("0:%d:%d", c.id, c.seq)
		st := &incrStep{c: c, key: key, op: check.Op{Client: c.id, Key: key, Kind: check.Write, Found: true, Value: v}}
		run.submit(st, &wire.Request{Op: wire.OpPut, Key: key, Value: []byte(v), Update: wire.UpdateActive})
		return
	}
	run.submit(&incrStep{c: c, key: key, read: true}, &wire.Request{Op: wire.OpGet, Key: key})
}

// next schedules c's next increment after a short pause.
func (run *incrRun) next(c *incrClient) {
	run.s.After(time.Duration(run.rng.IntN(20))*time.Millisecond, func() { run.read(c) })
}

func (run *incrRun) onReply(rep *wire.Reply) {
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
	case rep.Err == nil && op.Kind == check.CondWrite:
		run.res.Applied++
	case rep.Err == nil:
	case rep.Err.Code == wire.ErrConflict:
		op.Conflict = true
		run.res.Conflicts++
	case rep.Err.Code == wire.ErrTimeout:
		op.Outcome, op.Return = check.Unknown, check.Never
		run.res.Unknown++
	default:
		op.Outcome = check.Failed // refused: nothing written
	}
	run.res.History.Ops = append(run.res.History.Ops, op)
	run.next(st.c)
}

// write sends the conditional write that follows a read: the counter plus
// one (each value unique: count:client:seq), or now and then a delete,
// expecting the version read — the zero version if the key was absent, so
// that "absent" means one thing to the protocol and to the checker, whose
// model compares values.
func (run *incrRun) write(read *incrStep, rep *wire.Reply) {
	c := read.c
	c.seq++
	count := 0
	if rep.Found {
		count, _ = strconv.Atoi(strings.SplitN(string(rep.Value), ":", 2)[0])
	}
	st := &incrStep{c: c, key: read.key, op: check.Op{Client: c.id, Key: read.key, Kind: check.CondWrite,
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

// IncrementsGen draws a seed's Increments (its cluster and protocol
// settings).
type IncrementsGen func(tb testing.TB, seed uint64) Increments

// Check runs seeds (Seeds(ci, short), or the one -seed names) and fails t
// at the first whose conditional writes are not linearizable, printing the
// replay command. It also fails t unless the runs raced — at least
// minApplied writes applied and minConflicts conflicts per seed — and, with
// Faults, crashed something. It returns the runs' totals.
func (gen IncrementsGen) Check(t testing.TB, ci, short, minApplied, minConflicts int) IncrementsResult {
	t.Helper()
	first, n := uint64(1), uint64(Seeds(ci, short))
	if s := Seed(); s != 0 {
		first, n = s, 1
	}
	var sum IncrementsResult
	for seed := first; seed < first+n; seed++ {
		in := gen(t, seed)
		res := in.Run(t, seed)
		if v := check.Linearizable(res.History, time.Minute); v.Verdict != check.Pass {
			t.Fatalf("seed %d: %v\nreplay: %s", seed, v, Replay(t, seed))
		}
		sum.Applied, sum.Conflicts, sum.Unknown, sum.Crashes = sum.Applied+res.Applied, sum.Conflicts+res.Conflicts, sum.Unknown+res.Unknown, sum.Crashes+res.Crashes
	}
	t.Logf("%d seeds: %d conditional writes applied, %d conflicts, %d unknown outcomes; %d crashes", n, sum.Applied, sum.Conflicts, sum.Unknown, sum.Crashes)
	if sum.Applied < minApplied*int(n) || sum.Conflicts < minConflicts*int(n) || gen(t, first).Faults && sum.Crashes == 0 {
		t.Fatalf("the runs did not exercise contention and faults: %d applied, %d conflicts, %d crashes", sum.Applied, sum.Conflicts, sum.Crashes)
	}
	return sum
}

// Teeth finds a seed among the first seeds (or the one -seed names) whose
// run the linearizability checker rejects — gen then draws a protocol with
// a safety rule switched off — and fails t if there is none.
func (gen IncrementsGen) Teeth(t testing.TB, seeds uint64) {
	t.Helper()
	first, last := uint64(1), seeds
	if s := Seed(); s != 0 {
		first, last = s, s
	}
	for seed := first; seed <= last; seed++ {
		if v := check.Linearizable(gen(t, seed).Run(t, seed).History, time.Minute); v.Verdict == check.Violation {
			t.Logf("rejected: seed %d: %v", seed, v)
			return
		}
	}
	t.Fatalf("seeds %d..%d with the rule off all passed: the checker has no teeth\nreplay: %s", first, last, Replay(t, 0))
}
