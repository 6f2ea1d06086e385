package meteor_test

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

var modelFlag = flag.String("model", "", "checker model (default: the protocol's claim)")

// swarmWorld is a small three-region world, two nodes per region, with
// jittered links (jitter only adds to the base delay, which θt is computed
// from).
func swarmWorld(t testing.TB) *topo.World { return simtest.World3(t, 20, 35, 60, 5) }

// swarmConfig draws one seeded run: replica count, dispatch interval and
// redundancy, clock errors within ε, a fault schedule and a small contended
// key space (swarm testing: each seed its own shape).
func swarmConfig(t testing.TB, seed uint64, mode string) scenario.Config {
	r := rand.New(rand.NewPCG(seed, 43))
	var wl yaml.Node
	if err := wl.Encode(map[string]any{
		"preset": "a", "record_count": 1 + r.IntN(4), "operation_count": 1000,
		"read_proportion": 0.5, "update_proportion": 0.5, "request_distribution": "uniform",
	}); err != nil {
		t.Fatal(err)
	}
	const eps = meteor.DefaultMaxClockSkew
	c := scenario.Config{
		Seed:     seed,
		WorldDef: swarmWorld(t),
		Protocol: "meteor",
		Settings: &meteor.Config{
			ReplicasPerRegion: []int{1 + r.IntN(2)},
			Mode:              mustMode(t, mode),
			MaxClockSkew:      eps,
			DispatchInterval:  time.Duration(2+r.IntN(20)) * time.Millisecond,
			Redundant:         r.IntN(4),
			LeadAll:           r.IntN(2) == 0,
			// Short enough that compaction runs within the run.
			Horizon:     time.Second + time.Duration(100+r.IntN(900))*time.Millisecond,
			ReadTimeout: time.Second, WriteTimeout: time.Second,
		},
		Workload:      wl,
		Clients:       3 + r.IntN(4),
		ClosedLoop:    true,
		Duration:      time.Second + time.Duration(r.IntN(2000))*time.Millisecond,
		ClientTimeout: 2 * time.Second,
		// Within the bound: every clock within ε/2 of true time over the
		// run, so any two within ε.
		Clock:        scenario.Clock{MaxOffset: eps / 4, MaxDriftPPM: 100},
		RandomFaults: true,
		Check:        "auto",
	}
	if *modelFlag != "" {
		c.Check = *modelFlag
	}
	if r.IntN(2) == 0 {
		c.Net = scenario.Net{Loss: r.Float64() * 0.05, Duplicate: r.Float64() * 0.05, Reorder: r.Float64() * 0.1}
	}
	switch r.IntN(5) {
	case 0:
		mc(&c).Write = wire.One
	case 1:
		mc(&c).Write = wire.All
	}
	if r.IntN(3) == 0 {
		// Short timeouts and a horizon just above them: compaction and the
		// watermark work hard within the run.
		to := time.Duration(250+r.IntN(150)) * time.Millisecond
		mc(&c).ReadTimeout, mc(&c).WriteTimeout = to, to
		mc(&c).Horizon = to + time.Duration(100+r.IntN(400))*time.Millisecond
		c.ClientTimeout = to + 50*time.Millisecond
	}
	if r.IntN(3) == 0 {
		// Clock steps far beyond ε, forward and back: safety must not
		// depend on clocks (doc.go, "Guarantee").
		c.Faults = append(c.Faults, clockSteps(r, 1+r.IntN(3), c.Duration, 3*time.Second)...)
	}
	// Closures promised ahead of the clock: the default (unset), the
	// thesis' (0), or anywhere up to the write margin, where many write
	// copies are refused and reads count on closures far ahead.
	switch r.IntN(3) {
	case 0:
		zero := time.Duration(0)
		mc(&c).ClosureLead = &zero
	case 1:
		// WriteLead is its default here.
		wl := meteor.DefaultWriteLead(eps, mc(&c).DispatchInterval)
		lead := time.Duration(r.Int64N(int64(wl + eps)))
		mc(&c).ClosureLead = &lead
	}
	return c
}

// pinSwarm undoes swarmConfig's draws of write level, timeouts and clock
// steps, for tests that need the defaults.
func pinSwarm(c *scenario.Config) {
	mc(c).Write = wire.Quorum
	mc(c).ReadTimeout, mc(c).WriteTimeout, mc(c).Horizon = time.Second, time.Second, 0
	c.ClientTimeout = 2 * time.Second
	c.Faults = nil
}

var swarmNodes = []string{"a-0", "a-1", "b-0", "b-1", "c-0", "c-1"}

