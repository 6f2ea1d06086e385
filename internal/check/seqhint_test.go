package check

import (
	"math"
	"testing"
)

// at is a write's position at ts; readAt a read's view at ts (after every
// write at ts).
func at(ts int64) Position { return Position{Set: true, T: ts} }
func readAt(ts int64) Position {
	return Position{Set: true, T: ts, Sub: math.MaxInt64, Node: math.MaxInt64}
}

func TestSequentialPositionWitness(t *testing.T) {
	// Two writers, two readers who see the writes in the same order, but
	// stale: the read views are in the past of their real time.
	h := History{Ops: []Op{
		{Client: 1, Key: "x", Kind: Write, Value: "x1", Found: true, Outcome: OK, Call: 0, Return: 10, Pos: at(5)},
		{Client: 2, Key: "y", Kind: Write, Value: "y1", Found: true, Outcome: OK, Call: 0, Return: 10, Pos: at(7)},
		{Client: 3, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(6)},
		{Client: 3, Key: "y", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(6)},
		{Client: 4, Key: "y", Kind: Read, Value: "y1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(8)},
		{Client: 4, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 30, Return: 40, Pos: readAt(8)},
	}}
	s := newSeq(h)
	if _, bad := s.readsFrom(); bad {
		t.Fatal("readsFrom rejected a sequentially consistent history")
	}
	s.buildGraph()
	w := s.positionWitness()
	if w == nil {
		t.Fatal("no position witness for a history where every op has a position")
	}
	if why := s.replay(w); why != "" {
		t.Fatalf("the position witness does not replay: %s", why)
	}
	if r := Sequential(h, 0); r.Verdict != Pass {
		t.Fatalf("Sequential = %v: %s", r.Verdict, r.Detail)
	}

	// IRIW with positions that claim an order: the positions cannot make
	// a violation pass.
	bad := History{Ops: []Op{
		{Client: 1, Key: "x", Kind: Write, Value: "x1", Found: true, Outcome: OK, Call: 0, Return: 10, Pos: at(5)},
		{Client: 2, Key: "y", Kind: Write, Value: "y1", Found: true, Outcome: OK, Call: 0, Return: 10, Pos: at(7)},
		{Client: 3, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(5)},
		{Client: 3, Key: "y", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(5)},
		{Client: 4, Key: "y", Kind: Read, Value: "y1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(9)},
		{Client: 4, Key: "x", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(9)},
	}}
	if r := Sequential(bad, 0); r.Verdict != Violation {
		t.Fatalf("IRIW with claimed positions: Sequential = %v; want a violation", r.Verdict)
	}
	// A write without a position (its reply was lost: an Unknown
	// outcome) goes just before the first read that observed it.
	h.Ops[0].Pos = Position{}
	h.Ops[0].Outcome, h.Ops[0].Return = Unknown, Never
	s = newSeq(h)
	s.readsFrom()
	s.buildGraph()
	w = s.positionWitness()
	if w == nil {
		t.Fatal("no position witness with an unpositioned write")
	}
	if why := s.replay(w); why != "" {
		t.Fatalf("the position witness with an inferred position does not replay: %s", why)
	}
	if w[0].op != 0 {
		t.Fatalf("the position witness starts with %s; want the unpositioned write, before its first reader", FormatOp(s.ops[w[0].op]))
	}
}

// TestPositionWitnessKeepsProgramOrder: positions that run backwards within
// a client cannot break program order; the merge keeps each client's
// operations in order, and the replay then decides.
func TestPositionWitnessKeepsProgramOrder(t *testing.T) {
	h := History{Ops: []Op{
		// Client 1 writes x then y, but y's position is lower than x's.
		{Client: 1, Key: "x", Kind: Write, Value: "x1", Found: true, Outcome: OK, Call: 0, Return: 10, Pos: at(9)},
		{Client: 1, Key: "y", Kind: Write, Value: "y1", Found: true, Outcome: OK, Call: 10, Return: 20, Pos: at(3)},
		{Client: 2, Key: "y", Kind: Read, Value: "y1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(4)},
		{Client: 2, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 30, Return: 40, Pos: readAt(10)},
	}}
	s := newSeq(h)
	s.readsFrom()
	s.buildGraph()
	w := s.positionWitness()
	for p, st := range w {
		if st.op == 1 && (p == 0 || w[p-1].op != 0) {
			t.Fatalf("the merge placed %s before its client's earlier write", FormatOp(s.ops[1]))
		}
	}
	// Sorting by position would break program order; the history is SC
	// (x1, y1, then both reads) and the checker must say so.
	if r := Sequential(h, 0); r.Verdict != Pass {
		t.Fatalf("Sequential = %v: %s", r.Verdict, r.Detail)
	}
}

// TestTeethInferredPositions: positions inferred for writes whose replies
// were lost cannot make a violation pass. IRIW where both writes have an
// unknown outcome and no position, and each reader claims a view in which
// it saw one write and not the other: the position witness fails replay
// and the checker proves the violation.
func TestTeethInferredPositions(t *testing.T) {
	bad := History{Ops: []Op{
		{Client: 1, Key: "x", Kind: Write, Value: "x1", Found: true, Outcome: Unknown, Call: 0, Return: Never},
		{Client: 2, Key: "y", Kind: Write, Value: "y1", Found: true, Outcome: Unknown, Call: 0, Return: Never},
		{Client: 3, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(5)},
		{Client: 3, Key: "y", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(5)},
		{Client: 4, Key: "y", Kind: Read, Value: "y1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(9)},
		{Client: 4, Key: "x", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(9)},
	}}
	if r := Sequential(bad, 0); r.Verdict != Violation {
		t.Fatalf("IRIW with inferred positions: Sequential = %v (%s); want a violation", r.Verdict, r.How)
	}
	// The same history with the second reader agreeing on the order is SC,
	// and the inferred positions are its witness.
	good := bad
	good.Ops = append([]Op(nil), bad.Ops...)
	good.Ops[5].Found, good.Ops[5].Value = true, "x1"
	if r := Sequential(good, 0); r.Verdict != Pass || r.How != "positions" {
		t.Fatalf("agreeing readers with inferred positions: Sequential = %v by %q; want a pass by positions", r.Verdict, r.How)
	}
}
