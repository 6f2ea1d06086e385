package check

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Builders: versions are Position{T: v}; times in ms.
func ver(v int64) Position {
	if v == 0 {
		return Position{}
	}
	return Position{Set: true, T: v}
}

// tx is a committed transaction of client c with version v (0: none).
func tx(c, v, call, ret int64, ops ...TxnAccess) Txn {
	return Txn{Client: c, Call: call * ms, Return: ret * ms, Outcome: OK, Version: ver(v), Ops: ops}
}

// rA reads k=val at version v (val "": absent, at v 0: the initial state).
func rA(k, val string, v int64) TxnAccess {
	return TxnAccess{Key: k, Read: true, ReadValue: val, ReadFound: val != "", ReadVersion: ver(v)}
}
func wA(k, val string) TxnAccess {
	return TxnAccess{Key: k, Write: true, WriteValue: val, WriteFound: true}
}

// unknownAdd is an add whose outcome is unknown: its read was never seen,
// so neither is the value it wrote.
func unknownAdd(k string) TxnAccess {
	return TxnAccess{Key: k, Read: true, Write: true, WriteFound: true, WriteUnknown: true}
}

// addA reads k=old at version v and writes nw (a read-modify-write).
func addA(k, old string, v int64, nw string) TxnAccess {
	a := rA(k, old, v)
	a.Write, a.WriteValue, a.WriteFound = true, nw, true
	return a
}

