package simtest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/sim"
)

// Generator draws seed's run: the world, the protocol and its settings,
// clocks, network and crash faults, the workload (swarm testing: each seed
// its own shape). It must be a pure function of seed.
type Generator func(tb testing.TB, seed uint64) scenario.Config

// Swarm is one seeded swarm test: Seeds runs of Config, seeds 1..Seeds
// (-first moves the range).
type Swarm struct {
	// Config draws each seed's run.
	Config Generator
	// Seeds is how many seeds CI runs (Seeds(CI, Short)); default 100.
	Seeds int
	// Short is the count under -short; default Seeds/10, at least 1.
	Short int
	// StoreFaults is the share of seeds whose stores fail (DrawStoreFaults);
	// default 1/3; negative: none. A run Config gives store faults keeps
	// them.
	StoreFaults float64
	// MaxStoreError bounds a faulty store's read and write error rates
	// (each drawn from [MaxStoreError/10, MaxStoreError]); default 0.01.
	MaxStoreError float64
	// Undecided is the share of runs the checker may leave undecided (its
	// search gave up); default 0.
	Undecided float64
	// MinOps is the fewest operations a run must check on average, so the
	// runs exercise something; default 20.
	MinOps int
}

func (sw *Swarm) ensureDefaults() {
	if sw.Seeds == 0 {
		sw.Seeds = 100
	}
	if sw.Short == 0 {
		sw.Short = max(1, sw.Seeds/10)
	}
	if sw.StoreFaults == 0 {
		sw.StoreFaults = 1.0 / 3
	}
	if sw.MaxStoreError == 0 {
		sw.MaxStoreError = 0.01
	}
	if sw.MinOps == 0 {
		sw.MinOps = 20
	}
}

// Summary is what a swarm ran.
type Summary struct {
	Seeds     int // runs
	Failed    int // runs with a violation, a broken invariant or a fail-stop that was not injected
	Undecided int // runs the checker could not decide
	Ops       int // operations checked
	// PublishedReads are the reads answered from published replies
	// (scenario.Config.PublishReads).
	PublishedReads uint64
	// FaultySeeds are the runs with faulty stores; FailStops the
	// fail-stops in them (every one an injected storage fault).
	FaultySeeds, FailStops int
	// Messages and Errors sum the runs' message counts by kind and client
	// errors by code.
	Messages map[string]int
	Errors   map[string]int
	Elapsed  time.Duration
}

// String is the summary line scripts/soak.sh collects.
func (s Summary) String() string {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Seeds) / s.Elapsed.Seconds()
	}
	return fmt.Sprintf("swarm: %d seeds in %.1fs (%.1f seeds/s): %d failed, %d undecided; %d operations; %d seeds with faulty stores, %d fail-stops",
		s.Seeds, s.Elapsed.Seconds(), rate, s.Failed, s.Undecided, s.Ops, s.FaultySeeds, s.FailStops)
}

// failure is one failing seed.
type failure struct {
	seed uint64
	why  string
}

// Run runs the swarm: seeds first..first+n-1 (-first, -seeds) in parallel
// over GOMAXPROCS workers (each run depends only on its seed), or only
// -seed. It fails t for every run whose history the checker rejects, whose
// invariant broke, that fail-stopped without an injected fault or that
// panicked — printing the first few seeds, sorted, each with the command
// that replays it — and if too few operations ran or too many runs were
// undecided. It checks that one seed (the lowest with faulty stores, else
// the last) replays to the same trace hash. It logs the summary and
// returns it for the caller's own exercise checks.
func (sw Swarm) Run(t testing.TB) Summary {
	t.Helper()
	sw.ensureDefaults()
	first, n := max(*firstFlag, 1), Seeds(sw.Seeds, sw.Short)
	if s := Seed(); s != 0 {
		first, n = s, 1
	}
	sum := Summary{Messages: map[string]int{}, Errors: map[string]int{}}
	var mu sync.Mutex
	var failures []failure
	var only *scenario.Result // the run, when there is one (a replay)
	var det *scenario.Result  // the run the determinism check repeats
	type job struct {
		seed uint64
		cfg  scenario.Config
		det  bool
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				res, err := runSafely(j.cfg)
				mu.Lock()
				if n == 1 {
					only = res
				}
				if j.det {
					det = res
				}
				if why := sum.add(j.cfg, res, err); why != "" {
					failures = append(failures, failure{j.seed, why})
				}
				mu.Unlock()
			}
		}()
	}
	// Draw in this goroutine: a generator may call tb.Fatal. The
	// determinism check repeats the first seed with faulty stores (else
	// the last seed) and compares it with the swarm's run of it.
	detSeed := uint64(0)
	for seed := first; seed < first+uint64(n); seed++ {
		c := sw.config(t, seed)
		isDet := detSeed == 0 && (c.StoreFaults != (sim.StoreFaults{}) || seed == first+uint64(n)-1)
		if isDet {
			detSeed = seed
		}
		jobs <- job{seed, c, isDet}
	}
	close(jobs)
	wg.Wait()
	sum.Elapsed = time.Since(start)
	slices.SortFunc(failures, func(a, b failure) int { return cmp.Compare(a.seed, b.seed) })
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more failing seeds", len(failures)-i)
			break
		}
		t.Errorf("seed %d: %s\nreplay: %s", f.seed, f.why, Replay(t, f.seed))
	}
	if only != nil && only.Check != nil {
		t.Logf("seed %d: %s %s over %d operations; trace %s; fail-stops %v", first, only.Check.Model, only.Check.Verdict, only.Check.Ops, only.TraceHash, only.FailStops)
	}
	// A few seeds (a replay) say nothing about what the swarm exercises.
	if n >= 5 && sum.Ops < n*sw.MinOps {
		t.Errorf("only %d operations over %d runs (want %d a run): the runs exercise too little", sum.Ops, n, sw.MinOps)
	}
	if n >= 5 && float64(sum.Undecided) > sw.Undecided*float64(n) {
		t.Errorf("%d of %d runs undecided by the checker (at most %.0f%% allowed)", sum.Undecided, n, 100*sw.Undecided)
	}
	if n > 1 && det != nil {
		sameRun(t, detSeed, det, run(t, sw.config(t, detSeed)))
	}
	t.Logf("%s %s", t.Name(), sum)
	return sum
}

