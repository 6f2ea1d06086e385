package check

import (
	"strings"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// Builders: times in ms.
func wr(c int64, k, v string, call, ret int64) Op {
	return Op{Client: c, Key: k, Kind: Write, Value: v, Found: true, Call: call * ms, Return: ret * ms, Outcome: OK}
}
func del(c int64, k string, call, ret int64) Op {
	return Op{Client: c, Key: k, Kind: Write, Call: call * ms, Return: ret * ms, Outcome: OK}
}
func rd(c int64, k, v string, call, ret int64) Op {
	return Op{Client: c, Key: k, Kind: Read, Value: v, Found: true, Call: call * ms, Return: ret * ms, Outcome: OK}
}
func rdAbsent(c int64, k string, call, ret int64) Op {
	return Op{Client: c, Key: k, Kind: Read, Call: call * ms, Return: ret * ms, Outcome: OK}
}
func unknown(o Op) Op { o.Outcome, o.Return = Unknown, Never; return o }
func failed(o Op) Op  { o.Outcome = Failed; return o }

const (
	P = Pass
	V = Violation
)

type verdicts struct{ lin, seq, reg, valid Verdict }

var cases = []struct {
	name string
	init map[string]string
	ops  []Op
	want verdicts
}{
	{
		name: "empty",
		want: verdicts{P, P, P, P},
	},
	{
		name: "simple sequential",
		ops: []Op{
			rdAbsent(1, "x", 0, 1), wr(1, "x", "a", 2, 3), rd(2, "x", "a", 4, 5),
			del(2, "x", 6, 7), rdAbsent(1, "x", 8, 9),
		},
		want: verdicts{P, P, P, P},
	},
	{
		name: "initial value",
		init: map[string]string{"x": "i"},
		ops:  []Op{rd(1, "x", "i", 0, 1), wr(2, "x", "a", 2, 3), rd(1, "x", "a", 4, 5)},
		want: verdicts{P, P, P, P},
	},
	{
		name: "stale read (initial) after a completed write",
		ops:  []Op{wr(1, "x", "a", 0, 10), rdAbsent(2, "x", 20, 30)},
		want: verdicts{V, P, V, P},
	},
	{
		name: "stale read of an overwritten value",
		ops:  []Op{wr(1, "x", "a", 0, 10), wr(1, "x", "b", 20, 30), rd(2, "x", "a", 40, 50)},
		want: verdicts{V, P, V, P},
	},
	{
		name: "regular: value overwritten before the read began, by another client",
		ops:  []Op{wr(1, "x", "a", 0, 10), wr(2, "x", "b", 20, 30), rd(3, "x", "a", 40, 50)},
		want: verdicts{V, P, V, P},
	},
	{
		name: "regular: overwrite concurrent with the read is fine",
		ops:  []Op{wr(1, "x", "a", 0, 10), wr(2, "x", "b", 20, 60), rd(3, "x", "a", 30, 40)},
		want: verdicts{P, P, P, P},
	},
	{
		name: "new-old inversion between two readers",
		ops: []Op{
			wr(1, "x", "a", 0, 10), wr(1, "x", "b", 20, 100),
			rd(2, "x", "b", 30, 40), rd(3, "x", "a", 50, 60),
		},
		want: verdicts{V, P, P, P},
	},
	{
		name: "client reads its own write then an older value",
		ops: []Op{
			wr(1, "x", "a", 0, 10),
			rd(2, "x", "a", 12, 14), wr(2, "x", "b", 20, 30), rd(2, "x", "b", 40, 50), rd(2, "x", "a", 60, 70),
		},
		want: verdicts{V, V, V, P},
	},
	{
		name: "client writes twice then reads the first",
		ops:  []Op{wr(1, "x", "a", 0, 10), wr(1, "x", "b", 20, 30), rd(1, "x", "a", 40, 50)},
		want: verdicts{V, V, V, P},
	},
	{
		name: "store buffering (Dekker) across two keys",
		ops: []Op{
			wr(1, "x", "x1", 0, 10), rdAbsent(1, "y", 20, 30),
			wr(2, "y", "y1", 0, 10), rdAbsent(2, "x", 20, 30),
		},
		want: verdicts{V, V, V, P},
	},
	{
		name: "read of a never-written value",
		ops:  []Op{wr(1, "x", "a", 0, 10), rd(2, "x", "zzz", 20, 30)},
		want: verdicts{V, V, V, V},
	},
	{
		name: "read of a never-written value (absent, initialized key)",
		init: map[string]string{"x": "i"},
		ops:  []Op{rdAbsent(2, "x", 20, 30)},
		want: verdicts{V, V, V, V},
	},
	{
		name: "read of a failed write's value",
		ops:  []Op{failed(wr(1, "x", "a", 0, 10)), rd(2, "x", "a", 20, 30)},
		want: verdicts{V, V, V, V},
	},
	{
		name: "read from the future",
		ops:  []Op{rd(2, "x", "a", 0, 10), wr(1, "x", "a", 20, 30)},
		want: verdicts{V, P, V, V},
	},
	{
		name: "failed write ignored",
		ops:  []Op{failed(wr(1, "x", "a", 0, 10)), rdAbsent(2, "x", 20, 30)},
		want: verdicts{P, P, P, P},
	},
	{
		name: "unknown write observed later",
		ops: []Op{
			wr(1, "x", "b", 0, 10), unknown(wr(1, "x", "a", 20, 0)),
			wr(3, "x", "c", 21, 22),
			rd(2, "x", "c", 25, 30), rd(2, "x", "a", 40, 50), rd(2, "x", "a", 60, 70),
		},
		want: verdicts{P, P, P, P},
	},
	{
		name: "unknown write never observed",
		ops:  []Op{unknown(wr(1, "x", "a", 0, 0)), rdAbsent(2, "x", 50, 60), rdAbsent(3, "x", 70, 80)},
		want: verdicts{P, P, P, P},
	},
	{
		name: "unknown delete needed by an absent read",
		init: map[string]string{"x": "i"},
		ops:  []Op{unknown(del(1, "x", 0, 0)), unknown(del(3, "x", 0, 0)), rd(2, "x", "i", 10, 20), rdAbsent(2, "x", 50, 60)},
		want: verdicts{P, P, P, P},
	},
	{
		name: "unknown write cannot be read before its call",
		ops:  []Op{rd(2, "x", "a", 0, 5), unknown(wr(1, "x", "a", 10, 0))},
		want: verdicts{V, P, V, V},
	},
	{
		name: "IRIW, sequential in real time",
		ops: []Op{
			wr(1, "x", "x1", 0, 10), wr(2, "y", "y1", 0, 10),
			rd(3, "x", "x1", 20, 30), rdAbsent(3, "y", 40, 50),
			rd(4, "y", "y1", 20, 30), rdAbsent(4, "x", 40, 50),
		},
		want: verdicts{V, V, V, P},
	},
	{
		name: "IRIW, concurrent (regular but not sequential)",
		ops: []Op{
			wr(1, "x", "x1", 0, 100), wr(2, "y", "y1", 0, 100),
			rd(3, "x", "x1", 10, 20), rdAbsent(3, "y", 30, 40),
			rd(4, "y", "y1", 10, 20), rdAbsent(4, "x", 30, 40),
		},
		want: verdicts{V, V, P, P},
	},
	{
		name: "deleted then resurrected (sequential via init)",
		ops: []Op{
			wr(1, "x", "a", 0, 10), del(1, "x", 20, 30),
			rdAbsent(2, "x", 40, 50), rd(2, "x", "a", 60, 70),
		},
		want: verdicts{V, P, V, P},
	},
	{
		// Needs the exhaustive search: the ordering graph is acyclic.
		name: "absent between two reads of one write",
		init: map[string]string{"x": "i"},
		ops: []Op{
			wr(1, "x", "a", 0, 100), del(1, "x", 110, 120), del(3, "x", 0, 200),
			rdAbsent(2, "x", 0, 300), rd(2, "x", "a", 310, 320), rdAbsent(2, "x", 330, 340), rd(2, "x", "a", 350, 360),
		},
		want: verdicts{V, V, V, P},
	},
	{
		name: "message passing across keys, sequential",
		ops: []Op{
			wr(1, "data", "d1", 0, 10), wr(1, "flag", "f1", 20, 30),
			rd(2, "flag", "f1", 40, 50), rd(2, "data", "d1", 60, 70),
		},
		want: verdicts{P, P, P, P},
	},
	{
		name: "message passing across keys, stale data",
		ops: []Op{
			wr(1, "data", "d1", 0, 100), wr(1, "flag", "f1", 110, 120),
			rd(2, "flag", "f1", 115, 125), rdAbsent(2, "data", 130, 140),
		},
		want: verdicts{V, V, V, P},
	},
}

func TestCheckers(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := History{Init: tc.init, Ops: tc.ops}
			got := []Result{Linearizable(h, 10*time.Second), Sequential(h, 100000), Regular(h), ValidReads(h)}
			want := []Verdict{tc.want.lin, tc.want.seq, tc.want.reg, tc.want.valid}
			for i, r := range got {
				if r.Verdict != want[i] {
					t.Errorf("%s: got %v, want %v", r.Model, r, want[i])
				} else if r.Verdict == Violation && r.Detail == "" {
					t.Errorf("%s: violation without detail", r.Model)
				} else {
					t.Logf("%v", r)
				}
			}
		})
	}
}

