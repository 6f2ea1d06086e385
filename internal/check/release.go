package check

import (
	"fmt"
	"sort"
)

// ReleaseConsistent checks release consistency as protocol rc states it
// (seed 002, thesis §4.3): every read a client makes while it holds a key
// (after an OK Acquire of the key, before its next Release of it) sees
// every write of the key released before that Acquire began. A write w of
// client c is released when c's next Release of the key after w returned
// OK; it is released before a read r's hold when that Release returned
// before the hold's Acquire was called. The read must return the initial
// value only if no write was released before its hold, and otherwise the
// value of a write (a delete for absent) that was not overwritten in real
// time by a write released before its hold: no such write w' with
// w.Return < w'.Call. Reads outside a hold, failed operations and writes
// whose release did not return OK constrain nothing beyond valid reads
// (the value was written, with Call <= the read's Return). Exact,
// O(n log n) per key.
func ReleaseConsistent(h History) Result {
	res := Result{Model: "release", Verdict: Pass}
	if v := ValidReads(h); v.Verdict != Pass {
		v.Model = res.Model
		return v
	}
	type ck struct {
		c int64
		k string
	}
	// Program order per (client, key): ops sorted by Call.
	byCK := map[ck][]Op{}
	var order []ck
	for _, o := range h.Ops {
		if o.Outcome == Failed && o.Kind != Write {
			continue
		}
		id := ck{o.Client, o.Key}
		if _, ok := byCK[id]; !ok {
			order = append(order, id)
		}
		byCK[id] = append(byCK[id], o)
	}
	type released struct {
		w   Op
		rel int64 // return of the releasing Release
	}
	type heldRead struct {
		r   Op
		acq int64 // call of the hold's Acquire
	}
	rels := map[string][]released{}
	reads := map[string][]heldRead{}
	for _, id := range order {
		ops := byCK[id]
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
		holding, acq := false, int64(0)
		var pending []Op // OK writes not yet released
		for _, o := range ops {
			switch o.Kind {
			case Acquire:
				if o.Outcome == OK {
					holding, acq = true, o.Call
				}
			case Release:
				if o.Outcome == OK {
					for _, w := range pending {
						rels[id.k] = append(rels[id.k], released{w, o.Return})
					}
				}
				pending, holding = pending[:0], false
			case Write:
				if o.Outcome == OK {
					pending = append(pending, o)
				}
			case Read:
				if holding && o.Outcome == OK {
					reads[id.k] = append(reads[id.k], heldRead{o, acq})
				}
			}
		}
	}
	// Every write of each key, by the value it wrote.
	type val struct {
		found bool
		value string
	}
	writesOf := map[string]map[val][]Op{}
	for _, o := range h.Ops {
		if o.Kind != Write || o.Outcome == Failed {
			continue
		}
		if writesOf[o.Key] == nil {
			writesOf[o.Key] = map[val][]Op{}
		}
		v := val{o.Found, o.Value}
		if !o.Found {
			v.value = ""
		}
		if o.Outcome == Unknown {
			o.Return = Never
		}
		writesOf[o.Key][v] = append(writesOf[o.Key][v], o)
	}
	keys := make([]string, 0, len(reads))
	for k := range reads {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rs := rels[k]
		sort.Slice(rs, func(i, j int) bool { return rs[i].rel < rs[j].rel })
		// maxCall[i]: the latest Call among rs[:i+1], and the write.
		maxCall := make([]int, len(rs))
		for i := range rs {
			maxCall[i] = i
			if i > 0 && rs[maxCall[i-1]].w.Call > rs[i].w.Call {
				maxCall[i] = maxCall[i-1]
			}
		}
		hr := reads[k]
		sort.SliceStable(hr, func(i, j int) bool { return hr[i].r.Call < hr[j].r.Call })
		for _, x := range hr {
			r := x.r
			n := sort.Search(len(rs), func(i int) bool { return rs[i].rel >= x.acq })
			v := val{r.Found, r.Value}
			if !r.Found {
				v.value = ""
			}
			iv, hasInit := initValue(h, k)
			isInit := (hasInit && r.Found && r.Value == iv) || (!hasInit && !r.Found)
			var latest *Op
			if n > 0 {
				latest = &rs[maxCall[n-1]].w
			}
			ok := false
			if isInit && latest == nil {
				ok = true
			}
			for _, w := range writesOf[k][v] {
				if w.Call <= r.Return && (latest == nil || w.Return >= latest.Call) {
					ok = true
					break
				}
			}
			if !ok {
				res.Verdict, res.Key = Violation, k
				if latest != nil {
					res.Detail = fmt.Sprintf("read %s in a hold acquired at %s missed %s, released before the acquire",
						FormatOp(r), fmtTime(x.acq), FormatOp(*latest))
				} else {
					res.Detail = fmt.Sprintf("read %s in a hold acquired at %s returned a value never written (%s)",
						FormatOp(r), fmtTime(x.acq), fmtInit(h, k))
				}
				return res
			}
		}
	}
	return res
}
