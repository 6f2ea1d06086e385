package check

import "sort"

// SequentialPerKey checks sequential consistency of each key on its own:
// for every key, some order of that key's operations respects every
// client's program order and register semantics. It is what a protocol
// guarantees that orders each key's writes at one place but makes them
// visible replica by replica (GlobLease, seed 003 §III.B: see
// docs/design/lease.md): weaker than Sequential, which also rules out two
// readers seeing writes of different keys in opposite orders (IRIW).
// budget bounds each key's search, as in Sequential.
func SequentialPerKey(h History, budget int) Result {
	byKey := map[string][]Op{}
	for _, op := range h.Ops {
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	undecided := Result{}
	for _, k := range keys {
		sub := History{Ops: byKey[k]}
		if v, ok := h.Init[k]; ok {
			sub.Init = map[string]string{k: v}
		}
		r := Sequential(sub, budget)
		r.Model = "sequential-per-key"
		switch r.Verdict {
		case Violation:
			if r.Key == "" {
				r.Key = k
			}
			return r
		case Undecided:
			if undecided.Verdict == 0 {
				undecided = r
				undecided.Key = k
			}
		}
	}
	if undecided.Verdict != 0 {
		return undecided
	}
	return Result{Model: "sequential-per-key", Verdict: Pass}
}
