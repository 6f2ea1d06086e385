package nemesis

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9/logging"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/topo"
)

var (
	flagDuration = flag.Duration("nemesis.duration", 10*time.Second, "how long clients run under faults")
	flagSeed     = flag.Uint64("nemesis.seed", 0, "the run's seed (0: from the time)")
	flagFaults   = flag.String("nemesis.faults", "default", "fault kinds, comma-separated (all, default, or: "+kindList(AllKinds)+")")
	flagKeep     = flag.Bool("nemesis.keep", false, "keep the cluster's data and logs")
)

// TestNemesis is the CI-sized nemesis run: three real processes in three
// WAN-emulated regions serve a QUORUM/QUORUM quorum keyspace, a lease
// keyspace and a meteor keyspace (setups.yaml) to go-redis clients while
// the nemesis kills -9, isolates, cuts links, pauses past the leases,
// steps wall clocks within the claimed bound and migrates masters. Every
// history must pass its protocol's checker, every kind must have been
// injected, and every node must serve every keyspace again after healing.
// Longer: -nemesis.duration=5m (or `lightcone nemesis`).
func TestNemesis(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process nemesis run; skipped in -short")
	}
	logging.Disable() // go-redis logs every failed dial; a killed node makes many
	kinds, err := ParseKinds(*flagFaults)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := localcluster.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Kinds: kinds, Seed: *flagSeed, Duration: *flagDuration, Keep: *flagKeep,
		Interval: 500 * time.Millisecond, Hold: time.Second, Pause: 2500 * time.Millisecond, Calm: 2 * time.Second,
		Log: testWriter{t}}
	if err := o.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), o)
	for _, l := range rep.Lines() {
		t.Log(l)
	}
	again := fmt.Sprintf("go test ./internal/nemesis -run 'TestNemesis$' -v -nemesis.seed=%d -nemesis.duration=%s -nemesis.faults=%s",
		rep.Seed, o.Duration, kindList(o.Kinds))
	if err != nil {
		t.Fatalf("run: %v\nseed %d; again: %s", err, rep.Seed, again)
	}
	for _, k := range o.Kinds {
		if rep.Faults[k] == 0 {
			t.Errorf("no %s fault was injected (faults: %s)", k, rep.FaultSummary())
		}
	}
	for _, k := range rep.Keyspaces {
		if k.Reads < 30 || k.Writes < 20 {
			t.Errorf("keyspace %s: only %d reads and %d writes completed: too few to check", k.Name, k.Reads, k.Writes)
		}
		if k.Result.Verdict != check.Pass {
			t.Errorf("keyspace %s (%s): %s", k.Name, k.Policy, k.Result)
		}
	}
	if len(rep.Crashes) > 0 {
		t.Errorf("nodes exited by themselves: %s", strings.Join(rep.Crashes, ", "))
	}
	if len(rep.Unrecovered) > 0 {
		t.Errorf("not serving %s after healing (within %s)", strings.Join(rep.Unrecovered, ", "), o.RecoverWithin)
	}
	if t.Failed() {
		t.Logf("seed %d; again: %s (data and logs: %s)", rep.Seed, again, rep.Dir)
	}
}

// TestCheckerSeesALostWrite: the nemesis's checking has teeth. A history
// as its clients record it, in which a read misses an acknowledged write
// that completed before it began, is rejected under the quorum setup's
// model; the same history with that write's outcome unknown passes.
func TestCheckerSeesALostWrite(t *testing.T) {
	k := setupKeyspace(t, 0)
	if k.ks.Model() != "linearizable" {
		t.Fatalf("the first setup's model is %q; want linearizable (QUORUM/QUORUM)", k.ks.Model())
	}
	ms := int64(time.Millisecond)
	k.hist.add(check.Op{Client: 1, Key: "k0", Kind: check.Write, Value: "s1-1", Found: true, Call: 0, Return: 10 * ms, Outcome: writeOutcome(nil)})
	k.hist.add(check.Op{Client: 2, Key: "k0", Kind: check.Read, Call: 20 * ms, Return: 30 * ms, Outcome: check.OK})
	if r := k.check(0); r.Violations() != 1 {
		t.Fatalf("a read of absent after an acknowledged write: %s; want a violation", r.Result)
	}
	k.hist.ops[0].Outcome = writeOutcome(fmt.Errorf("TIMEOUT outcome unknown: node: stopped"))
	if r := k.check(0); r.Result.Verdict != check.Pass {
		t.Fatalf("the same with the write's outcome unknown: %s; want pass", r.Result)
	}
}

