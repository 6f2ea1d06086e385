package check

import (
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// regInput is a porcupine operation input on one key.
type regInput struct {
	key   string
	write bool
	found bool   // write: put (true) or delete (false)
	value string // write: value written
	// cond: a conditional write, applied only if the register holds
	// expFound/expValue.
	cond     bool
	expFound bool
	expValue string
}

// regOutput is a read's result, or a conditional write's (conflict: it
// reported that the condition failed; unknown: no answer came); plain
// writes have none.
type regOutput struct {
	found    bool
	value    string
	conflict bool
	unknown  bool
}

// regState is the value of one register. The zero state means "the key's
// initial value" (from History.Init), resolved on the first step; this lets
// one per-partition Init serve every key.
type regState struct {
	set   bool
	found bool
	value string
}

func registerModel(h History) porcupine.Model {
	resolve := func(s regState, key string) regState {
		if s.set {
			return s
		}
		v, ok := initValue(h, key)
		return regState{set: true, found: ok, value: v}
	}
	partition := func(history []porcupine.Operation) [][]porcupine.Operation {
		m := make(map[string][]porcupine.Operation)
		for _, op := range history {
			k := op.Input.(regInput).key
			m[k] = append(m[k], op)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, m[k])
		}
		return out
	}
	partitionEvent := func(history []porcupine.Event) [][]porcupine.Event {
		m := make(map[string][]porcupine.Event)
		keyOf := make(map[int]string)
		for _, ev := range history {
			if ev.Kind == porcupine.CallEvent {
				keyOf[ev.Id] = ev.Value.(regInput).key
			}
		}
		for _, ev := range history {
			k := keyOf[ev.Id]
			m[k] = append(m[k], ev)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Event, 0, len(keys))
		for _, k := range keys {
			out = append(out, m[k])
		}
		return out
	}
	return porcupine.Model{
		Partition:      partition,
		PartitionEvent: partitionEvent,
		Init:           func() interface{} { return regState{} },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			in := input.(regInput)
			st := resolve(state.(regState), in.key)
			if in.cond {
				out := output.(regOutput)
				holds := sameValue(in.expFound, in.expValue, st.found, st.value)
				switch {
				case out.unknown && !holds:
					return true, st // placed where it fails: no effect
				case out.conflict:
					return !holds, st
				case !holds:
					return false, st
				}
				return true, regState{set: true, found: in.found, value: in.value}
			}
			if in.write {
				return true, regState{set: true, found: in.found, value: in.value}
			}
			out := output.(regOutput)
			return sameValue(out.found, out.value, st.found, st.value), st
		},
		Equal: func(a, b interface{}) bool { return a.(regState) == b.(regState) },
		Hash: func(state interface{}) uint64 {
			s := state.(regState)
			f := fnv.New64a()
			if s.set {
				f.Write([]byte{1})
			}
			if s.found {
				f.Write([]byte{1})
				f.Write([]byte(s.value))
			}
			return f.Sum64()
		},
		DescribeOperation: func(input, output interface{}) string {
			in := input.(regInput)
			if in.cond {
				expect, write := "absent", "absent"
				if in.expFound {
					expect = fmt.Sprintf("%q", in.expValue)
				}
				if in.found {
					write = fmt.Sprintf("%q", in.value)
				}
				out := output.(regOutput)
				res := "ok"
				if out.conflict {
					res = "conflict"
				} else if out.unknown {
					res = "unknown"
				}
				return fmt.Sprintf("cas(%q, %s→%s) -> %s", in.key, expect, write, res)
			}
			switch {
			case in.write && in.found:
				return fmt.Sprintf("put(%q, %q)", in.key, in.value)
			case in.write:
				return fmt.Sprintf("delete(%q)", in.key)
			}
			out := output.(regOutput)
			if !out.found {
				return fmt.Sprintf("get(%q) -> absent", in.key)
			}
			return fmt.Sprintf("get(%q) -> %q", in.key, out.value)
		},
		DescribeState: func(state interface{}) string {
			s := state.(regState)
			switch {
			case !s.set:
				return "(initial)"
			case !s.found:
				return "absent"
			}
			return fmt.Sprintf("%q", s.value)
		},
		DescribeOperationMetadata: func(info interface{}) string {
			if info == nil {
				return ""
			}
			return fmt.Sprint(info)
		},
	}
}

// porcupineOps converts the effective operations of h to porcupine's form
// (clients renumbered densely from 0 in sorted order; unknown writes pending
// with Return = MaxInt64).
func porcupineOps(ops []Op) []porcupine.Operation {
	ids := make(map[int64]int)
	var clients []int64
	for _, o := range ops {
		if _, ok := ids[o.Client]; !ok {
			ids[o.Client] = 0
			clients = append(clients, o.Client)
		}
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i] < clients[j] })
	for i, c := range clients {
		ids[c] = i
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, o := range ops {
		in := regInput{key: o.Key, write: o.Kind != Read, found: o.Found, value: o.Value,
			cond: o.Kind == CondWrite, expFound: o.ExpectFound, expValue: o.Expect}
		var outp interface{}
		switch o.Kind {
		case Read:
			outp = regOutput{found: o.Found, value: o.Value}
		case CondWrite:
			outp = regOutput{conflict: o.Conflict, unknown: o.Outcome == Unknown}
		}
		out = append(out, porcupine.Operation{
			ClientId: ids[o.Client],
			Input:    in,
			Call:     o.Call,
			Output:   outp,
			Return:   o.Return, // Never == math.MaxInt64 for unknown writes
			Metadata: FormatOp(o),
		})
	}
	return out
}

