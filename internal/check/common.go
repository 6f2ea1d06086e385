package check

import (
	"fmt"
	"sort"
	"strings"
)

// String renders a result as "model: verdict" plus, for a violation, the key
// and the explanation.
func (r Result) String() string {
	var b strings.Builder
	if r.Model != "" {
		b.WriteString(r.Model)
		b.WriteString(": ")
	}
	b.WriteString(r.Verdict.String())
	if r.Key != "" {
		fmt.Fprintf(&b, " (key %q)", r.Key)
	}
	if r.Detail != "" {
		b.WriteString(": ")
		b.WriteString(r.Detail)
	}
	return b.String()
}

// fmtTime renders a time in ns as milliseconds.
func fmtTime(t int64) string {
	if t == Never {
		return "?"
	}
	return fmt.Sprintf("%.3fms", float64(t)/1e6)
}

// FormatOp renders an operation for a violation report, e.g.
// `c3 W("x")="v7" [1.000ms, 2.500ms]`, `c4 R("x")=absent [...]`,
// `c5 DEL("x") [3.000ms, ?]` (an unknown outcome).
func FormatOp(o Op) string {
	var s string
	switch {
	case o.Kind == CondWrite:
		expect, write := "absent", "absent"
		if o.ExpectFound {
			expect = fmt.Sprintf("%q", o.Expect)
		}
		if o.Found {
			write = fmt.Sprintf("%q", o.Value)
		}
		s = fmt.Sprintf("c%d CAS(%q, %s→%s)", o.Client, o.Key, expect, write)
		if o.Conflict {
			s += "=conflict"
		}
	case o.Kind == Write && o.Found:
		s = fmt.Sprintf("c%d W(%q)=%q", o.Client, o.Key, o.Value)
	case o.Kind == Write:
		s = fmt.Sprintf("c%d DEL(%q)", o.Client, o.Key)
	case o.Found:
		s = fmt.Sprintf("c%d R(%q)=%q", o.Client, o.Key, o.Value)
	default:
		s = fmt.Sprintf("c%d R(%q)=absent", o.Client, o.Key)
	}
	ret := o.Return
	if o.Outcome == Unknown {
		ret = Never
	}
	s += fmt.Sprintf(" [%s, %s]", fmtTime(o.Call), fmtTime(ret))
	if o.Outcome == Unknown {
		s += " (unknown outcome)"
	}
	return s
}

// fmtOps renders up to max operations, noting how many were left out.
func fmtOps(ops []Op, max int) string {
	var parts []string
	for i, o := range ops {
		if i == max {
			parts = append(parts, fmt.Sprintf("... and %d more", len(ops)-max))
			break
		}
		parts = append(parts, FormatOp(o))
	}
	return strings.Join(parts, "; ")
}

// effective returns the operations a checker must consider: Failed
// operations and reads without an OK outcome are dropped; Unknown writes get
// Return = Never. The result keeps the history's order.
// Conditional writes are kept only if conds is set; otherwise those that
// did not conflict are Writes and conflicts are dropped.
func effective(h History, conds bool) []Op {
	out := make([]Op, 0, len(h.Ops))
	for _, o := range h.Ops {
		if o.Kind == CondWrite && !conds {
			if o.Conflict {
				continue
			}
			o.Kind = Write
		}
		switch {
		case o.Outcome == Failed:
			continue
		case o.Kind == Read && o.Outcome != OK:
			continue // a read with no answer constrains nothing
		case o.Kind == CondWrite && o.Conflict && o.Outcome != OK:
			continue // a conflict is an answer: without one it is an unknown write
		case o.Kind != Read && o.Kind != Write && o.Kind != CondWrite:
			continue
		}
		if o.Outcome == Unknown {
			o.Return = Never
		}
		out = append(out, o)
	}
	return out
}

// initValue returns a key's initial value.
func initValue(h History, key string) (string, bool) {
	v, ok := h.Init[key]
	return v, ok
}

// sameValue reports whether a read's result equals what a write wrote (or the
// initial value, given as v/found).
func sameValue(aFound bool, aValue string, bFound bool, bValue string) bool {
	if aFound != bFound {
		return false
	}
	return !aFound || aValue == bValue
}

// byKey groups operations by key and returns the keys sorted.
func byKey(ops []Op) (map[string][]Op, []string) {
	m := make(map[string][]Op)
	for _, o := range ops {
		m[o.Key] = append(m[o.Key], o)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys
}

func fmtInit(h History, key string) string {
	if v, ok := initValue(h, key); ok {
		return fmt.Sprintf("initial value %q", v)
	}
	return "initially absent"
}