// The store-buffering history passes per key: the SC checker must check keys
// jointly.
func TestSequentialNotPerKey(t *testing.T) {
	ops := []Op{
		wr(1, "x", "x1", 0, 10), rdAbsent(1, "y", 20, 30),
		wr(2, "y", "y1", 0, 10), rdAbsent(2, "x", 20, 30),
	}
	perKey, keys := byKey(ops)
	for _, k := range keys {
		if r := Sequential(History{Ops: perKey[k]}, 1000); r.Verdict != Pass {
			t.Errorf("key %s alone: %v", k, r)
		}
	}
	if r := Sequential(History{Ops: ops}, 1000); r.Verdict != Violation {
		t.Errorf("jointly: %v", r)
	}
}

func TestSequentialCycleDetail(t *testing.T) {
	ops := []Op{
		wr(1, "x", "x1", 0, 10), rdAbsent(1, "y", 20, 30),
		wr(2, "y", "y1", 0, 10), rdAbsent(2, "x", 20, 30),
	}
	r := Sequential(History{Ops: ops}, 1000)
	for _, s := range []string{"cycle", `W("x")="x1"`, `R("x")=absent`, "po"} {
		if !strings.Contains(r.Detail, s) {
			t.Errorf("detail %q lacks %q", r.Detail, s)
		}
	}
}

