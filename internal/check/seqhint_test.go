package check

import (
	"math"
	"testing"
)

func TestSequentialPositionWitness(t *testing.T) {
	at := func(ts int64) Position { return Position{Set: true, T: ts} }
	readAt := func(ts int64) Position { return Position{Set: true, T: ts, Sub: math.MaxInt64, Node: math.MaxInt64} }
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
		{Client: 3, Key: "x", Kind: Read, Value: "x1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(9)},
		{Client: 3, Key: "y", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(9)},
		{Client: 4, Key: "y", Kind: Read, Value: "y1", Found: true, Outcome: OK, Call: 20, Return: 30, Pos: readAt(9)},
		{Client: 4, Key: "x", Kind: Read, Found: false, Outcome: OK, Call: 30, Return: 40, Pos: readAt(9)},
	}}
	if r := Sequential(bad, 0); r.Verdict != Violation {
		t.Fatalf("IRIW with claimed positions: Sequential = %v; want a violation", r.Verdict)
	}
	// A mandatory op without a position: no witness from positions.
	h.Ops[0].Pos = Position{}
	s = newSeq(h)
	s.readsFrom()
	s.buildGraph()
	if s.positionWitness() != nil {
		t.Fatal("a position witness with an unplaced write")
	}
}
