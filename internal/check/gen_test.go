package check

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"
)

type genCfg struct {
	clients, perClient, keys int
	pRead, pDelete, pUnknown float64
	maxDur, maxGap           int64 // ns
}

// genLinearizable simulates an atomic register store: each operation takes
// effect at a random point inside its interval; Unknown writes take effect
// (or not) at a random point after their Call and end their client.
func genLinearizable(rng *rand.Rand, cfg genCfg) History {
	h := History{Init: map[string]string{}}
	for k := 0; k < cfg.keys; k += 3 {
		h.Init[fmt.Sprintf("k%d", k)] = fmt.Sprintf("init%d", k)
	}
	type eff struct {
		at int64
		op int
		on bool
	}
	var effs []eff
	nextClient := int64(cfg.clients)
	vals := 0
	for c := 0; c < cfg.clients; c++ {
		client := int64(c)
		t := rng.Int63n(cfg.maxGap + 1)
		for i := 0; i < cfg.perClient; i++ {
			call := t + 1 + rng.Int63n(cfg.maxGap+1)
			ret := call + rng.Int63n(cfg.maxDur+1)
			o := Op{Client: client, Key: fmt.Sprintf("k%d", rng.Intn(cfg.keys)), Call: call, Return: ret, Outcome: OK}
			at := call + rng.Int63n(ret-call+1)
			on := true
			switch {
			case rng.Float64() < cfg.pRead:
				o.Kind = Read
			case rng.Float64() < cfg.pDelete:
				o.Kind = Write
			default:
				o.Kind = Write
				o.Found = true
				vals++
				o.Value = fmt.Sprintf("v%d", vals)
			}
			if o.Kind == Write && rng.Float64() < cfg.pUnknown {
				o.Outcome, o.Return = Unknown, Never
				at = call + rng.Int63n(4*cfg.maxDur+1)
				on = rng.Intn(2) == 0
				nextClient++
				client = nextClient
			}
			if o.Kind == Write && rng.Float64() < cfg.pUnknown/2 {
				o.Outcome = Failed
				on = false
			}
			h.Ops = append(h.Ops, o)
			effs = append(effs, eff{at, len(h.Ops) - 1, on})
			if o.Outcome != Unknown {
				t = ret
			} else {
				t = call
			}
		}
	}
	sort.SliceStable(effs, func(i, j int) bool { return effs[i].at < effs[j].at })
	state := map[string]string{}
	for k, v := range h.Init {
		state[k] = v
	}
	for _, e := range effs {
		o := &h.Ops[e.op]
		if o.Kind == Read {
			o.Value, o.Found = state[o.Key]
		} else if e.on {
			if o.Found {
				state[o.Key] = o.Value
			} else {
				delete(state, o.Key)
			}
		}
	}
	rng.Shuffle(len(h.Ops), func(i, j int) { h.Ops[i], h.Ops[j] = h.Ops[j], h.Ops[i] })
	return h
}

// genSequential runs the clients' programs in a random interleaving (ignoring
// time), then gives each client its own, unrelated clock: sequentially
// consistent, usually not linearizable.
func genSequential(rng *rand.Rand, cfg genCfg) History {
	h := History{Init: map[string]string{"k0": "init0"}}
	state := map[string]string{"k0": "init0"}
	left := make([]int, cfg.clients)
	clock := make([]int64, cfg.clients)
	for c := range left {
		left[c] = cfg.perClient
	}
	vals := 0
	for remaining := cfg.clients * cfg.perClient; remaining > 0; remaining-- {
		c := rng.Intn(cfg.clients)
		for left[c] == 0 {
			c = (c + 1) % cfg.clients
		}
		left[c]--
		call := clock[c] + 1 + rng.Int63n(cfg.maxGap+1)
		clock[c] = call + rng.Int63n(cfg.maxDur+1)
		o := Op{Client: int64(c), Key: fmt.Sprintf("k%d", rng.Intn(cfg.keys)), Call: call, Return: clock[c], Outcome: OK}
		switch {
		case rng.Float64() < cfg.pRead:
			o.Kind = Read
			o.Value, o.Found = state[o.Key]
		case rng.Float64() < cfg.pDelete:
			o.Kind = Write
			delete(state, o.Key)
		default:
			o.Kind = Write
			o.Found = true
			vals++
			o.Value = fmt.Sprintf("v%d", vals)
			state[o.Key] = o.Value
		}
		h.Ops = append(h.Ops, o)
	}
	return h
}

var smallCfg = genCfg{clients: 4, perClient: 12, keys: 3, pRead: 0.5, pDelete: 0.15, pUnknown: 0.05, maxDur: 30, maxGap: 10}

