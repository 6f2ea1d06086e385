package quorum_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// queryOrdered is swarmConfig with query-ordered writes and clocks up to
// 300ms from true time, far beyond the 2ms bound, so clock order would
// break (TestTeethSwarmQueryOrderNeedsQuery): the history is checked
// against GuaranteeOf's model for the levels, not auto's, which gives up
// the claims that rest on the bound. skip drops the query round
// (UnsafeSkipQuery).
func queryOrdered(tb testing.TB, seed uint64, read, write wire.Level, skip bool) scenario.Config {
	c := swarmConfig(tb, seed, read, write)
	qc := c.Settings.(*quorum.Config)
	qc.WriteOrder = quorum.WriteOrderQuery
	if skip {
		quorum.UnsafeSkipQuery(qc)
	}
	c.Clock = scenario.Clock{MaxOffset: 300 * time.Millisecond, MaxDriftPPM: 100}
	g, err := quorum.GuaranteeOf(qc.ReplicasPerRegion.Expand(3, 1), read, write)
	if err != nil {
		tb.Fatal(err)
	}
	c.Check = g.Model()
	return c
}

// TestSwarmQueryOrder runs TestSwarm's seeded fault runs with
// query-ordered writes (write_order: query: no commit wait on writes or
// reads) and clocks up to 300ms off, for every read/write level
// combination, each history checked against the guarantee GuaranteeOf
// claims (doc.go, "Write order").
func TestSwarmQueryOrder(t *testing.T) {
	swarmEveryLevel(t, 4, func(tb testing.TB, seed uint64, r, w wire.Level) scenario.Config {
		return queryOrdered(tb, seed, r, w, false)
	}, nil)
}

// TestSwarmQueryOrderQuorum is TestSwarmQueryOrder's QUORUM/QUORUM runs,
// more of them: the combination the mode is for.
func TestSwarmQueryOrderQuorum(t *testing.T) {
	simtest.Swarm{Seeds: 64, Short: 8, Config: func(tb testing.TB, seed uint64) scenario.Config {
		return queryOrdered(tb, seed, wire.Quorum, wire.Quorum, false)
	}}.Run(t)
}

// TestTeethSwarmQueryOrderNeedsQuery: under queryOrdered's clocks (up to
// 300ms off) the swarm's checker rejects query-ordered writes that skip
// their query round, so TestSwarmQueryOrder's passing runs owe it to the
// query, not to clocks too close to matter.
func TestTeethSwarmQueryOrderNeedsQuery(t *testing.T) {
	for _, p := range [][2]wire.Level{{wire.Quorum, wire.Quorum}, {wire.All, wire.One}} {
		t.Run(p[0].String()+"-"+p[1].String(), func(t *testing.T) {
			gen := func(skip bool) simtest.Generator {
				return func(tb testing.TB, seed uint64) scenario.Config { return queryOrdered(tb, seed, p[0], p[1], skip) }
			}
			simtest.Teeth{Seeds: 200, Unsafe: gen(true), Safe: gen(false), SafeSeeds: 4}.Run(t)
		})
	}
}

// skewedQuery is skewed (one clock 300ms behind, far beyond the 2ms
// bound) with query-ordered writes.
func skewedQuery(skip bool) simtest.Generator {
	return func(tb testing.TB, seed uint64) scenario.Config {
		c := skewed(-300*time.Millisecond)(tb, seed)
		qc := c.Settings.(*quorum.Config)
		qc.WriteOrder = quorum.WriteOrderQuery
		if skip {
			quorum.UnsafeSkipQuery(qc)
		}
		return c
	}
}

// TestTeethQueryOrderNeedsQuery: query-ordered writes answer without
// commit wait, so their query round is all that orders them. With it,
// QUORUM/QUORUM stays linearizable with a clock 300ms behind (the order no
// longer rests on the clock bound); without it, the lagging coordinator's
// writes are stamped below writes that completed before them and lost,
// which the checker must catch.
func TestTeethQueryOrderNeedsQuery(t *testing.T) {
	simtest.Teeth{Seeds: 200, Unsafe: skewedQuery(true), Safe: skewedQuery(false)}.Run(t)
}

// TestQueryOrderDeterministic: one seed of query-ordered writes with
// every fault runs twice to the same trace.
func TestQueryOrderDeterministic(t *testing.T) {
	c := queryOrdered(t, 7, wire.Quorum, wire.Quorum, false)
	c.RandomFaults = true
	a := simtest.Deterministic(t, c)
	if a.Ops < 20 {
		t.Fatalf("seed 7: %d operations; want a real workload", a.Ops)
	}
}