func TestLinearizableDetail(t *testing.T) {
	h := History{Ops: []Op{wr(1, "x", "a", 0, 10), wr(1, "x", "b", 20, 30), rd(2, "x", "a", 40, 50), wr(3, "y", "q", 0, 1)}}
	r := Linearizable(h, time.Second)
	if r.Verdict != Violation || r.Key != "x" {
		t.Fatalf("got %v", r)
	}
	for _, s := range []string{`c2 R("x")="a" [40.000ms, 50.000ms]`, `c1 W("x")="a"`, `c1 W("x")="b"`} {
		if !strings.Contains(r.Detail, s) {
			t.Errorf("detail %q lacks %q", r.Detail, s)
		}
	}
}

func TestSequentialBudget(t *testing.T) {
	var h History
	for _, tc := range cases {
		if tc.name == "absent between two reads of one write" {
			h = History{Init: tc.init, Ops: tc.ops}
		}
	}
	if r := Sequential(h, 1000); r.Verdict != Violation || !strings.Contains(r.Detail, "exhaustive search") {
		t.Errorf("budget 1000: %v", r)
	}
	if r := Sequential(h, 1); r.Verdict != Undecided {
		t.Errorf("budget 1: %v", r)
	}
}

func TestCheckDispatch(t *testing.T) {
	h := History{Ops: []Op{wr(1, "x", "a", 0, 10), rd(2, "x", "zzz", 20, 30)}}
	for _, m := range Models {
		r, err := Check(m, h, WithTimeout(time.Second), WithBudget(1000))
		if err != nil {
			t.Fatal(err)
		}
		if r.Model != m {
			t.Errorf("model %q: result for %q", m, r.Model)
		}
		if want := Violation; m == "none" {
			if r.Verdict != Pass {
				t.Errorf("none: %v", r)
			}
		} else if r.Verdict != want {
			t.Errorf("%s: %v", m, r)
		}
	}
	_, err := Check("causal", h)
	if err == nil || !strings.Contains(err.Error(), "linearizable, sequential, sequential-per-key, regular, valid-reads, release, none") {
		t.Errorf("unknown model error: %v", err)
	}
}

func TestResultString(t *testing.T) {
	r := Result{Model: "regular", Verdict: Violation, Key: "x", Detail: "stale"}
	if got, want := r.String(), `regular: violation (key "x"): stale`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (Result{Model: "sequential", Verdict: Pass}).String(); got != "sequential: pass" {
		t.Errorf("got %q", got)
	}
}

func TestLinearizableVisual(t *testing.T) {
	path := t.TempDir() + "/vis.html"
	h := History{Ops: []Op{wr(1, "x", "a", 0, 10), wr(1, "x", "b", 20, 30), rd(2, "x", "a", 40, 50)}}
	if err := LinearizableVisual(h, path); err != nil {
		t.Fatal(err)
	}
}