func TestSerializableCases(t *testing.T) {
	unknownTx := func(x Txn) Txn { x.Outcome, x.Return = Unknown, Never; return x }
	failedTx := func(x Txn) Txn { x.Outcome = Failed; return x }
	perKey := func(a TxnAccess, v int64) TxnAccess { a.WriteVersion = ver(v); return a }
	cases := []struct {
		name   string
		h      []Txn
		opts   SerializableOpts
		want   []string // anomalies; nil: pass
		strict []string // under StrictSerializable, if different from want
	}{
		{name: "empty"},
		{name: "serial", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1"), wA("y", "a")),
			tx(2, 2, 2, 3, addA("x", "1", 1, "2")),
			tx(3, 0, 4, 5, rA("x", "2", 2), rA("y", "a", 1)),
		}},
		{name: "concurrent, non-conflicting", h: []Txn{
			tx(1, 1, 0, 10, wA("x", "1")),
			tx(2, 2, 0, 10, wA("y", "1")),
			tx(3, 3, 0, 10, addA("z", "", 0, "5")),
			tx(4, 0, 0, 10, rA("x", "1", 1), rA("y", "", 0)), // between T0 and T1
		}},
		{name: "read-only at a consistent snapshot", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1"), wA("y", "1")),
			tx(2, 2, 2, 3, wA("x", "2"), wA("y", "2")),
			tx(3, 0, 4, 5, rA("x", "1", 1), rA("y", "1", 1)),
		}, strict: []string{"G2-realtime"}}, // a stale snapshot
		{name: "lost update", h: []Txn{
			tx(1, 1, 0, 10, addA("x", "", 0, "1")),
			tx(2, 2, 0, 10, addA("x", "", 0, "1")),
		}, want: []string{"lost-update", "G2"}},
		{name: "write skew", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1"), wA("y", "1")),
			tx(2, 2, 2, 10, rA("x", "1", 1), rA("y", "1", 1), wA("x", "0")),
			tx(3, 3, 2, 10, rA("x", "1", 1), rA("y", "1", 1), wA("y", "0")),
		}, want: []string{"G2"}},
		{name: "read skew", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1"), wA("y", "1")),
			tx(2, 2, 2, 3, wA("x", "2"), wA("y", "2")),
			tx(3, 0, 2, 10, rA("x", "1", 1), rA("y", "2", 2)),
		}, want: []string{"G2"}},
		{name: "circular information flow (G1c)", h: []Txn{
			tx(1, 1, 0, 10, wA("x", "1"), rA("y", "1", 2)),
			tx(2, 2, 0, 10, wA("y", "1"), rA("x", "1", 1)),
		}, want: []string{"G1c"}},
		{name: "write cycle (G0)", h: []Txn{
			tx(1, 0, 0, 10, perKey(wA("x", "1"), 1), perKey(wA("y", "1"), 2)),
			tx(2, 0, 0, 10, perKey(wA("x", "2"), 2), perKey(wA("y", "2"), 1)),
		}, want: []string{"G0"}},
		{name: "aborted read", h: []Txn{
			failedTx(tx(1, 0, 0, 1, wA("x", "1"))),
			tx(2, 0, 2, 3, rA("x", "1", 5)),
		}, want: []string{"G1a"}},
		{name: "read of a version nobody wrote", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1")),
			tx(2, 0, 2, 3, rA("x", "1", 7)),
		}, want: []string{"G1a"}},
		{name: "value mismatch", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1")),
			tx(2, 0, 2, 3, rA("x", "2", 1)),
		}, want: []string{"value-mismatch"}},
		{name: "value at the initial version", h: []Txn{
			tx(2, 0, 2, 3, rA("x", "2", 0)),
		}, want: []string{"value-mismatch"}},
		{name: "duplicate version", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1")),
			tx(2, 1, 2, 3, wA("x", "2")),
		}, want: []string{"duplicate-version"}},
		{name: "a read of its own write", h: []Txn{
			tx(1, 1, 0, 1, rA("x", "1", 1), wA("x", "1")),
		}, want: []string{"internal"}},
		{name: "unknown outcome, observed, versioned", h: []Txn{
			unknownTx(tx(1, 5, 0, 0, wA("x", "1"), wA("y", "1"))),
			tx(2, 0, 2, 3, rA("x", "1", 5), rA("y", "", 0)),
		}, want: []string{"G2"}},
		{name: "unknown outcome, unobserved", h: []Txn{
			unknownTx(tx(1, 5, 0, 0, wA("x", "1"), wA("y", "1"))),
			tx(2, 0, 2, 3, rA("x", "", 0), rA("y", "", 0)),
		}},
		{name: "unknown outcome, no version, placed by value", h: []Txn{
			unknownTx(tx(1, 0, 0, 0, wA("x", "1"), wA("y", "1"))),
			tx(2, 0, 2, 3, rA("x", "1", 5)),
			tx(3, 0, 2, 3, rA("y", "1", 5), rA("x", "", 0)),
		}, want: []string{"G2"}},
		{name: "unknown outcome add, value unknown, placed by its read", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "5")),
			unknownTx(tx(2, 0, 2, 0, unknownAdd("x"))),
			tx(3, 0, 4, 5, rA("x", "6", 7)),
		}},
		{name: "unknown outcome add, and a version nobody else wrote, twice", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "5")),
			unknownTx(tx(2, 0, 2, 0, unknownAdd("x"))),
			tx(3, 0, 4, 5, rA("x", "6", 7)),
			tx(4, 0, 6, 7, rA("x", "9", 8)),
		}, want: []string{"G1a"}},
		{name: "two unknown adds placed one after the other (attribution sees its own placements at once)", h: []Txn{
			unknownTx(tx(1, 0, 0, 0, unknownAdd("x"))),
			unknownTx(tx(2, 0, 0, 0, unknownAdd("x"), unknownAdd("y"))),
			tx(3, 3, 10, 11, wA("x", "9")),
			tx(4, 0, 5, 6, rA("x", "1", 1)),
			tx(5, 0, 7, 8, rA("y", "22", 2), rA("x", "19", 2)),
		}},
		{name: "stale read: serializable, not strict", h: []Txn{
			tx(1, 1, 0, 1, wA("x", "1")),
			tx(2, 0, 2, 3, rA("x", "", 0)),
		}, strict: []string{"G2-realtime"}},
		{name: "session order", h: []Txn{
			tx(1, 1, 0, 10, wA("x", "1")),
			tx(1, 0, 5, 15, rA("x", "", 0)),
		}, opts: SerializableOpts{Sessions: true}, want: []string{"G2-session"}, strict: []string{"G2-session"}},
		{name: "session order after an unknown outcome", h: []Txn{
			unknownTx(tx(1, 2, 0, 0, wA("x", "1"))),
			tx(1, 0, 5, 6, rA("x", "", 0)), // the client moved on; T0 committed later
			tx(2, 0, 10, 11, rA("x", "1", 2)),
		}, opts: SerializableOpts{Sessions: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := SerializableWith(c.h, c.opts)
			if !slices.Equal(r.Anomalies, c.want) || (r.Verdict == Pass) != (c.want == nil) {
				t.Errorf("got %s %v, want %v\n%s", r.Verdict, r.Anomalies, c.want, r)
			}
			want := c.want
			if c.strict != nil {
				want = c.strict
			}
			if r := StrictSerializable(c.h); !slices.Equal(r.Anomalies, want) {
				t.Errorf("strict: got %v, want %v\n%s", r.Anomalies, want, r)
			}
			t.Log(r)
		})
	}
}

