package store

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestFaultyInjectsAtItsRates: over many calls the failures come at about
// the configured rates, each wrapping ErrInjected; a failed Put has taken
// effect about half the time; and the same seed fails the same calls.
func TestFaultyInjectsAtItsRates(t *testing.T) {
	run := func(seed uint64) (fails []int, landed int) {
		m := NewMem()
		f := NewFaulty(m, rand.New(rand.NewPCG(seed, 1)), 0.1, 0.2)
		for i := range 20_000 {
			k := string(rune('a' + i%26))
			if err := f.Put(k, Record{Value: []byte{byte(i)}}); err != nil {
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("Put error %v does not wrap ErrInjected", err)
				}
				fails = append(fails, i)
				if r, _, _ := m.Get(k); len(r.Value) == 1 && r.Value[0] == byte(i) {
					landed++
				}
			}
			if _, _, err := f.Get(k); err != nil {
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("Get error %v does not wrap ErrInjected", err)
				}
				fails = append(fails, -i)
			}
		}
		if f.Writes+f.Reads != len(fails) {
			t.Fatalf("counted %d+%d failures; saw %d", f.Writes, f.Reads, len(fails))
		}
		if f.Reads < 1800 || f.Reads > 2200 || f.Writes < 3700 || f.Writes > 4300 {
			t.Fatalf("%d read and %d write failures in 20000 calls each; want about 2000 and 4000", f.Reads, f.Writes)
		}
		return fails, landed
	}
	a, landed := run(7)
	if w := len(a) - countNeg(a); landed < w*4/10 || landed > w*6/10 {
		t.Fatalf("%d of %d failed Puts took effect; want about half", landed, w)
	}
	b, _ := run(7)
	if len(a) != len(b) {
		t.Fatalf("seed 7 failed %d calls, then %d: not deterministic", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7: failure %d at call %d, then %d: not deterministic", i, a[i], b[i])
		}
	}
}

func countNeg(xs []int) (n int) {
	for _, x := range xs {
		if x <= 0 {
			n++
		}
	}
	return n
}

// TestFaultyZeroRatesPassThrough: with both rates zero nothing fails.
func TestFaultyZeroRatesPassThrough(t *testing.T) {
	f := NewFaulty(NewMem(), rand.New(rand.NewPCG(1, 1)), 0, 0)
	for range 1000 {
		if err := f.Put("k", Record{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		if r, ok, err := f.Get("k"); err != nil || !ok || string(r.Value) != "v" {
			t.Fatalf("Get = %q, %v, %v; want \"v\", true, nil", r.Value, ok, err)
		}
	}
}

// TestCrashTornKeepsAPrefix: a torn crash keeps the synced state plus a
// prefix of the unsynced writes in the order they were made — never a
// later write without every earlier one — and over many draws keeps none,
// some and all of them.
func TestCrashTornKeepsAPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	seen := map[int]bool{}
	for range 200 {
		m := NewMem()
		if err := m.Put("base", Record{Value: []byte("synced")}); err != nil {
			t.Fatal(err)
		}
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		// Unsynced, in order: a=1, b=1, a=2, c=1.
		writes := []struct{ k, v string }{{"a", "1"}, {"b", "1"}, {"a", "2"}, {"c", "1"}}
		for _, w := range writes {
			if err := m.Put(w.k, Record{Value: []byte(w.v)}); err != nil {
				t.Fatal(err)
			}
		}
		m.CrashTorn(r)
		if m.Unsynced() != 0 {
			t.Fatalf("Unsynced() = %d after a crash; want 0", m.Unsynced())
		}
		got := func(k string) string {
			rec, ok, _ := m.Get(k)
			if !ok {
				return "-"
			}
			return string(rec.Value)
		}
		if got("base") != "synced" {
			t.Fatalf("a torn crash lost a synced write: base = %q", got("base"))
		}
		// Which prefix length explains the state?
		n := -1
		for l := 0; l <= len(writes); l++ {
			want := map[string]string{"a": "-", "b": "-", "c": "-"}
			for _, w := range writes[:l] {
				want[w.k] = w.v
			}
			if got("a") == want["a"] && got("b") == want["b"] && got("c") == want["c"] {
				n = l
			}
		}
		if n < 0 {
			t.Fatalf("state a=%s b=%s c=%s is no prefix of the writes", got("a"), got("b"), got("c"))
		}
		seen[n] = true
	}
	for l := 0; l <= 4; l++ {
		if !seen[l] {
			t.Errorf("no torn crash kept exactly %d of 4 writes in 200 draws", l)
		}
	}
}