// TestWriteOutcomes: UNAVAILABLE and a failed dial mean not written;
// everything else that is not a reply is unknown.
func TestWriteOutcomes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want check.Outcome
	}{
		{nil, check.OK},
		{fmt.Errorf("UNAVAILABLE lease: key frozen for migration"), check.Failed},
		{fmt.Errorf("TIMEOUT outcome unknown: quorum: 1 of 2 acks"), check.Unknown},
		{fmt.Errorf("ERR something else"), check.Unknown},
		{context.DeadlineExceeded, check.Unknown},
		{dialErr(t), check.Failed},
	} {
		if got := writeOutcome(c.err); got != c.want {
			t.Errorf("writeOutcome(%v) = %v; want %v", c.err, got, c.want)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// setupKeyspace is the i-th default setup on the default world.
func setupKeyspace(t *testing.T, i int) *keyspace {
	t.Helper()
	var o Options
	if err := o.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	kss, _, err := buildKeyspaces(topo.NewTopology(o.World), o.Keyspaces[i:i+1])
	if err != nil {
		t.Fatal(err)
	}
	return kss[0]
}

// dialErr is the error of a dial to a port nothing listens on.
func dialErr(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Skip("a closed port accepted a connection")
	}
	return err
}

// TestSelectAndParse: setups are chosen by name in file order, an unknown
// name lists the valid ones; fault lists expand default and all.
func TestSelectAndParse(t *testing.T) {
	got, err := Select(nil, []string{"ms", "qq"})
	if err != nil || len(got) != 2 || got[0].Name != "qq" || got[1].Name != "ms" {
		t.Fatalf("Select(ms, qq) = %v, %v; want [qq ms]", got, err)
	}
	if _, err := Select(nil, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "qq, glob, ms") {
		t.Fatalf("Select(nope) error = %v; want one listing qq, glob, ms", err)
	}
	kinds, err := ParseKinds("kill,default")
	if err != nil || len(kinds) != len(DefaultKinds())+1 || kinds[0] != KindKill {
		t.Fatalf("ParseKinds(default,disk) = %v, %v", kinds, err)
	}
	if _, err := ParseKinds("kill,frobnicate"); err == nil {
		t.Fatal("ParseKinds(kill,frobnicate): no error")
	}
	_, err = ParseSetups("s.yaml", []byte("- {name: a, protocol: quorum}\n- {name: b, protocol: lease, lease_lenght: 1s}\n"))
	if want := `nemesis: s.yaml:2: setups[1]: protocol lease has no setting "lease_lenght"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ParseSetups with a misspelt setting = %v; want %s...", err, want)
	}
}

// TestPositions: a version string is a position; a write whose reply never
// came is placed at the version a read returned its value with.
func TestPositions(t *testing.T) {
	if p := versionPos("1700000000000000123.4@n2"); p != (check.Position{Set: true, T: 1700000000000000123, Sub: 4, Node: 2}) {
		t.Errorf("versionPos = %+v", p)
	}
	if p := versionPos("0.0@n0"); p.Set {
		t.Errorf("versionPos(0.0@n0) = %+v; want unset (no version)", p)
	}
	var h history
	h.add(check.Op{Client: 1, Key: "k", Kind: check.Write, Value: "s1-1", Found: true, Outcome: check.Unknown})
	h.observe("s1-1", versionPos("5.0@n1"))
	if p := h.snapshot().Ops[0].Pos; p.T != 5 || !p.Set {
		t.Errorf("unknown write's position = %+v; want the observed version's", p)
	}
}