// genSerialTxns runs n random transactions one after another over keys
// keys (reads, blind writes, deletes, read-modify-writes), recording what
// each saw: a serializable history whose versions are the serial order.
// Times do not overlap, so it is strictly serializable too.
func genSerialTxns(rng *rand.Rand, n, keys, clients int) []Txn {
	type cell struct {
		v     Position
		val   string
		found bool
	}
	state := make([]cell, keys)
	h := make([]Txn, n)
	for i := range h {
		v := ver(int64(i + 1))
		x := Txn{Client: int64(rng.IntN(clients)), Call: int64(i) * 10 * ms, Return: (int64(i)*10 + 5) * ms, Outcome: OK}
		used := map[int]bool{}
		for range 1 + rng.IntN(4) {
			k := rng.IntN(keys)
			if used[k] {
				continue
			}
			used[k] = true
			c, key := state[k], "k"+strconv.Itoa(k)
			read := TxnAccess{Key: key, Read: true, ReadValue: c.val, ReadFound: c.found, ReadVersion: c.v}
			switch p := rng.IntN(10); {
			case p < 4:
				x.Ops = append(x.Ops, read)
				continue
			case p < 6:
				x.Ops = append(x.Ops, TxnAccess{Key: key, Write: true, WriteValue: "w" + strconv.Itoa(i), WriteFound: true})
			case p < 7:
				x.Ops = append(x.Ops, TxnAccess{Key: key, Write: true})
			default:
				old, _ := strconv.Atoi(c.val)
				read.Write, read.WriteValue, read.WriteFound = true, strconv.Itoa(old+1+i), true
				x.Ops = append(x.Ops, read)
			}
			a := x.Ops[len(x.Ops)-1]
			state[k] = cell{v, a.WriteValue, a.WriteFound}
			x.Version = v
		}
		h[i] = x
	}
	return h
}

func cloneTxns(h []Txn) []Txn {
	c := slices.Clone(h)
	for i := range c {
		c[i].Ops = slices.Clone(c[i].Ops)
	}
	return c
}

// txnRef names one access of a history.
type txnRef struct{ t, op int }

// accesses lists a history's accesses that satisfy f.
func accesses(h []Txn, f func(x *Txn, a *TxnAccess) bool) []txnRef {
	var out []txnRef
	for t := range h {
		for i := range h[t].Ops {
			if f(&h[t], &h[t].Ops[i]) {
				out = append(out, txnRef{t, i})
			}
		}
	}
	return out
}

// writesOf returns, per key, the transactions that wrote it, in version order.
func writesOf(h []Txn) map[string][]txnRef {
	m := map[string][]txnRef{}
	for _, r := range accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Write }) {
		k := h[r.t].Ops[r.op].Key
		m[k] = append(m[k], r)
	}
	return m
}

func writes(x Txn, k string) bool {
	return slices.ContainsFunc(x.Ops, func(a TxnAccess) bool { return a.Write && a.Key == k })
}

// setRead makes a read see what w wrote (w.t < 0: the initial state).
func setRead(h []Txn, r, w txnRef) {
	a := &h[r.t].Ops[r.op]
	if w.t < 0 {
		a.ReadVersion, a.ReadValue, a.ReadFound = Position{}, "", false
		return
	}
	b := h[w.t].Ops[w.op]
	a.ReadVersion, a.ReadValue, a.ReadFound = h[w.t].Version, b.WriteValue, b.WriteFound
}

// versionIndex is the position of the write a read saw among its key's
// writes (-1: the initial state).
func versionIndex(h []Txn, ws []txnRef, a *TxnAccess) int {
	for j, w := range ws {
		if h[w.t].Version == a.ReadVersion {
			return j
		}
	}
	return -1
}