// Linearizable checks that h is linearizable as a map of independent
// registers (one per key), using porcupine with per-key partitioning.
// Failed operations are dropped; Unknown writes are pending (they may take
// effect at any point after their Call, or never). A timeout of 0 means none;
// running out of time yields Undecided.
func Linearizable(h History, timeout time.Duration) Result {
	res := Result{Model: "linearizable"}
	ops := effective(h, true)
	model := registerModel(h)
	start := time.Now()
	switch porcupine.CheckOperationsTimeout(model, porcupineOps(ops), timeout) {
	case porcupine.Ok:
		res.Verdict = Pass
		return res
	case porcupine.Unknown:
		res.Verdict = Undecided
		res.Detail = fmt.Sprintf("porcupine timed out after %v", timeout)
		return res
	}
	// Illegal: find the first failing key (in sorted order) deterministically
	// and explain it.
	res.Verdict = Violation
	perKey, keys := byKey(ops)
	for _, k := range keys {
		var left time.Duration
		if timeout > 0 {
			left = timeout - time.Since(start)
			if left <= 0 {
				left = time.Millisecond
			}
		}
		kops := perKey[k]
		r, info := porcupine.CheckOperationsVerbose(model, porcupineOps(kops), left)
		if r != porcupine.Illegal {
			continue
		}
		res.Key = k
		res.Detail = explainLinearizability(h, k, kops, info)
		return res
	}
	res.Detail = "porcupine found the history not linearizable (the offending key could not be isolated in time)"
	return res
}

// explainLinearizability names the operations around the first operation of
// key k that fits in no linearizable prefix.
func explainLinearizability(h History, k string, kops []Op, info porcupine.LinearizationInfo) string {
	in := make([]bool, len(kops))
	longest := 0
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > longest {
				longest = len(lin)
			}
			for _, id := range lin {
				if id >= 0 && id < len(in) {
					in[id] = true
				}
			}
		}
	}
	order := make([]int, len(kops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return kops[order[a]].Call < kops[order[b]].Call })
	// The first operation (by Call) that no partial linearization includes.
	bad := -1
	for _, i := range order {
		if !in[i] {
			bad = i
			break
		}
	}
	detail := fmt.Sprintf("no linearization of the %d operations on this key (%s); longest linearizable prefix: %d ops",
		len(kops), fmtInit(h, k), longest)
	if bad < 0 {
		return detail
	}
	b := kops[bad]
	detail += "; cannot place " + FormatOp(b)
	// Context: the write(s) of the value it read, and the operations
	// overlapping or closest before it in time.
	var ctx []Op
	if b.Kind == Read {
		for _, o := range kops {
			if (o.Kind == Write || o.Kind == CondWrite && !o.Conflict) && sameValue(o.Found, o.Value, b.Found, b.Value) {
				ctx = append(ctx, o)
				if len(ctx) == 2 {
					break
				}
			}
		}
	}
	var near []int
	for _, i := range order {
		if i != bad && kops[i].Call <= b.Return && kops[i].Return >= b.Call {
			near = append(near, i) // concurrent with b
		}
	}
	// The latest operations that completed before b began.
	var before []int
	for _, i := range order {
		if kops[i].Return < b.Call {
			before = append(before, i)
		}
	}
	sort.SliceStable(before, func(a, c int) bool { return kops[before[a]].Return > kops[before[c]].Return })
	if len(before) > 3 {
		before = before[:3]
	}
	seen := make(map[Op]bool)
	for _, o := range ctx {
		seen[o] = true
	}
	var rest []Op
	for _, i := range append(before, near...) {
		if !seen[kops[i]] {
			seen[kops[i]] = true
			rest = append(rest, kops[i])
		}
	}
	sort.SliceStable(rest, func(a, c int) bool { return rest[a].Call < rest[c].Call })
	if len(ctx) > 0 {
		detail += "; it read the value of: " + fmtOps(ctx, 2)
	} else if b.Kind == Read && b.Found {
		detail += "; no operation wrote that value"
	} else if b.Kind == Read {
		detail += "; no delete of the key explains it"
	}
	if len(rest) > 0 {
		detail += "; related operations: " + fmtOps(rest, 6)
	}
	return detail
}

// LinearizableVisual checks h for linearizability and writes porcupine's
// interactive HTML visualization of the check (per key: the operations and
// the longest partial linearizations) to path. Meant for debugging a failing
// history; the check is limited to one minute.
func LinearizableVisual(h History, path string) error {
	model := registerModel(h)
	_, info := porcupine.CheckOperationsVerbose(model, porcupineOps(effective(h, true)), time.Minute)
	return porcupine.VisualizePath(model, info, path)
}