// runSafely is scenario.Run with a panic (a protocol bug the simulator or
// the protocol caught) turned into an error, so the swarm reports its seed
// and goes on.
func runSafely(c scenario.Config) (res *scenario.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return scenario.Run(c)
}

// config is seed's run: Config's draw, with faulty stores for a share of
// seeds unless it set its own.
func (sw Swarm) config(tb testing.TB, seed uint64) scenario.Config {
	c := sw.Config(tb, seed)
	c.Seed = seed
	if c.StoreFaults == (sim.StoreFaults{}) && sw.StoreFaults > 0 {
		c.StoreFaults = DrawStoreFaults(seed, sw.StoreFaults, sw.MaxStoreError, c.Duration)
	}
	return c
}

// DrawStoreFaults draws whether seed's run has faulty stores (with
// probability share) and, if so, how faulty: read and write error rates
// each in [maxError/10, maxError], torn crashes, and a node that
// fail-stopped restarts after a quarter of the run (so it rejoins within
// it). The draw has its own random stream, so it changes nothing else a
// generator drew from seed.
func DrawStoreFaults(seed uint64, share, maxError float64, run time.Duration) sim.StoreFaults {
	r := rand.New(rand.NewPCG(seed, 0x737466)) // "stf"
	if r.Float64() >= share {
		return sim.StoreFaults{}
	}
	lo := maxError / 10
	return sim.StoreFaults{
		ReadError:    lo + r.Float64()*(maxError-lo),
		WriteError:   lo + r.Float64()*(maxError-lo),
		TornCrash:    true,
		RestartAfter: max(run/4, time.Millisecond),
	}
}

// add counts one run into s and says what is wrong with it ("" if
// nothing).
func (s *Summary) add(c scenario.Config, res *scenario.Result, err error) string {
	s.Seeds++
	if err != nil {
		s.Failed++
		return err.Error()
	}
	faulty := c.StoreFaults != (sim.StoreFaults{})
	if faulty {
		s.FaultySeeds++
		s.FailStops += len(res.FailStops)
	}
	for _, m := range res.Messages {
		s.Messages[m.Kind] += m.Count
	}
	s.PublishedReads += res.PublishedReads
	for k, v := range res.Errors {
		s.Errors[k] += v
	}
	why := Problem(res)
	if res.Check != nil {
		s.Ops += res.Check.Ops
		if res.Check.Verdict == "undecided" {
			s.Undecided++
		}
	}
	if why != "" {
		s.Failed++
	}
	return why
}

// Problem says what is wrong with a run — a history the checker rejects, a
// broken invariant (which scenario reports as a violation), a fail-stop
// that was not an injected storage fault — or "" if nothing is. An
// undecided check is not a problem here; Swarm bounds how many there are.
func Problem(res *scenario.Result) string {
	c := res.Check
	if c == nil {
		return "the history was not checked"
	}
	if c.Verdict != "pass" && c.Verdict != "undecided" {
		if c.Key != "" {
			return fmt.Sprintf("%s %s: key %q: %s", c.Model, c.Verdict, c.Key, c.Detail)
		}
		return fmt.Sprintf("%s %s: %s", c.Model, c.Verdict, c.Detail)
	}
	for _, f := range res.FailStops {
		if !f.Injected {
			return "fail-stop that is not an injected storage fault: " + f.What
		}
	}
	return ""
}