// TestWriteOrderAuto: auto picks the query round where every write-level
// set also satisfies the read level and a read round trip plus a write
// round trip are at most max(write round trip, 2δ), the same at every
// node (it reads only the world and the settings).
func TestWriteOrderAuto(t *testing.T) {
	zero, err := topo.Parse([]byte(`
name: loop3
description: three regions on loopback, no delay
nodes_per_region: 1
regions:
  - {name: a, provider: local, lat: 0, long: 0}
  - {name: b, provider: local, lat: 0, long: 0}
  - {name: c, provider: local, lat: 0, long: 0}
intra: {one_way_ms: 0.05, jitter: {dist: none}}
links:
  - {from: a, to: b, one_way_ms: 0.1, jitter: {dist: none}}
  - {from: a, to: c, one_way_ms: 0.1, jitter: {dist: none}}
  - {from: b, to: c, one_way_ms: 0.1, jitter: {dist: none}}
`))
	if err != nil {
		t.Fatal(err)
	}
	preset := func(name string) *topo.World {
		w, err := topo.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tc := range []struct {
		world       *topo.World
		order       string
		read, write wire.Level
		offset      time.Duration
		noWait      bool
		commitWait  string
		want        bool
	}{
		// RTT 0.2ms: query then write 0.4ms, against a 4ms commit wait.
		{world: zero, order: "auto", read: wire.Quorum, write: wire.Quorum, want: true},
		{world: zero, order: "auto", read: wire.Quorum, write: wire.Quorum, noWait: true, want: false},
		{world: zero, order: "clock", read: wire.Quorum, write: wire.Quorum, want: false},
		// local3: 2ms + 2ms against max(2ms, 4ms), a tie: the query.
		{world: preset("local3"), order: "auto", read: wire.Quorum, write: wire.Quorum, want: true},
		{world: preset("local3"), order: "auto", read: wire.Quorum, write: wire.Quorum, offset: time.Millisecond, want: false},
		{world: preset("local3"), order: "clock", read: wire.Quorum, write: wire.Quorum, want: false},
		{world: preset("local3"), order: "query", read: wire.Quorum, write: wire.Quorum, want: true},
		// commit_wait measured: the wait expected is the farthest one-way
		// delay (1ms on local3, 0.1ms on loop3), under the write's round
		// trip, so the clock is faster.
		{world: preset("local3"), order: "auto", read: wire.Quorum, write: wire.Quorum, commitWait: "measured", want: false},
		{world: zero, order: "auto", read: wire.Quorum, write: wire.Quorum, commitWait: "measured", want: false},
		// meteor3: the round trips are ~100ms, the commit wait 4ms.
		{world: preset("meteor3"), order: "auto", read: wire.Quorum, write: wire.Quorum, want: false},
		// ALL reads, ONE writes: the query would need every replica where
		// the write needs one (one replica down: every write times out),
		// so auto keeps the clock even where the query is faster; query
		// order must be asked for.
		{world: zero, order: "auto", read: wire.All, write: wire.One, want: false},
		{world: preset("local3"), order: "auto", read: wire.All, write: wire.One, want: false},
		{world: preset("local3"), order: "auto", read: wire.Quorum, write: wire.One, want: false},
		{world: preset("local3"), order: "query", read: wire.All, write: wire.One, want: true},
		// ONE and LOCAL_ONE reads: the query is the coordinator's own
		// replica (round trip 0), needs no replica an ALL or QUORUM write
		// does not, and spares reads the commit wait, so auto picks it on
		// a WAN too (the write costs its own round trip either way).
		{world: preset("meteor3"), order: "auto", read: wire.One, write: wire.All, want: true},
		{world: preset("meteor3"), order: "auto", read: wire.LocalOne, write: wire.All, want: true},
		{world: preset("meteor3"), order: "auto", read: wire.One, write: wire.Quorum, want: true},
		{world: preset("local3"), order: "auto", read: wire.One, write: wire.All, want: true},
		// LOCAL_ONE reads, QUORUM writes: a QUORUM set can leave out the
		// coordinator's region, whose replica the query needs.
		{world: preset("meteor3"), order: "auto", read: wire.LocalOne, write: wire.Quorum, want: false},
	} {
		cfg := quorum.Config{Read: tc.read, Write: tc.write, WriteOrder: tc.order, MaxClockOffset: tc.offset, NoCommitWait: tc.noWait, CommitWait: tc.commitWait}
		ks, err := quorum.NewKeyspace(topo.NewTopology(tc.world), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := ks.QueryOrdered(); got != tc.want {
			t.Errorf("%s %s %s/%s offset=%s no_commit_wait=%v: QueryOrdered() = %v; want %v",
				tc.world.Name, tc.order, tc.read, tc.write, tc.offset, tc.noWait, got, tc.want)
		}
	}
	if _, err := quorum.NewKeyspace(topo.NewTopology(zero), quorum.Config{WriteOrder: "hlc"}); err == nil {
		t.Error(`write_order "hlc" accepted; want an error`)
	}
	for _, c := range []quorum.Config{
		{CommitWait: "ntp"},
		{CommitWait: quorum.CommitWaitMeasured, NoCommitWait: true},
		{CommitWait: quorum.CommitWaitMeasured, WriteOrder: quorum.WriteOrderQuery},
	} {
		if _, err := quorum.NewKeyspace(topo.NewTopology(zero), c); err == nil {
			t.Errorf("commit_wait %q with no_commit_wait %v, write_order %q accepted; want an error", c.CommitWait, c.NoCommitWait, c.WriteOrder)
		}
	}
}
