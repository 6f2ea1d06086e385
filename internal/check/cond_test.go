package check

import "testing"

// TestLinearizableCondWrites: the register model's conditional writes. Two
// overlapping increments from the same value cannot both succeed; a
// conflict needs a point where the expected value is not the register's;
// an unknown outcome may have applied or not.
func TestLinearizableCondWrites(t *testing.T) {
	cas := func(client int64, expect, v string, call, ret int64, conflict bool) Op {
		return Op{Client: client, Key: "k", Kind: CondWrite, ExpectFound: expect != "", Expect: expect,
			Found: true, Value: v, Call: call, Return: ret, Outcome: OK, Conflict: conflict}
	}
	read := func(client int64, v string, call, ret int64) Op {
		return Op{Client: client, Key: "k", Kind: Read, Found: v != "", Value: v, Call: call, Return: ret, Outcome: OK}
	}
	unknown := func(o Op) Op { o.Outcome, o.Return = Unknown, Never; return o }
	for _, c := range []struct {
		name string
		ops  []Op
		want Verdict
	}{
		{"one wins, one conflicts", []Op{cas(1, "", "1a", 0, 10, false), cas(2, "", "1b", 0, 10, true), read(3, "1a", 20, 30)}, Pass},
		{"both win from absent", []Op{cas(1, "", "1a", 0, 10, false), cas(2, "", "1b", 0, 10, false)}, Violation},
		{"chained", []Op{cas(1, "", "1", 0, 10, false), cas(2, "1", "2", 20, 30, false), cas(1, "2", "3", 40, 50, false), read(3, "3", 60, 70)}, Pass},
		{"conflict against its own expected value", []Op{cas(1, "", "1", 0, 10, false), cas(2, "1", "2", 20, 30, true)}, Violation},
		{"win against a stale value", []Op{cas(1, "", "1", 0, 10, false), cas(2, "1", "2", 20, 30, false), cas(3, "1", "2b", 40, 50, false)}, Violation},
		{"unknown that applied", []Op{unknown(cas(1, "", "1", 0, 10, false)), cas(2, "1", "2", 20, 30, false)}, Pass},
		{"unknown that did not", []Op{unknown(cas(1, "", "1", 0, 10, false)), cas(2, "", "2", 20, 30, false)}, Pass},
		{"unknown that cannot apply", []Op{unknown(cas(1, "x", "1", 0, 10, false)), read(2, "1", 20, 30)}, Violation},
	} {
		if got := Linearizable(History{Ops: c.ops}, 0); got.Verdict != c.want {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
	// The other checkers see a successful conditional write as a write.
	h := History{Ops: []Op{cas(1, "", "1", 0, 10, false), cas(2, "", "x", 0, 10, true), read(2, "1", 20, 30)}}
	if got := Regular(h); got.Verdict != Pass {
		t.Errorf("Regular of conditional writes: %v; want pass", got)
	}
}