// serInjections each break a serial history in one way, returning the
// anomaly names that may report it (any one suffices) and whether the
// checker must be strict; ok false when the history offers no target.
var serInjections = []struct {
	name   string
	strict bool
	want   []string
	inject func(rng *rand.Rand, h []Txn) bool
}{
	{"lost update", false, []string{"lost-update"}, func(rng *rand.Rand, h []Txn) bool {
		ws := writesOf(h)
		rmw := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read && a.Write })
		rng.Shuffle(len(rmw), func(i, j int) { rmw[i], rmw[j] = rmw[j], rmw[i] })
		for _, b := range rmw {
			a := &h[b.t].Ops[b.op]
			if j := versionIndex(h, ws[a.Key], a); j >= 0 && h[ws[a.Key][j].t].Ops[ws[a.Key][j].op].Read {
				// b read a read-modify-write's version: read what it read
				w := ws[a.Key][j]
				*a = TxnAccess{Key: a.Key, Read: true, ReadValue: h[w.t].Ops[w.op].ReadValue, ReadFound: h[w.t].Ops[w.op].ReadFound,
					ReadVersion: h[w.t].Ops[w.op].ReadVersion, Write: true, WriteValue: a.WriteValue, WriteFound: a.WriteFound}
				return true
			}
		}
		return false
	}},
	{"value corrupted", false, []string{"value-mismatch"}, func(rng *rand.Rand, h []Txn) bool {
		rs := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read })
		if len(rs) == 0 {
			return false
		}
		r := rs[rng.IntN(len(rs))]
		a := &h[r.t].Ops[r.op]
		a.ReadValue, a.ReadFound = "corrupt", true
		return true
	}},
	{"duplicate version", false, []string{"duplicate-version"}, func(rng *rand.Rand, h []Txn) bool {
		for _, ws := range writesOf(h) {
			if len(ws) >= 2 {
				i := rng.IntN(len(ws) - 1)
				h[ws[i+1].t].Version = h[ws[i].t].Version
				return true
			}
		}
		return false
	}},
	{"write cycle", false, []string{"G0"}, func(rng *rand.Rand, h []Txn) bool {
		// two transactions that both wrote keys k1 and k2: swap their
		// versions at k1 (per-key versions)
		ws := writesOf(h)
		keys := slices.Sorted(maps.Keys(ws))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k1 := range keys {
			for i, a := range ws[k1] {
				for _, b := range ws[k1][i+1:] {
					for _, k2 := range keys {
						if k2 != k1 && writes(h[a.t], k2) && writes(h[b.t], k2) {
							h[a.t].Ops[a.op].WriteVersion = h[b.t].Version
							h[b.t].Ops[b.op].WriteVersion = h[a.t].Version
							return true
						}
					}
				}
			}
		}
		return false
	}},
	{"aborted read", false, []string{"G1a"}, func(rng *rand.Rand, h []Txn) bool {
		rs := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read && a.ReadVersion.Set })
		if len(rs) == 0 {
			return false
		}
		r := rs[rng.IntN(len(rs))]
		h[h[r.t].Ops[r.op].ReadVersion.T-1].Outcome = Failed
		return true
	}},
	{"stale read", true, []string{"G2", "G2-realtime", "G1c-realtime", "G2-session", "G1c-session"}, func(rng *rand.Rand, h []Txn) bool {
		ws := writesOf(h)
		rs := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read && a.ReadVersion.Set })
		if len(rs) == 0 {
			return false
		}
		r := rs[rng.IntN(len(rs))]
		a := &h[r.t].Ops[r.op]
		j := versionIndex(h, ws[a.Key], a) - 1
		w := txnRef{-1, 0}
		if j >= 0 {
			w = ws[a.Key][j]
		}
		setRead(h, r, w)
		return true
	}},
	{"future read", true, []string{"G1c", "G2", "G1c-realtime", "G2-realtime", "G1c-session", "G2-session"}, func(rng *rand.Rand, h []Txn) bool {
		ws := writesOf(h)
		rs := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read && !a.Write })
		rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		for _, r := range rs {
			a := &h[r.t].Ops[r.op]
			if j := versionIndex(h, ws[a.Key], a) + 1; j < len(ws[a.Key]) && ws[a.Key][j].t != r.t {
				setRead(h, r, ws[a.Key][j])
				return true
			}
		}
		return false
	}},
}

