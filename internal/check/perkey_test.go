package check

import "testing"

// TestSequentialPerKeyIsWeaker: the IRIW history (two readers see two
// writes in opposite orders) is SC per key but not SC; a client reading
// its own write and then an older value violates both.
func TestSequentialPerKeyIsWeaker(t *testing.T) {
	op := func(c int64, k string, kind Kind, v string, call, ret int64) Op {
		return Op{Client: c, Key: k, Kind: kind, Value: v, Found: v != "", Call: call, Return: ret, Outcome: OK}
	}
	iriw := History{Ops: []Op{
		op(1, "x", Write, "x1", 0, 10),
		op(2, "y", Write, "y1", 0, 10),
		op(3, "x", Read, "x1", 1, 2), op(3, "y", Read, "", 3, 4),
		op(4, "y", Read, "y1", 1, 2), op(4, "x", Read, "", 3, 4),
	}}
	if r := Sequential(iriw, 0); r.Verdict != Violation {
		t.Fatalf("Sequential(IRIW) = %v; want violation", r)
	}
	if r := SequentialPerKey(iriw, 0); r.Verdict != Pass {
		t.Fatalf("SequentialPerKey(IRIW) = %v; want pass", r)
	}
	// Client 1 writes x1 then x2; client 2 sees x2 then x1: no order of
	// x's operations explains it.
	backwards := History{Ops: []Op{
		op(1, "x", Write, "x1", 0, 1), op(1, "x", Write, "x2", 2, 3),
		op(2, "x", Read, "x2", 4, 5), op(2, "x", Read, "x1", 6, 7),
	}}
	if r := SequentialPerKey(backwards, 0); r.Verdict != Violation || r.Key != "x" {
		t.Fatalf("SequentialPerKey(writes seen in reverse) = %v; want a violation on x", r)
	}
	if r, err := Check("sequential-per-key", iriw); err != nil || r.Verdict != Pass {
		t.Fatalf("Check(sequential-per-key) = %v, %v", r, err)
	}
}