// clockSteps draws n clock steps on random nodes of the swarm world: each
// sets a node's clock off by up to ±max for a while within the run, then
// puts it back (the clock jumps twice).
func clockSteps(r *rand.Rand, n int, run, max time.Duration) []scenario.Fault {
	var out []scenario.Fault
	for range n {
		off := time.Duration(r.Int64N(int64(max)))
		if r.IntN(2) == 0 {
			off = -off
		}
		out = append(out, scenario.Fault{
			At:   time.Duration(r.Int64N(int64(run))),
			For:  time.Duration(100+r.IntN(1500)) * time.Millisecond,
			Skew: &scenario.Skew{Node: swarmNodes[r.IntN(len(swarmNodes))], Offset: off},
		})
	}
	return out
}

// TestClockSteps replays the two clock patterns a review found broke an
// earlier version (compaction and order floors timed by the wall clock; 11
// and 12 failures in these runs): every gateway's clock 3 s ahead for
// longer than the horizon and then back, and six random steps of up to 4 s.
// The closure-based watermark keeps every run sequentially consistent.
func TestClockSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		apply func(c *scenario.Config, r *rand.Rand)
	}{
		{"gateways-ahead", func(c *scenario.Config, r *rand.Rand) {
			c.Duration = 4 * time.Second
			mc(c).Horizon = 1200 * time.Millisecond
			for _, n := range []string{"a-0", "b-0", "c-0"} {
				c.Faults = append(c.Faults, scenario.Fault{At: 500 * time.Millisecond, For: 1500 * time.Millisecond,
					Skew: &scenario.Skew{Node: n, Offset: 3 * time.Second}})
			}
		}},
		{"random-steps", func(c *scenario.Config, r *rand.Rand) {
			c.Duration = 3 * time.Second
			for range 6 {
				c.Faults = append(c.Faults, scenario.Fault{At: time.Duration(r.IntN(2000)) * time.Millisecond,
					For:  time.Duration(1000+r.IntN(900)) * time.Millisecond,
					Skew: &scenario.Skew{Node: swarmNodes[r.IntN(len(swarmNodes))], Offset: time.Duration(r.Int64N(int64(4 * time.Second)))}})
			}
		}},
	} {
		for _, mode := range []string{"M1", "M2"} {
			t.Run(tc.name+"-"+mode, func(t *testing.T) {
				simtest.Swarm{Seeds: 20, Short: 4, StoreFaults: -1, Config: func(tb testing.TB, seed uint64) scenario.Config {
					c := swarmConfig(tb, seed, mode)
					c.RandomFaults, c.Net, c.Check = false, scenario.Net{}, "sequential"
					c.Faults = nil
					tc.apply(&c, rand.New(rand.NewPCG(seed, 99)))
					return c
				}}.Run(t)
			})
		}
	}
}

// TestSwarm runs seeded simulations per mode (simtest.Swarm: 100 each in
// CI, -seeds N, -soak), with crashes, partitions, message loss,
// duplication and reordering, clock errors within ε and clock steps beyond
// it, and faulty stores in a third of the seeds; each history is checked
// against the model the protocol claims (doc.go, "Guarantee").
func TestSwarm(t *testing.T) {
	for _, mode := range []string{"M1", "M2"} {
		t.Run(mode, func(t *testing.T) {
			sum := simtest.Swarm{Seeds: 100, Short: 10, Undecided: 0.1, Config: func(tb testing.TB, seed uint64) scenario.Config {
				return swarmConfig(tb, seed, mode)
			}}.Run(t)
			m := sum.Messages
			t.Logf("client errors %v; refused write copies %d, pulls %d, statuses %d", sum.Errors, m["meteor.rej"], m["meteor.pull"], m["meteor.status"])
			if sum.Seeds >= 50 && (m["meteor.rej"] == 0 || m["meteor.pull"] == 0 || sum.FailStops == 0) {
				t.Errorf("no write copy was refused, no pull was sent or no replica fail-stopped: the runs do not exercise closures, gaps and storage failure")
			}
		})
	}
}

// TestReadFailover: a read whose nearest replica is down moves on to the
// next-nearest replica (every replica answers a view time with the same
// version), instead of timing out. Region a's second node is down from the
// start; the only client of region a talks to a-0, so half the keys' nearest
// replica is down for it.
func TestReadFailover(t *testing.T) {
	c := swarmConfig(t, 1, "M2")
	c.WorldDef = simtest.World3(t, 20, 35, 60, 1)
	c.RandomFaults, c.Net = false, scenario.Net{}
	pinSwarm(&c)
	mc(&c).ReplicasPerRegion = []int{1}
	c.Clients = 3
	c.Duration = 3 * time.Second
	c.Faults = []scenario.Fault{{Crash: "a-1"}}
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "a", "record_count": 16, "request_distribution": "uniform"}); err != nil {
		t.Fatal(err)
	}
	c.Workload = wl
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check.Verdict != "pass" {
		t.Fatalf("%s: %s", res.Check.Verdict, res.Check.Detail)
	}
	reads := int64(0)
	for _, row := range res.Rows {
		if row.Region == "a" && row.Op == "read" {
			reads = row.Count
		}
	}
	if len(res.Errors) > 0 || reads < 10 {
		t.Fatalf("with a-1 down: errors %v, %d reads completed in region a; want no errors", res.Errors, reads)
	}
	t.Logf("%d reads in region a, no errors", reads)
}