// TestSerializableRandom: random serial histories pass; each with one
// anomaly injected is rejected with its name. On failure it prints the
// seed and the command that reproduces it.
func TestSerializableRandom(t *testing.T) {
	injected := make([]int, len(serInjections))
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 16))
		n, keys := 2+rng.IntN(40), 1+rng.IntN(8)
		h := genSerialTxns(rng, n, keys, 1+rng.IntN(4))
		for _, f := range []func([]Txn) Result{Serializable, StrictSerializable} {
			if r := f(h); r.Verdict != Pass {
				t.Fatalf("seed %d: serial history rejected: %s", seed, r)
			}
		}
		// Replies lost, some with no version: still serializable.
		lost := cloneTxns(h)
		for i := range lost {
			if rng.IntN(5) == 0 {
				lost[i].Outcome, lost[i].Return = Unknown, Never
				if rng.IntN(2) == 0 {
					lost[i].Version = Position{}
				}
			}
		}
		for _, f := range []func([]Txn) Result{Serializable, StrictSerializable} {
			if r := f(lost); r.Verdict != Pass {
				t.Fatalf("seed %d: serial history with lost replies rejected: %s", seed, r)
			}
		}
		for i, inj := range serInjections {
			bad := cloneTxns(h)
			if !inj.inject(rng, bad) {
				continue
			}
			injected[i]++
			check := Serializable
			if inj.strict {
				check = StrictSerializable
			}
			r := check(bad)
			if !slices.ContainsFunc(r.Anomalies, func(a string) bool { return slices.Contains(inj.want, a) }) {
				var b strings.Builder
				for i := range bad {
					fmt.Fprintln(&b, FormatTxn(bad, i))
				}
				t.Errorf("seed %d: %s: got %v, want one of %v\n%s\n%s\nrepro: go test ./internal/check -run TestSerializableRandom",
					seed, inj.name, r.Anomalies, inj.want, r, b.String())
			}
		}
	}
	for i, inj := range serInjections {
		if t.Logf("%s: injected in %d histories", inj.name, injected[i]); injected[i] < 50 {
			t.Errorf("%s: injected only %d times", inj.name, injected[i])
		}
	}
}

func BenchmarkSerializable(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		rng := rand.New(rand.NewPCG(1, 2))
		h := genSerialTxns(rng, n, n/10, 100)
		// broken: 1% of reads see a random version of their key
		broken := cloneTxns(h)
		ws := writesOf(broken)
		for _, r := range accesses(broken, func(_ *Txn, a *TxnAccess) bool { return a.Read }) {
			if k := ws[broken[r.t].Ops[r.op].Key]; rng.IntN(100) == 0 && len(k) > 0 {
				setRead(broken, r, k[rng.IntN(len(k))])
			}
		}
		for _, hist := range []struct {
			name string
			h    []Txn
			want Verdict
		}{{"serial", h, Pass}, {"broken", broken, Violation}} {
			for _, strict := range []bool{false, true} {
				b.Run(fmt.Sprintf("txns=%d/%s/strict=%t", n, hist.name, strict), func(b *testing.B) {
					for b.Loop() {
						if r := SerializableWith(hist.h, SerializableOpts{Sessions: strict, RealTime: strict}); r.Verdict != hist.want {
							b.Fatal(r)
						}
					}
				})
			}
		}
	}
}