func TestRandomLinearizable(t *testing.T) {
	cfgs := []genCfg{
		smallCfg,
		{clients: 8, perClient: 30, keys: 5, pRead: 0.6, pDelete: 0.1, pUnknown: 0.03, maxDur: 50, maxGap: 20},
		{clients: 20, perClient: 50, keys: 100, pRead: 0.5, pDelete: 0.1, pUnknown: 0.02, maxDur: 5e6, maxGap: 1e6},
	}
	for ci, cfg := range cfgs {
		for seed := int64(0); seed < 60; seed++ {
			h := genLinearizable(rand.New(rand.NewSource(seed)), cfg)
			for _, r := range []Result{Linearizable(h, 20*time.Second), Sequential(h, 1e6), Regular(h), ValidReads(h)} {
				if r.Verdict != Pass {
					t.Fatalf("cfg %d seed %d: %v", ci, seed, r)
				}
			}
		}
	}
}

func TestRandomSequential(t *testing.T) {
	cfgs := []genCfg{
		{clients: 3, perClient: 10, keys: 2, pRead: 0.5, pDelete: 0.2, maxDur: 10, maxGap: 10},
		{clients: 6, perClient: 30, keys: 4, pRead: 0.6, pDelete: 0.1, maxDur: 10, maxGap: 10},
		{clients: 10, perClient: 30, keys: 10, pRead: 0.6, pDelete: 0.1, maxDur: 10, maxGap: 10},
	}
	for ci, cfg := range cfgs {
		for seed := int64(0); seed < 60; seed++ {
			h := genSequential(rand.New(rand.NewSource(seed)), cfg)
			if r := Sequential(h, 1e6); r.Verdict != Pass {
				t.Fatalf("cfg %d seed %d: %v", ci, seed, r)
			}
		}
	}
	// Larger ones may exhaust the budget, but must never be rejected.
	big := genCfg{clients: 20, perClient: 50, keys: 50, pRead: 0.6, pDelete: 0.1, maxDur: 10, maxGap: 10}
	undecided := 0
	for seed := int64(0); seed < 10; seed++ {
		h := genSequential(rand.New(rand.NewSource(seed)), big)
		switch r := Sequential(h, 2e4); r.Verdict {
		case Violation:
			t.Fatalf("big seed %d: %v", seed, r)
		case Undecided:
			undecided++
		}
	}
	t.Logf("big non-linearizable SC histories: %d/10 undecided at budget 2e4", undecided)
}

// Mutations of generated SC histories that break SC must never pass, and
// the search must prove violations exhaustively on small ones.
func TestRandomSequentialMutations(t *testing.T) {
	cfg := genCfg{clients: 3, perClient: 8, keys: 2, pRead: 0.5, pDelete: 0.2, maxDur: 10, maxGap: 10}
	var viol, pass int
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		h := genSequential(rng, cfg)
		var reads []int
		var vals []string
		for i, o := range h.Ops {
			if o.Kind == Read {
				reads = append(reads, i)
			} else if o.Found {
				vals = append(vals, o.Value)
			}
		}
		if len(reads) == 0 || len(vals) == 0 {
			continue
		}
		m := mutate(h, reads[rng.Intn(len(reads))], vals[rng.Intn(len(vals))], true)
		got := Sequential(m, 1e6)
		want := bruteSC(m)
		if got.Verdict == Undecided || (got.Verdict == Pass) != want {
			t.Fatalf("seed %d: got %v, brute force says SC=%v", seed, got, want)
		}
		if want {
			pass++
		} else {
			viol++
		}
	}
	t.Logf("mutated SC histories: %d still SC, %d not", pass, viol)
}

// bruteSC decides SC by trying every interleaving (tiny histories only);
// Unknown writes are not generated here.
func bruteSC(h History) bool {
	chains := map[int64][]Op{}
	var ids []int64
	for _, o := range effective(h, false) {
		if _, ok := chains[o.Client]; !ok {
			ids = append(ids, o.Client)
		}
		chains[o.Client] = append(chains[o.Client], o)
	}
	for _, id := range ids {
		ch := chains[id]
		sort.SliceStable(ch, func(i, j int) bool { return ch[i].Call < ch[j].Call })
	}
	pos := make([]int, len(ids))
	state := map[string]string{}
	for k, v := range h.Init {
		state[k] = v
	}
	seen := map[string]bool{}
	var rec func() bool
	rec = func() bool {
		key := fmt.Sprint(pos, state)
		if seen[key] {
			return false
		}
		seen[key] = true
		done := true
		for c, id := range ids {
			if pos[c] == len(chains[id]) {
				continue
			}
			done = false
			o := chains[id][pos[c]]
			old, had := state[o.Key]
			if o.Kind == Read {
				if !sameValue(o.Found, o.Value, had, old) {
					continue
				}
			} else if o.Found {
				state[o.Key] = o.Value
			} else {
				delete(state, o.Key)
			}
			pos[c]++
			if rec() {
				return true
			}
			pos[c]--
			if had {
				state[o.Key] = old
			} else {
				delete(state, o.Key)
			}
		}
		return done
	}
	return rec()
}

