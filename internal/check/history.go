package check

import (
	"cmp"
	"math"
)

// Kind is the kind of a recorded operation.
type Kind uint8

const (
	Read  Kind = iota + 1 // a get; Value/Found are what it returned
	Write                 // a put (Found=true, Value written) or delete (Found=false)
	// Acquire and Release bracket a client's accesses to Key under release
	// consistency (model "release"); the other models ignore them.
	Acquire
	Release
	// CondWrite is a conditional write: it writes Value/Found (a put or a
	// delete) only if the key's value is then Expect/ExpectFound (an
	// expected version, named by the value its write wrote). Conflict: it
	// answered that the condition failed — an OK outcome that wrote
	// nothing. Linearizable checks both outcomes; the other checkers see a
	// conditional write that did not conflict as a Write and ignore
	// conflicts.
	CondWrite
)

// Outcome says whether an operation took effect.
type Outcome uint8

const (
	// OK: the operation completed; a read's result is in Value/Found.
	OK Outcome = iota + 1
	// Unknown: a write whose reply never came or reported an unknown outcome;
	// it may have taken effect at any time after Call. Its Return is Never.
	Unknown
	// Failed: the operation definitely did not take effect; checkers ignore it.
	Failed
)

// Never is the Return time of an operation with an unknown outcome.
const Never int64 = math.MaxInt64

// Op is one client operation on one key, as the client saw it.
type Op struct {
	Client  int64  // the session: ops of one Client are in program order (by Call)
	Key     string //
	Kind    Kind   //
	Value   string // written value, or value read; writes of a history carry unique values
	Found   bool   // false: a delete, or a read that found no value
	Call    int64  // true (simulated) time the client sent the request, ns
	Return  int64  // true time the client received the reply, ns; Never if unknown
	Outcome Outcome
	// Pos, if set, is where the system says the operation took effect in
	// its total order (a write's version; a read's view time). Sequential
	// tries the order of positions as a witness before searching; a wrong
	// position can only cost time, never change a verdict.
	Pos Position
	// Expect, ExpectFound and Conflict describe a CondWrite (see Kind).
	Expect      string
	ExpectFound bool
	Conflict    bool
}

// Position is an operation's place in a system's claimed total order:
// ordered by T, then Sub, then Node. A read placed at time T is after every
// write at T: give it Sub and Node math.MaxInt64.
type Position struct {
	Set          bool
	T, Sub, Node int64
}

// Compare orders positions (unset ones last).
func (p Position) Compare(q Position) int {
	switch {
	case p.Set != q.Set:
		if p.Set {
			return -1
		}
		return 1
	case p.T != q.T:
		return cmp.Compare(p.T, q.T)
	case p.Sub != q.Sub:
		return cmp.Compare(p.Sub, q.Sub)
	}
	return cmp.Compare(p.Node, q.Node)
}

// History is a set of operations plus the initial state of the keys.
// Keys absent from Init start with no value.
type History struct {
	Init map[string]string
	Ops  []Op
}

// Verdict is a checker's conclusion.
type Verdict uint8

const (
	Pass      Verdict = iota + 1 // the history satisfies the model
	Violation                    // it does not; Result.Detail says where
	Undecided                    // the checker ran out of its budget
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Violation:
		return "violation"
	case Undecided:
		return "undecided"
	}
	return "verdict(?)"
}

// Result is a checker's verdict with an explanation of a violation.
type Result struct {
	Model   string // "linearizable", "sequential", "regular", "valid-reads"
	Verdict Verdict
	Key     string // the key where a per-key violation was found
	Detail  string // human-readable explanation (the operations involved)
	// How says how Sequential decided, for measurements: "positions" (the
	// order the system reported), "linearizations" (per-key
	// linearizations merged), "search" (the witness search), "graph" (a
	// cycle of necessary orderings or a read of a value never written), or
	// "budget" (undecided: the search ran out of steps).
	How string
	// Anomalies names what Serializable found, Elle-style ("G0", "G1a",
	// "G1c", "G2", "lost-update", "value-mismatch", ...), in a fixed
	// order; empty on a Pass and for the other checkers.
	Anomalies []string
}
