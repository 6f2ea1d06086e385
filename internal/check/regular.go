package check

import (
	"fmt"
	"math"
	"sort"
)

// Regular checks that every key behaves as a multi-writer regular register.
// A read r may return
//
//   - the key's initial value, only if no write of the key completed before
//     r began (no OK write w' with w'.Return < r.Call), or
//   - the value of a write w (put, or delete for an absent read) with
//     w.Call <= r.Return that was not overwritten in real time before r
//     began: there is no OK write w' with w.Return < w'.Call and
//     w'.Return < r.Call.
//
// Unknown writes never complete (Return = Never), so they can be read from
// any time after their Call and never overwrite anything. Times are compared
// as closed intervals like porcupine's (an operation ending at t is
// concurrent with one starting at t), so every linearizable history passes.
// The check is exact (sound and complete) and runs in O(n log n).
func Regular(h History) Result {
	return readRule(h, "regular", true)
}

// ValidReads checks that every read returns the key's initial value or the
// value of some write of the key (a delete, for an absent read) whose Call is
// at or before the read's Return: no out-of-thin-air values and no values
// from the future. Exact and O(n log n).
func ValidReads(h History) Result {
	return readRule(h, "valid-reads", false)
}

// readRule checks every read against the candidates allowed by the model.
// regular=false: only w.Call <= r.Return and any initial value.
func readRule(h History, model string, regular bool) Result {
	res := Result{Model: model, Verdict: Pass}
	perKey, keys := byKey(effective(h, false))
	for _, k := range keys {
		ops := perKey[k]
		var writes []Op // completed (OK) writes, sorted by Return
		for _, o := range ops {
			if o.Kind == Write && o.Outcome == OK {
				writes = append(writes, o)
			}
		}
		sort.SliceStable(writes, func(i, j int) bool { return writes[i].Return < writes[j].Return })
		// maxCall[i] = the largest Call among writes[:i+1].
		maxCall := make([]int64, len(writes))
		for i, w := range writes {
			maxCall[i] = w.Call
			if i > 0 && maxCall[i-1] > w.Call {
				maxCall[i] = maxCall[i-1]
			}
		}
		// A write w is overwritten before r began iff w.Return < bar(r),
		// where bar(r) = max Call of the OK writes that returned before r.Call.
		bar := func(r Op) (int64, bool) {
			n := sort.Search(len(writes), func(i int) bool { return writes[i].Return >= r.Call })
			if n == 0 {
				return math.MinInt64, false
			}
			return maxCall[n-1], true
		}
		// Writes of each value (a delete writes "absent").
		type val struct {
			found bool
			value string
		}
		byVal := make(map[val][]Op)
		for _, o := range ops {
			if o.Kind == Write {
				v := val{o.Found, o.Value}
				if !o.Found {
					v.value = ""
				}
				byVal[v] = append(byVal[v], o)
			}
		}
		iv, iok := initValue(h, k)
		for _, r := range ops {
			if r.Kind != Read {
				continue
			}
			b, completedBefore := bar(r)
			if sameValue(r.Found, r.Value, iok, iv) && (!regular || !completedBefore) {
				continue // the initial value
			}
			v := val{r.Found, r.Value}
			if !r.Found {
				v.value = ""
			}
			cands := byVal[v]
			ok := false
			for _, w := range cands {
				if w.Call <= r.Return && (!regular || w.Return >= b) {
					ok = true
					break
				}
			}
			if ok {
				continue
			}
			res.Verdict = Violation
			res.Key = k
			res.Detail = explainRead(h, k, r, cands, writes, b, completedBefore, iok, iv, regular)
			return res
		}
	}
	return res
}

func explainRead(h History, k string, r Op, cands, writes []Op, bar int64, completedBefore, iok bool, iv string, regular bool) string {
	d := "read " + FormatOp(r)
	overwritten := false
	if len(cands) == 0 {
		if sameValue(r.Found, r.Value, iok, iv) {
			overwritten = true
			d += fmt.Sprintf(" returned the initial value (%s), but a write completed before it began", fmtInit(h, k))
		} else {
			d += fmt.Sprintf(" returned a value no write wrote (%s)", fmtInit(h, k))
		}
	} else {
		var future, stale []Op
		for _, w := range cands {
			if w.Call > r.Return {
				future = append(future, w)
			} else {
				stale = append(stale, w)
			}
		}
		if len(stale) == 0 {
			d += " returned a value written only after it returned: " + fmtOps(future, 2)
		} else {
			overwritten = true
			d += " returned a value overwritten before it began: " + fmtOps(stale, 2)
		}
	}
	if regular && completedBefore && overwritten {
		// Name the overwriting write: a completed write with Call == bar.
		for _, w := range writes {
			if w.Call == bar && w.Return < r.Call {
				d += "; overwritten by " + FormatOp(w)
				break
			}
		}
	}
	return d
}