// mutations of generated linearizable histories
func TestRandomMutations(t *testing.T) {
	var stale, sc, thin int
	for seed := int64(0); seed < 400; seed++ {
		rng := rand.New(rand.NewSource(seed))
		h := genLinearizable(rng, smallCfg)
		ops := effective(h, false)
		idx := make([]int, 0)
		for i, o := range h.Ops {
			if o.Kind == Read && o.Outcome == OK {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		// (a) stale: a read returns the value of an OK write overwritten (by
		// another OK write) before the read began.
		for _, ri := range idx {
			r := h.Ops[ri]
			var pick *Op
			for _, w := range ops {
				if w.Kind != Write || w.Outcome != OK || w.Key != r.Key || !w.Found || (r.Found && w.Value == r.Value) {
					continue
				}
				for _, w2 := range ops {
					if w2.Kind == Write && w2.Outcome == OK && w2.Key == r.Key && w.Return < w2.Call && w2.Return < r.Call {
						w := w
						pick = &w
						break
					}
				}
				if pick != nil {
					break
				}
			}
			if pick == nil {
				continue
			}
			m := mutate(h, ri, pick.Value, true)
			expect(t, seed, "stale", m, map[string]Verdict{"linearizable": Violation, "regular": Violation, "valid-reads": Pass})
			stale++
			break
		}
		// (b) SC: a client writes w1 then w2 to a key, then reads w1.
		func() {
			for _, ri := range idx {
				r := h.Ops[ri]
				var w1 *Op
				for _, w := range ops {
					if w.Client == r.Client && w.Key == r.Key && w.Kind == Write && w.Found && w.Return < r.Call && w.Outcome == OK {
						for _, w2 := range ops {
							if w2.Client == r.Client && w2.Key == r.Key && w2.Kind == Write && w2.Outcome == OK &&
								w.Return < w2.Call && w2.Return < r.Call {
								w := w
								w1 = &w
							}
						}
					}
				}
				if w1 == nil {
					continue
				}
				m := mutate(h, ri, w1.Value, true)
				expect(t, seed, "sc", m, map[string]Verdict{"linearizable": Violation, "sequential": Violation, "regular": Violation, "valid-reads": Pass})
				sc++
				return
			}
		}()
		// (c) out of thin air.
		m := mutate(h, idx[rng.Intn(len(idx))], "bogus", true)
		expect(t, seed, "thin-air", m, map[string]Verdict{"linearizable": Violation, "sequential": Violation, "regular": Violation, "valid-reads": Violation})
		thin++
	}
	t.Logf("mutations: stale %d, sc %d, thin-air %d", stale, sc, thin)
	if stale < 50 || sc < 20 {
		t.Errorf("too few mutations exercised: stale %d, sc %d", stale, sc)
	}
}

func mutate(h History, i int, v string, found bool) History {
	m := History{Init: h.Init, Ops: append([]Op(nil), h.Ops...)}
	m.Ops[i].Value, m.Ops[i].Found = v, found
	return m
}

func expect(t *testing.T, seed int64, what string, h History, want map[string]Verdict) {
	t.Helper()
	for model, v := range want {
		r, err := Check(model, h, WithTimeout(20*time.Second), WithBudget(1e6))
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != v {
			t.Errorf("seed %d, %s mutation: %v (want %v)", seed, what, r, v)
		}
	}
}

// Determinism: the same history in any op order gives the same result.
func TestDeterministic(t *testing.T) {
	for seed := int64(0); seed < 30; seed++ {
		h := genLinearizable(rand.New(rand.NewSource(seed)), smallCfg)
		for i, o := range h.Ops {
			if o.Kind == Read && o.Outcome == OK {
				h.Ops[i].Value, h.Ops[i].Found = "bogus", true
				break
			}
		}
		var first []string
		for rep := 0; rep < 3; rep++ {
			var got []string
			for _, m := range Models {
				r, _ := Check(m, h)
				got = append(got, r.String())
			}
			if rep == 0 {
				first = got
			} else {
				for i := range got {
					if got[i] != first[i] {
						t.Fatalf("seed %d: nondeterministic: %q vs %q", seed, got[i], first[i])
					}
				}
			}
		}
	}
}

var benchCfg = genCfg{clients: 50, perClient: 100, keys: 500, pRead: 0.5, pDelete: 0.05, pUnknown: 0.01, maxDur: 5e6, maxGap: 2e6}

func BenchmarkSequential(b *testing.B) {
	h := genLinearizable(rand.New(rand.NewSource(1)), benchCfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Sequential(h, DefaultBudget); r.Verdict != Pass {
			b.Fatal(r)
		}
	}
}

func BenchmarkLinearizable(b *testing.B) {
	h := genLinearizable(rand.New(rand.NewSource(1)), benchCfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Linearizable(h, time.Minute); r.Verdict != Pass {
			b.Fatal(r)
		}
	}
}

func BenchmarkRegular(b *testing.B) {
	h := genLinearizable(rand.New(rand.NewSource(1)), benchCfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Regular(h); r.Verdict != Pass {
			b.Fatal(r)
		}
	}
}
