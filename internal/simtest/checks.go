package simtest

import (
	"testing"

	"github.com/lightcone/lightcone/internal/scenario"
)

// run runs c, failing tb if it cannot (or panics).
func run(tb testing.TB, c scenario.Config) *scenario.Result {
	tb.Helper()
	res, err := runSafely(c)
	if err != nil {
		tb.Fatalf("seed %d: %v\nreplay: %s", c.Seed, err, Replay(tb, c.Seed))
	}
	return res
}

// Deterministic runs c twice and fails tb unless both runs took the same
// steps (equal trace hashes, event counts and checked operations): the
// simulation must be a function of its seed, or no failure can be replayed.
// It returns the first run's result.
func Deterministic(tb testing.TB, c scenario.Config) *scenario.Result {
	tb.Helper()
	a := run(tb, c)
	sameRun(tb, c.Seed, a, run(tb, c))
	return a
}

// sameRun fails tb unless two runs of seed took the same steps.
func sameRun(tb testing.TB, seed uint64, a, b *scenario.Result) {
	tb.Helper()
	if a.TraceHash != b.TraceHash || a.Events != b.Events || a.Ops != b.Ops {
		tb.Fatalf("seed %d twice: trace %s (%d events, %d operations), then %s (%d events, %d operations): the run is not a function of its seed\nreplay: %s",
			seed, a.TraceHash, a.Events, a.Ops, b.TraceHash, b.Events, b.Ops, Replay(tb, seed))
	}
}

// Regressions replays seeds that once found bugs, with gen's draw as it is
// (no faulty stores added), and fails t for each whose run has a Problem.
// Every seed that ever found a bug belongs in a protocol's list, forever.
// -seed replays one of them.
func Regressions(t testing.TB, gen Generator, seeds ...uint64) {
	t.Helper()
	if s := Seed(); s != 0 {
		seeds = []uint64{s}
	}
	for _, seed := range seeds {
		c := gen(t, seed)
		c.Seed = seed
		if p := Problem(run(t, c)); p != "" {
			t.Errorf("regression seed %d: %s\nreplay: %s", seed, p, Replay(t, seed))
		}
	}
}

// Teeth is a test that a checker catches what it must: Unsafe draws runs
// with one safety rule switched off (or an assumption broken), and at
// least one of Seeds of them must be rejected.
type Teeth struct {
	// Unsafe draws a seed's run with the rule off.
	Unsafe Generator
	// Safe, if set, draws the same runs with the rule kept: every seed up
	// to the first rejected one (and at least SafeSeeds) must then pass, so
	// it is the rule, not the setup, that the checker catches.
	Safe Generator
	// Seeds is how many seeds Unsafe may take; default 100.
	Seeds int
	// SafeSeeds is the fewest seeds Safe runs; default 20.
	SafeSeeds int
}

// Run finds the first seed whose Unsafe run the checker rejects (a
// violation or a broken invariant) and returns it with its result; it
// fails t if none is rejected, or if a Safe run has a Problem. -seed
// tries only that seed.
func (th Teeth) Run(t testing.TB) (uint64, *scenario.Result) {
	t.Helper()
	if th.Seeds == 0 {
		th.Seeds = 100
	}
	if th.SafeSeeds == 0 {
		th.SafeSeeds = 20
	}
	first, last := uint64(1), uint64(th.Seeds)
	if s := Seed(); s != 0 {
		first, last = s, s
	}
	for seed := first; seed <= last; seed++ {
		c := th.Unsafe(t, seed)
		c.Seed = seed
		res := run(t, c)
		if res.Check == nil || res.Check.Verdict != "violation" {
			continue
		}
		t.Logf("rejected: seed %d: %s", seed, Problem(res))
		if th.Safe != nil {
			for s := uint64(1); s <= max(seed, uint64(th.SafeSeeds)); s++ {
				c := th.Safe(t, s)
				c.Seed = s
				if p := Problem(run(t, c)); p != "" {
					t.Fatalf("seed %d with the rule kept: %s\nreplay: %s", s, p, Replay(t, s))
				}
			}
		}
		return seed, res
	}
	t.Fatalf("seeds %d..%d with the rule off all passed: the checker has no teeth\nreplay: %s", first, last, Replay(t, 0))
	return 0, nil
}
