package lease_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/wire"
)

const fiveRegions = `
name: five
nodes_per_region: 2
regions: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}]
links:
  - {from: a, to: b, one_way_ms: 20}
  - {from: a, to: c, one_way_ms: 20}
  - {from: a, to: d, one_way_ms: 20}
  - {from: a, to: e, one_way_ms: 20}
  - {from: b, to: c, one_way_ms: 20}
  - {from: b, to: d, one_way_ms: 20}
  - {from: b, to: e, one_way_ms: 20}
  - {from: c, to: d, one_way_ms: 20}
  - {from: c, to: e, one_way_ms: 20}
  - {from: d, to: e, one_way_ms: 20}
`

func electionConfig() lease.Config {
	return lease.Config{LeaseLength: 2 * time.Second, RenewTimeout: 300 * time.Millisecond, MasterLease: 500 * time.Millisecond,
		ElectionTimeout: 600 * time.Millisecond, ReadTimeout: 3 * time.Second, WriteTimeout: time.Second}
}

// electionScript: the master of a key (region a) grants a lease to the
// region-b replica S, then S is cut off from every node but its region's
// gateway G and the master crashes. A read in region c makes its replica C
// stand for election; C wins with c, d and e. Client Y then writes v2
// through C and reads through G, which S answers under the old master's
// lease.
func electionScript(t *testing.T, cfg lease.Config) (*script, wire.RequestID, wire.RequestID) {
	sc := newScript(t, fiveRegions, cfg)
	key := sc.keyMasteredIn(0)
	master, s, c := sc.replica(key, 0), sc.replica(key, 1), sc.replica(key, 2)
	g := sc.other(s)
	const t0 = 5 * time.Second // after every restart fence
	sc.submit(t0, 1, g, wire.OpPut, key, "v1")
	sc.submit(t0+300*time.Millisecond, 1, g, wire.OpGet, key, "")
	sc.s.At(int64(t0+500*time.Millisecond), func() {
		for _, n := range sc.tp.Nodes {
			if n.ID != s && n.ID != g {
				sc.s.Block(s, n.ID)
				sc.s.Block(n.ID, s)
			}
		}
		sc.s.Crash(master)
	})
	read := sc.submit(t0+600*time.Millisecond, 2, sc.other(c), wire.OpGet, key, "")
	write := sc.submit(t0+1600*time.Millisecond, 1, c, wire.OpPut, key, "v2")
	sc.submit(t0+1800*time.Millisecond, 1, g, wire.OpGet, key, "")
	sc.s.Run(int64(20 * time.Second))
	return sc, read, write
}

// TestElectionAfterMasterCrash: a crashed master's key gets a new master
// within the election timeout plus the old master's lease, and reads go on.
// The new master respects the leases its predecessor may have granted: the
// write through it cannot complete while the cut-off replica's lease runs,
// so the client's next read (served under that lease) is not stale.
func TestElectionAfterMasterCrash(t *testing.T) {
	sc, read, write := electionScript(t, electionConfig())
	r := sc.reply(read)
	if r.Err != nil || string(r.Value) != "v1" {
		t.Fatalf("read after the master crashed: %+v; want v1 from the new master", r)
	}
	if got := time.Duration(sc.hist.Ops[2].Return - sc.hist.Ops[2].Call); got > 2*time.Second {
		t.Fatalf("the read waited %s for an election; want under 2s", got)
	}
	if w := sc.reply(write); w.Err == nil || !w.Err.OutcomeUnknown() {
		t.Fatalf("write while a cut-off replica may hold the old master's lease: %+v; want an unknown outcome", w)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v (%+v)", res, sc.hist.Ops)
	}
}