// refSerializable is the dumb reference: a backtracking search for a
// serial order of h's committed transactions in which each key's writes
// come in version order and each read sees the latest write before it,
// with that write's version and value (strict: also respecting session
// and real-time order). Transactions are OK or Unknown; an Unknown one
// may be left out, and its reads (it has no results) are not checked.
func refSerializable(h []Txn, strict bool) bool {
	type cell struct {
		v     Position // unset: the initial state
		val   string
		found bool
	}
	before := func(a, b int) bool { // a must precede b
		x, y := &h[a], &h[b]
		return x.Outcome == OK && (x.Return < y.Call || (x.Client == y.Client && (x.Call < y.Call || (x.Call == y.Call && a < b))))
	}
	state := map[string]cell{}
	used := make([]bool, len(h))
	ok := 0
	for _, x := range h {
		if x.Outcome == OK {
			ok++
		}
	}
	var search func(placed int) bool
	search = func(placed int) bool { // placed: OK transactions placed
		if placed == ok {
			return true
		}
	next:
		for t := range h {
			if used[t] {
				continue
			}
			if strict {
				for u := range h {
					if !used[u] && u != t && before(u, t) {
						continue next
					}
				}
			}
			x := &h[t]
			for _, a := range x.Ops {
				c := state[a.Key]
				if a.Read && x.Outcome == OK && (c.v != a.ReadVersion || !sameValue(a.ReadFound, a.ReadValue, c.found, c.val)) {
					continue next
				}
				if a.Write && c.v.Set && accessVersion(x, &a).Compare(c.v) <= 0 {
					continue next
				}
			}
			saved := map[string]cell{}
			for _, a := range x.Ops {
				if a.Write {
					saved[a.Key] = state[a.Key]
					state[a.Key] = cell{accessVersion(x, &a), a.WriteValue, a.WriteFound}
				}
			}
			used[t] = true
			next := placed
			if x.Outcome == OK {
				next++
			}
			found := search(next)
			used[t] = false
			maps.Copy(state, saved)
			if found {
				return true
			}
		}
		return false
	}
	return search(0)
}

// TestSerializableReference compares the checker's verdicts with the
// reference on small random histories: serial ones with random times,
// some replies lost (Unknown), some reads pointed at another version of
// their key, some versions swapped.
func TestSerializableReference(t *testing.T) {
	var pass, fail [2]int
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 17))
		h := genSerialTxns(rng, 1+rng.IntN(6), 1+rng.IntN(3), 1+rng.IntN(3))
		for i := range h {
			h[i].Call = int64(rng.IntN(100)) * ms
			h[i].Return = h[i].Call + int64(rng.IntN(30))*ms
			if rng.IntN(6) == 0 {
				h[i].Outcome, h[i].Return = Unknown, Never
			}
		}
		ws := writesOf(h)
		rs := accesses(h, func(_ *Txn, a *TxnAccess) bool { return a.Read })
		for range rng.IntN(3) {
			if len(rs) > 0 {
				r := rs[rng.IntN(len(rs))]
				k := ws[h[r.t].Ops[r.op].Key]
				w := txnRef{-1, 0}
				if j := rng.IntN(len(k) + 1); j < len(k) {
					w = k[j]
				}
				setRead(h, r, w)
			}
		}
		if rng.IntN(4) == 0 {
			a, b := rng.IntN(len(h)), rng.IntN(len(h))
			if h[a].Version.Set && h[b].Version.Set {
				h[a].Version, h[b].Version = h[b].Version, h[a].Version
			}
		}
		for i, strict := range []bool{false, true} {
			want := refSerializable(h, strict)
			r := SerializableWith(h, SerializableOpts{Sessions: strict, RealTime: strict})
			if (r.Verdict == Pass) != want {
				var b strings.Builder
				for i := range h {
					fmt.Fprintln(&b, FormatTxn(h, i))
				}
				t.Fatalf("seed %d strict=%t: reference says serializable=%t, checker: %s\n%s", seed, strict, want, r, b.String())
			}
			if want {
				pass[i]++
			} else {
				fail[i]++
			}
		}
	}
	t.Logf("serializable: %d pass, %d violations; strict: %d pass, %d violations", pass[0], fail[0], pass[1], fail[1])
}

func TestCheckTxns(t *testing.T) {
	stale := []Txn{tx(1, 1, 0, 1, wA("x", "1")), tx(2, 0, 2, 3, rA("x", "", 0))}
	for model, want := range map[string]Verdict{"serializable": Pass, "strong-session-serializable": Pass, "strict-serializable": Violation, "none": Pass} {
		if r, err := CheckTxns(model, stale); err != nil || r.Verdict != want || r.Model != model {
			t.Errorf("%s: got %s, %v; want %s", model, r, err, want)
		}
	}
	if _, err := CheckTxns("linearizable", stale); err == nil || !strings.Contains(err.Error(), "strict-serializable") {
		t.Errorf("unknown model: got %v", err)
	}
}