// TestRestartAfterClockStep replays the patterns a second review found
// broke an earlier version: a gateway whose clock ran ahead restarts and
// loses the views it gave (its clients' floors), and a replica whose clock
// runs ahead compacts, restarts and serves reads before its first sweep
// (its watermark). Write level ALL makes one replica's view decide a read.
func TestRestartAfterClockStep(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, runs uint64
		readShare   float64
		perRegion   int
		records     int
		faults      func(seed uint64) []scenario.Fault
	}{
		{"gateway-floor", 230, 20, 0.95, 2, 1, func(seed uint64) []scenario.Fault {
			crashAt := time.Duration(1000+int(seed%7)*50) * time.Millisecond
			return []scenario.Fault{
				{At: 300 * time.Millisecond, For: crashAt - 300*time.Millisecond, Skew: &scenario.Skew{Node: "a-0", Offset: 1500 * time.Millisecond}},
				{At: 300 * time.Millisecond, For: crashAt - 300*time.Millisecond, Skew: &scenario.Skew{Node: "b-0", Offset: 1500 * time.Millisecond}},
				{At: crashAt, For: 30 * time.Millisecond, Crash: "a-0"},
			}
		}},
		{"replica-watermark", 1, 40, 0.5, 1, 4, func(seed uint64) []scenario.Fault {
			return []scenario.Fault{
				{At: 500 * time.Millisecond, Skew: &scenario.Skew{Node: "a-1", Offset: 2 * time.Second}},
				{At: time.Duration(1500+int(seed%9)*100) * time.Millisecond, For: 30 * time.Millisecond, Crash: "a-1"},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := tc.first; seed < tc.first+tc.runs; seed++ {
				for _, mode := range []string{"M1", "M2"} {
					c := swarmConfig(t, seed, mode)
					c.WorldDef = simtest.World3(t, 20, 35, 60, 1)
					c.RandomFaults, c.Net, c.Clock, c.Check = false, scenario.Net{}, scenario.Clock{}, "sequential"
					mc(&c).Write, mc(&c).ReplicasPerRegion = wire.All, []int{tc.perRegion}
					mc(&c).ReadTimeout, mc(&c).WriteTimeout = 250*time.Millisecond, 250*time.Millisecond
					mc(&c).Horizon, c.ClientTimeout = 400*time.Millisecond, 300*time.Millisecond
					c.Clients, c.Duration = 3, 4*time.Second
					var wl yaml.Node
					if err := wl.Encode(map[string]any{"preset": "a", "record_count": tc.records, "operation_count": 1000,
						"read_proportion": tc.readShare, "update_proportion": 1 - tc.readShare, "request_distribution": "uniform"}); err != nil {
						t.Fatal(err)
					}
					c.Workload = wl
					c.Faults = tc.faults(seed)
					res, err := scenario.Run(c)
					if err != nil {
						t.Fatal(err)
					}
					if res.Check.Verdict != "pass" {
						t.Fatalf("seed %d %s: %s: %s\nreplay: go test ./internal/protocol/meteor -run 'TestRestartAfterClockStep/%s' -v",
							seed, mode, res.Check.Verdict, res.Check.Detail, tc.name)
					}
				}
			}
		})
	}
}