// TestTeethElectionFence: without the fence the new master completes the
// write at a majority, and the client then reads its old value from the
// replica still serving the old master's lease: the checker must object.
func TestTeethElectionFence(t *testing.T) {
	cfg := electionConfig()
	lease.UnsafeNoElectionFence(&cfg)
	sc, _, write := electionScript(t, cfg)
	if w := sc.reply(write); w.Err != nil {
		t.Fatalf("without the fence the write should complete: %+v", w)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Violation {
		t.Fatalf("history without the election fence: %v; want a violation (%+v)", res, sc.hist.Ops)
	}
}

// TestMigration: a manual migration moves a key's mastership to region c;
// writes from c then complete at c's latency (a majority: c plus the two
// nearest regions), reads stay consistent, and migrating to an unknown
// region is refused with the valid names.
func TestMigration(t *testing.T) {
	sc := newScript(t, fiveRegions, electionConfig())
	key := sc.keyMasteredIn(0)
	c := sc.replica(key, 2)
	gc := sc.other(c)
	const t0 = 5 * time.Second
	sc.submit(t0, 1, gc, wire.OpPut, key, "v1")
	mig := sc.submit(t0+500*time.Millisecond, 9, gc, wire.OpMigrate, key, "c")
	bad := sc.submit(t0+500*time.Millisecond, 9, gc, wire.OpMigrate, key, "mars")
	sc.submit(t0+1500*time.Millisecond, 1, gc, wire.OpPut, key, "v2")
	rd := sc.submit(t0+2000*time.Millisecond, 1, sc.other(sc.replica(key, 1)), wire.OpGet, key, "")
	sc.s.Run(int64(20 * time.Second))
	if r := sc.reply(mig); r.Err != nil || string(r.Value) != "c" {
		t.Fatalf("migrate: %+v; want the key's master in region c", r)
	}
	if r := sc.reply(bad); r.Err == nil || r.Err.Code != wire.ErrInvalid || !strings.Contains(r.Err.Msg, "a, b, c, d, e") {
		t.Fatalf("migrate to an unknown region: %+v; want ErrInvalid naming the regions", r)
	}
	if r := sc.reply(rd); string(r.Value) != "v2" {
		t.Fatalf("read after the migrated write: %+v", r)
	}
	w2 := sc.hist.Ops[1]
	if d := time.Duration(w2.Return - w2.Call); w2.Outcome != check.OK || d > 100*time.Millisecond {
		t.Fatalf("write after migrating to its region: %v in %s; want one round trip (~40ms)", w2.Outcome, d)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}

// TestMigrationFreezeWithdrawsPublishedReads: a master's local reads,
// published, stop being answered the moment a migration freezes the key:
// a read there right after gets the protocol's retryable refusal, as
// without publication, not the published value (the freeze withdraws it).
// A master that kept them answers the value (teeth).
func TestMigrationFreezeWithdrawsPublishedReads(t *testing.T) {
	for _, keep := range []bool{false, true} {
		cfg := electionConfig()
		if keep {
			lease.UnsafeKeepPublishedOnFreeze(&cfg)
		}
		sc := newScript(t, fiveRegions, cfg, func(c *sim.Config) { c.PublishReads = true })
		key := sc.keyMasteredIn(0)
		m := sc.replica(key, 0)
		const t0 = 5 * time.Second
		sc.submit(t0, 1, m, wire.OpPut, key, "v1")
		// Within the publication's end: half the 500 ms master lease the
		// first read's confirmation gave.
		for i := range 3 {
			sc.submit(t0+time.Duration(200+50*i)*time.Millisecond, 1, m, wire.OpGet, key, "")
		}
		mig := sc.submit(t0+330*time.Millisecond, 9, m, wire.OpMigrate, key, "c")
		rd := sc.submit(t0+331*time.Millisecond, 2, m, wire.OpGet, key, "")
		sc.s.Run(int64(20 * time.Second))
		if sc.s.PublishedReadsServed() == 0 {
			t.Fatalf("keep=%v: no read was answered from a published reply before the migration: the test tests nothing", keep)
		}
		if r := sc.reply(mig); r.Err != nil {
			t.Fatalf("keep=%v: migrate: %+v", keep, r)
		}
		refused := sc.reply(rd).Err != nil && sc.reply(rd).Err.Code == wire.ErrUnavailable
		if !keep && !refused {
			t.Errorf("read at the frozen master: %+v; want a retryable UNAVAILABLE, as the protocol answers it", sc.reply(rd))
		}
		if keep && refused {
			t.Error("teeth: a master keeping its published reads through the freeze still refused the read")
		}
	}
}

// TestMigrationUnderSteadyWrites: a manual migration of a key that
// always has a write in progress (writes every 10ms, each taking a round
// trip of ~40ms) still moves it: the master drains the key, refusing new
// writes with a retryable error, instead of refusing the move as long as
// writes keep coming.
func TestMigrationUnderSteadyWrites(t *testing.T) {
	sc := newScript(t, fiveRegions, electionConfig())
	key := sc.keyMasteredIn(0)
	ga := sc.other(sc.replica(key, 0))
	gc := sc.other(sc.replica(key, 2))
	const t0 = 5 * time.Second
	var writes []wire.RequestID
	for i := range 100 {
		at := t0 + time.Duration(i)*10*time.Millisecond
		writes = append(writes, sc.submit(at, int64(10+i), ga, wire.OpPut, key, fmt.Sprintf("w%d", i)))
	}
	mig := sc.submit(t0+300*time.Millisecond, 9, gc, wire.OpMigrate, key, "c")
	sc.s.Run(int64(20 * time.Second))
	if r := sc.reply(mig); r.Err != nil || string(r.Value) != "c" {
		t.Fatalf("migrate under steady writes: %+v; want the key's master in region c", r)
	}
	ok := 0
	for _, id := range writes {
		r := sc.reply(id)
		switch {
		case r.Err == nil:
			ok++
		case r.Err.Code != wire.ErrUnavailable:
			t.Fatalf("write during the drain: %v; want success or a retryable error", r.Err)
		}
	}
	if ok < len(writes)/2 {
		t.Fatalf("only %d of %d writes succeeded", ok, len(writes))
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}

// TestReadsNotLinearizable: what doc.go claims about reads. An active
// write reaches the near lease holder (region b) before the far one
// (region c); a read at b returns the new value, and a read at c that
// starts after it returns the old one. Linearizability rejects the
// history; per-key sequential consistency, which is the claim, accepts it.
func TestReadsNotLinearizable(t *testing.T) {
	sc := newScript(t, `
name: skewed
nodes_per_region: 2
regions: [{name: a}, {name: b}, {name: c}]
links:
  - {from: a, to: b, one_way_ms: 10}
  - {from: a, to: c, one_way_ms: 60}
  - {from: b, to: c, one_way_ms: 60}
`, electionConfig())
	key := sc.keyMasteredIn(0)
	ga, gb, gc := sc.other(sc.replica(key, 0)), sc.other(sc.replica(key, 1)), sc.other(sc.replica(key, 2))
	const t0 = 5 * time.Second
	sc.submit(t0, 1, ga, wire.OpPut, key, "v1")
	sc.submit(t0+300*time.Millisecond, 2, gb, wire.OpGet, key, "")
	sc.submit(t0+300*time.Millisecond, 3, gc, wire.OpGet, key, "")
	sc.submit(t0+time.Second, 1, ga, wire.OpPut, key, "v2")
	rb := sc.submit(t0+time.Second+20*time.Millisecond, 2, gb, wire.OpGet, key, "")
	rc := sc.submit(t0+time.Second+30*time.Millisecond, 3, gc, wire.OpGet, key, "")
	sc.s.Run(int64(10 * time.Second))
	if b, c := sc.reply(rb), sc.reply(rc); string(b.Value) != "v2" || string(c.Value) != "v1" {
		t.Fatalf("reads at b and c: %q, %q; want v2 then v1", b.Value, c.Value)
	}
	if res := check.Linearizable(sc.hist, 10*time.Second); res.Verdict != check.Violation {
		t.Fatalf("linearizability: %v; want a violation", res)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("per-key sequential consistency: %v; want pass", res)
	}
}

// TestRequestsDuringMigration: while a key's mastership moves, its old
// master refuses reads and writes with a retryable error (nothing is
// written), never a stale value; afterwards both work at the new master.
func TestRequestsDuringMigration(t *testing.T) {
	sc := newScript(t, fiveRegions, electionConfig())
	key := sc.keyMasteredIn(0)
	ga := sc.other(sc.replica(key, 0))
	gc := sc.other(sc.replica(key, 2))
	const t0 = 5 * time.Second
	sc.submit(t0, 1, ga, wire.OpPut, key, "v1")
	sc.submit(t0+200*time.Millisecond, 1, ga, wire.OpGet, key, "")
	mig := sc.submit(t0+400*time.Millisecond, 9, gc, wire.OpMigrate, key, "c")
	// The migrate request reaches the master (region a) 20ms later; the
	// handoff then takes a few round trips.
	var during []wire.RequestID
	for i := range 6 {
		at := t0 + 425*time.Millisecond + time.Duration(i)*10*time.Millisecond
		during = append(during, sc.submit(at, 2, ga, wire.OpPut, key, "d"+time.Duration(i).String()), sc.submit(at, 3, ga, wire.OpGet, key, ""))
	}
	after := sc.submit(t0+time.Second, 1, ga, wire.OpPut, key, "v3")
	read := sc.submit(t0+1200*time.Millisecond, 1, ga, wire.OpGet, key, "")
	sc.s.Run(int64(20 * time.Second))
	if r := sc.reply(mig); r.Err != nil {
		t.Fatalf("migrate: %v", r.Err)
	}
	refused := 0
	for _, id := range during {
		r := sc.reply(id)
		if r.Err == nil {
			continue
		}
		if r.Err.Code != wire.ErrUnavailable || !strings.Contains(r.Err.Msg, "retry") {
			t.Fatalf("request during the migration: %v; want a retryable error", r.Err)
		}
		refused++
	}
	if refused == 0 {
		t.Fatal("no request met the migration in progress; the test does not test it")
	}
	if r := sc.reply(after); r.Err != nil {
		t.Fatalf("write after the migration: %v", r.Err)
	}
	if r := sc.reply(read); string(r.Value) != "v3" {
		t.Fatalf("read after the migration: %q", r.Value)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
	t.Logf("%d of %d requests during the handoff were refused with a retryable error", refused, len(during))
}

// TestInvalidSettings: each bad lease setting is refused with a message
// naming it.
func TestInvalidSettings(t *testing.T) {
	w := newScript(t, fiveRegions, electionConfig()).tp
	for _, c := range []struct {
		cfg  lease.Config
		want string
	}{
		{lease.Config{LeaseLength: -time.Second}, "lease_length -1s: must be positive"},
		{lease.Config{MasterLease: -1}, "master_lease"},
		{lease.Config{MaxDriftPPM: 200_000}, "max_drift_ppm 200000"},
		{lease.Config{MigrateThreshold: 0.4}, "migrate_threshold 0.4: must be in (0.5, 1]"},
		{lease.Config{MigrateMinWrites: -2}, "migrate_min_writes -2"},
		{lease.Config{Affiliates: 2}, `affiliates 2: a region of world "five" has only 1 other nodes`},
		{lease.Config{HotRate: -1}, "hot_rate -1"},
	} {
		_, err := lease.NewKeyspace(w, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error containing %q", c.cfg, err, c.want)
		}
	}
}

// TestAutomaticMigration: a key written only from region c moves its
// mastership there after one window, and its writes then need only c's
// majority round trip instead of the trip to region a and back.
func TestAutomaticMigration(t *testing.T) {
	cfg := electionConfig()
	cfg.AutoMigrate, cfg.MigrateWindow, cfg.MigrateMinWrites = true, time.Second, 5
	sc := newScript(t, fiveRegions, cfg)
	key := sc.keyMasteredIn(0)
	gc := sc.other(sc.replica(key, 2))
	const t0 = 5 * time.Second
	var ids []wire.RequestID
	for i := range 40 {
		ids = append(ids, sc.submit(t0+time.Duration(i)*100*time.Millisecond, 1, gc, wire.OpPut, key, "w"+time.Duration(i).String()))
	}
	sc.s.Run(int64(20 * time.Second))
	first, last := sc.hist.Ops[0], sc.hist.Ops[len(sc.hist.Ops)-1]
	if first.Outcome != check.OK || last.Outcome != check.OK {
		t.Fatalf("writes failed: %+v %+v", first, last)
	}
	before, after := time.Duration(first.Return-first.Call), time.Duration(last.Return-last.Call)
	// Before: c → a (20ms) + a's majority (40ms) + back (20ms) ≈ 80ms;
	// after: c's majority ≈ 40ms.
	if after > 50*time.Millisecond || before < 70*time.Millisecond {
		t.Fatalf("write latency %s before and %s after the window; want ~80ms then ~40ms (the master moved to c)", before, after)
	}
	for _, id := range ids {
		if r := sc.reply(id); r.Err != nil && r.Err.Code != wire.ErrUnavailable {
			t.Fatalf("write %d: %v", id, r.Err)
		}
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}

// TestUpdateModePerRequest: active and passive update are request options
// (GlobLease Alg. 2). With no lease held anywhere, a passive write
// completes at the master alone while an active one waits for a majority;
// the keyspace default (active) applies when the request names none.
func TestUpdateModePerRequest(t *testing.T) {
	sc := newScript(t, fiveRegions, electionConfig())
	key := sc.keyMasteredIn(0)
	ga := sc.other(sc.replica(key, 0))
	const t0 = 5 * time.Second
	sc.submit(t0, 1, ga, wire.OpPut, key, "v1") // the first write is always active
	sc.submit(t0+100*time.Millisecond, 1, ga, wire.OpGet, key, "")
	p := sc.submitMode(t0+300*time.Millisecond, 1, ga, wire.OpPut, key, "v2", wire.UpdatePassive)
	a := sc.submitMode(t0+500*time.Millisecond, 1, ga, wire.OpPut, key, "v3", wire.UpdateActive)
	d := sc.submit(t0+700*time.Millisecond, 1, ga, wire.OpPut, key, "v4")
	sc.s.Run(int64(10 * time.Second))
	lat := sc.took
	if lat[p] > 10*time.Millisecond || lat[a] < 40*time.Millisecond || lat[d] < 40*time.Millisecond {
		t.Fatalf("write latencies: passive %s, active %s, default %s; want the passive one local (< 10ms) and the others a majority round trip (≥ 40ms)", lat[p], lat[a], lat[d])
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}

// TestWinnerRestartKeepsTheFence (found in review): a replica that never
// granted or confirmed anything — cut off from the start — wins an
// election, crashes and restarts. Its election fence was in memory only;
// the durable activity marker, written before its first Accept left, makes
// the restart fence instead, so a write cannot complete while a cut-off
// replica still serves the old master's lease.
func TestWinnerRestartKeepsTheFence(t *testing.T) {
	sc := newScript(t, fiveRegions, electionConfig())
	key := sc.keyMasteredIn(0)
	master, s, c := sc.replica(key, 0), sc.replica(key, 1), sc.replica(key, 2)
	g := sc.other(s)
	const t0 = 5 * time.Second
	sc.s.At(0, func() {
		for _, n := range sc.tp.Nodes {
			if n.ID != c {
				sc.s.Block(c, n.ID)
				sc.s.Block(n.ID, c)
			}
		}
	})
	sc.submit(t0, 1, g, wire.OpPut, key, "v1")
	sc.submit(t0+300*time.Millisecond, 1, g, wire.OpGet, key, "")
	sc.s.At(int64(t0+500*time.Millisecond), func() {
		sc.s.Heal()
		for _, n := range sc.tp.Nodes {
			if n.ID != s && n.ID != g {
				sc.s.Block(s, n.ID)
				sc.s.Block(n.ID, s)
			}
		}
		sc.s.Crash(master)
	})
	read := sc.submit(t0+600*time.Millisecond, 2, sc.other(c), wire.OpGet, key, "")
	sc.s.At(int64(t0+1400*time.Millisecond), func() { sc.s.Crash(c) })
	sc.s.At(int64(t0+1450*time.Millisecond), func() { sc.s.Restart(c) })
	write := sc.submit(t0+1600*time.Millisecond, 1, c, wire.OpPut, key, "v2")
	sc.submit(t0+1800*time.Millisecond, 1, g, wire.OpGet, key, "")
	sc.s.Run(int64(20 * time.Second))
	if r := sc.reply(read); r.Err != nil {
		t.Fatalf("read through the new master: %v", r.Err)
	}
	if w := sc.reply(write); w.Err == nil {
		t.Fatalf("write while a cut-off replica may hold the old master's lease completed: %+v", w)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}