// TestUndecidedAfterPartition replays a wedge a third review found: a far
// replica refuses every write of a key (the default lead covers only the
// nearest w) and compacts it; the key's nearest replica, cut off longer
// than the horizon, applies a write alone that can never commit. After the
// heal the far replica's pull answer must let the nearest replica decide
// that write uncommitted (its compaction floor, not only its watermark), so
// local reads return the committed value at local latency rather than
// waiting forever.
func TestUndecidedAfterPartition(t *testing.T) {
	tp := topo.NewTopology(simtest.World3(t, 20, 35, 60, 0.2))
	ks, err := meteor.NewKeyspace(tp, meteor.Config{ReplicasPerRegion: []int{1, 1, 1}, Write: wire.Quorum, Mode: meteor.M2,
		ReadTimeout: time.Second, WriteTimeout: time.Second, Horizon: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const key = "k"
	ra := ks.Replicas(nil, key)[0]
	var others []wire.NodeID
	for i := range tp.Nodes {
		if wire.NodeID(i) != ra {
			others = append(others, wire.NodeID(i))
		}
	}
	var s *sim.Sim
	sent := map[wire.RequestID]int64{}
	type reply struct {
		at  int64
		rep *wire.Reply
	}
	var replies []reply
	s = sim.New(sim.Config{Seed: 1, Topology: tp, Factory: ks.Factory(), Codec: sim.MustCodec(meteor.MessageTypes()),
		OnReply: func(r *wire.Reply) { replies = append(replies, reply{s.Now(), r}) }})
	id := wire.RequestID(0)
	submit := func(at time.Duration, op wire.Op, val string) {
		s.At(int64(at), func() {
			id++
			sent[id] = s.Now()
			req := &wire.Request{ID: id, Client: 1, Op: op, Key: key}
			if op == wire.OpPut {
				req.Value = []byte(val)
			}
			s.Submit(0, ra, req)
		})
	}
	submit(200*time.Millisecond, wire.OpPut, "v1")
	s.At(int64(time.Second), func() { s.Partition([]wire.NodeID{ra}, others) })
	submit(1050*time.Millisecond, wire.OpPut, "u") // applied at ra alone; times out
	s.At(int64(5*time.Second), func() { s.Unpartition([]wire.NodeID{ra}, others) })
	for i := range 20 {
		submit(6*time.Second+time.Duration(i)*300*time.Millisecond, wire.OpGet, "")
	}
	s.Run(int64(14 * time.Second))
	reads, slow := 0, 0
	for _, r := range replies {
		if sent[r.rep.ID] < int64(6*time.Second) {
			continue
		}
		reads++
		lat := time.Duration(r.at - sent[r.rep.ID])
		if r.rep.Err != nil || !r.rep.Found || string(r.rep.Value) != "v1" {
			t.Errorf("read %d after the heal: %q found=%v err=%v in %s; want v1", r.rep.ID, r.rep.Value, r.rep.Found, r.rep.Err, lat)
		}
		if lat > 100*time.Millisecond {
			slow++ // the first read waits for a pull's round trip
		}
	}
	if reads != 20 || slow > 1 {
		t.Fatalf("%d of 20 reads after the heal answered, %d of them slower than 100ms; want 20, at most 1", reads, slow)
	}
}

// mc is c's meteor settings.
func mc(c *scenario.Config) *meteor.Config { return c.Settings.(*meteor.Config) }

func mustMode(t testing.TB, s string) meteor.Mode {
	t.Helper()
	m, err := meteor.ParseMode(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReadsAnsweredAtOnce: with the default ClosureLead (ε + one interval
// + 1 ms), an M2 read that is not bound by its client's own write is
// answered from the statuses already received (doc.go, "What an M2 read
// waits for"). Read-only YCSB workload c on meteor3 (jittered links, three
// nodes per region): every region's read p99 stays within 2.5 ms of the
// floor, the two extra crossings of the region when another node of it
// serves the read, and the jitter. With the earlier default (8 ms) a read
// waited for the next status whenever the interval's phase plus the jitter
// exceeded 6 ms: p99 6.8–7.2 ms.
func TestReadsAnsweredAtOnce(t *testing.T) {
	var wl yaml.Node
	if err := wl.Encode(map[string]any{"preset": "c"}); err != nil {
		t.Fatal(err)
	}
	c := scenario.Config{Seed: 1, World: "meteor3", Protocol: "meteor", Settings: &meteor.Config{Mode: meteor.M2},
		Workload: wl, Duration: 10 * time.Second, Warmup: 2 * time.Second, Check: "auto"}
	res, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check.Verdict != "pass" {
		t.Fatalf("%s: %s\nreplay: go test ./internal/protocol/meteor -run TestReadsAnsweredAtOnce -v", res.Check.Verdict, res.Check.Detail)
	}
	regions := 0
	for _, row := range res.Rows {
		if row.Op != "read" || row.Region == "all" {
			continue
		}
		regions++
		if row.Count < 1000 || row.P99 > row.Floor+2.5 {
			t.Errorf("%s: %d reads, p99 %.1f ms; want at least 1,000 within 2.5 ms of the floor (%.1f ms)\nreplay: go test ./internal/protocol/meteor -run TestReadsAnsweredAtOnce -v",
				row.Region, row.Count, row.P99, row.Floor)
		}
	}
	if regions != 3 {
		t.Fatalf("read rows for %d regions; want 3", regions)
	}
}
