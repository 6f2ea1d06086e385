package check

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Sequential checks h for sequential consistency (Lamport 1979) over the
// whole store: some total order of all non-failed operations, across all
// keys, respects every client's program order, and in it each read returns
// the value of the latest preceding write of its key (or the initial value).
// Real time is ignored. An Unknown write may be left out of the order, unless
// a read observes its value.
//
// budget bounds the witness search (in operation placements, backtracking
// included); budget <= 0 means DefaultBudget. Verdicts:
//   - Violation from the read-from analysis or a cycle in the saturated
//     ordering graph, or after an exhaustive search: a proof (sound).
//   - Pass with a replayed witness order: a proof (sound).
//   - Undecided when the budget ran out (SC checking is NP-complete).
func Sequential(h History, budget int) Result {
	if budget <= 0 {
		budget = DefaultBudget
	}
	s := newSeq(h)
	if r, bad := s.readsFrom(); bad {
		r.How = "graph"
		return r
	}
	s.buildGraph()
	// The order the system reports, if any, first: replaying it is linear,
	// while saturating costs up to 64 passes over ops × clients.
	if w := s.positionWitness(); w != nil && s.replay(w) == "" {
		return Result{Model: "sequential", Verdict: Pass, How: "positions"}
	}
	if r, bad := s.saturate(); bad {
		r.How = "graph"
		return r
	}
	if w := s.linearizationWitness(); w != nil && s.replay(w) == "" {
		return Result{Model: "sequential", Verdict: Pass, How: "linearizations"}
	}
	return s.search(budget)
}

// DefaultBudget is the witness-search budget used when none is given.
const DefaultBudget = 2_000_000

// Edge kinds of the ordering graph, for explanations.
type edgeKind uint8

const (
	ePO   edgeKind = iota + 1 // program order
	eRF                       // a write before the read that reads it
	eInit                     // a read of the initial value before a write of the key
	eWW                       // derived: w' precedes w since w' precedes a read of w
	eFR                       // derived: r precedes w' since w (read by r) precedes w'
)

func (e edgeKind) String() string {
	switch e {
	case ePO:
		return "po"
	case eRF:
		return "rf"
	case eInit:
		return "init-read before write"
	case eWW:
		return "ww"
	case eFR:
		return "fr"
	}
	return "?"
}

const (
	srcAmbiguous = -1 // a read that more than one write (or Init) could explain
	srcInit      = -2 // a read of the initial value
)

type seq struct {
	h   History
	ops []Op // effective operations

	active   []bool  // false: an unobserved Unknown write, left out
	optional []bool  // an Unknown write the search may place or leave out
	client   []int32 // dense client id
	pos      []int32 // position in the client's chain
	chains   [][]int32
	key      []int32 // dense key id
	keys     []string
	val      []int32 // value id: 0 = absent
	initVal  []int32 // per key
	src      []int32 // reads: write index, srcInit or srcAmbiguous
	prio     []int64 // search priority of writes

	// mandatory writes per key, per client (sorted by pos), clients sorted
	kcw [][]clientWrites

	succ  [][]int32
	preds [][]int32
	edges map[[2]int32]edgeKind
}

type clientWrites struct {
	client int32
	ws     []int32
}

func newSeq(h History) *seq {
	s := &seq{h: h, ops: effective(h, false)}
	n := len(s.ops)
	s.active = make([]bool, n)
	s.optional = make([]bool, n)
	s.client = make([]int32, n)
	s.pos = make([]int32, n)
	s.key = make([]int32, n)
	s.val = make([]int32, n)
	s.src = make([]int32, n)
	s.prio = make([]int64, n)
	// Dense keys in sorted order.
	keySet := make(map[string]int32)
	for _, o := range s.ops {
		keySet[o.Key] = 0
	}
	for k := range keySet {
		s.keys = append(s.keys, k)
	}
	sort.Strings(s.keys)
	for i, k := range s.keys {
		keySet[k] = int32(i)
	}
	// Value ids (0 = absent), in order of first appearance in the history.
	vals := make(map[string]int32)
	vid := func(found bool, v string) int32 {
		if !found {
			return 0
		}
		id, ok := vals[v]
		if !ok {
			id = int32(len(vals) + 1)
			vals[v] = id
		}
		return id
	}
	s.initVal = make([]int32, len(s.keys))
	for i, k := range s.keys {
		v, ok := initValue(h, k)
		s.initVal[i] = vid(ok, v)
	}
	for i, o := range s.ops {
		s.key[i] = keySet[o.Key]
		s.val[i] = vid(o.Found, o.Value)
		s.active[i] = true
	}
	return s
}

func (s *seq) isRead(i int32) bool { return s.ops[i].Kind == Read }

// readsFrom resolves each read's source write and decides which Unknown
// writes take part; a read that nothing could explain is a violation.
func (s *seq) readsFrom() (Result, bool) {
	type kv struct{ k, v int32 }
	writer := make(map[kv]int32) // (key, value) -> write; -1 if several
	deletes := make([][]int32, len(s.keys))
	for i := range s.ops {
		i := int32(i)
		if s.isRead(i) {
			continue
		}
		if s.val[i] == 0 {
			deletes[s.key[i]] = append(deletes[s.key[i]], i)
			continue
		}
		if _, dup := writer[kv{s.key[i], s.val[i]}]; dup {
			writer[kv{s.key[i], s.val[i]}] = -1
		} else {
			writer[kv{s.key[i], s.val[i]}] = i
		}
	}
	uniquelyRead := make([]bool, len(s.ops))
	maybeRead := make([]bool, len(s.ops))
	for i := range s.ops {
		r := int32(i)
		if !s.isRead(r) {
			continue
		}
		k, v := s.key[r], s.val[r]
		initOK := s.initVal[k] == v
		var cands []int32
		if v == 0 {
			cands = deletes[k]
		} else if w, ok := writer[kv{k, v}]; ok {
			if w >= 0 {
				cands = []int32{w}
			} else {
				for j := range s.ops { // duplicate values: all its writers
					if !s.isRead(int32(j)) && s.key[j] == k && s.val[j] == v {
						cands = append(cands, int32(j))
					}
				}
			}
		}
		switch {
		case len(cands) == 0 && !initOK:
			what := "a value no operation wrote"
			if v == 0 {
				what = "absent, but the key was never deleted"
			}
			return Result{Model: "sequential", Verdict: Violation, Key: s.ops[r].Key,
				Detail: fmt.Sprintf("read %s returned %s (%s)", FormatOp(s.ops[r]), what, fmtInit(s.h, s.ops[r].Key))}, true
		case len(cands) == 0:
			s.src[r] = srcInit
		case len(cands) == 1 && !initOK:
			s.src[r] = cands[0]
			uniquelyRead[cands[0]] = true
		default:
			s.src[r] = srcAmbiguous
			for _, w := range cands {
				maybeRead[w] = true
			}
		}
	}
	for i, o := range s.ops {
		if o.Kind == Write && o.Outcome == Unknown && !uniquelyRead[i] {
			if maybeRead[i] {
				s.optional[i] = true
			} else {
				s.active[i] = false // unobserved: leaving it out is always allowed
			}
		}
	}
	return Result{}, false
}

// buildGraph sets up clients' chains, po, rf and init-read edges.
func (s *seq) buildGraph() {
	n := len(s.ops)
	s.succ = make([][]int32, n)
	s.preds = make([][]int32, n)
	s.edges = make(map[[2]int32]edgeKind)
	cl := make(map[int64][]int32)
	var cids []int64
	for i, o := range s.ops {
		if !s.active[i] {
			continue
		}
		if _, ok := cl[o.Client]; !ok {
			cids = append(cids, o.Client)
		}
		cl[o.Client] = append(cl[o.Client], int32(i))
	}
	sort.Slice(cids, func(a, b int) bool { return cids[a] < cids[b] })
	for c, id := range cids {
		ch := cl[id]
		sort.SliceStable(ch, func(a, b int) bool { return s.ops[ch[a]].Call < s.ops[ch[b]].Call })
		for p, i := range ch {
			s.client[i] = int32(c)
			s.pos[i] = int32(p)
			if p > 0 {
				s.addEdge(ch[p-1], i, ePO)
			}
		}
		s.chains = append(s.chains, ch)
	}
	// Mandatory writes per key and client.
	s.kcw = make([][]clientWrites, len(s.keys))
	for c, ch := range s.chains {
		for _, i := range ch {
			if s.isRead(i) || s.optional[i] {
				continue
			}
			k := s.key[i]
			l := s.kcw[k]
			if len(l) == 0 || l[len(l)-1].client != int32(c) {
				l = append(l, clientWrites{client: int32(c)})
			}
			l[len(l)-1].ws = append(l[len(l)-1].ws, i)
			s.kcw[k] = l
		}
	}
	// Priorities: a write's deadline is its Return or the earliest Return of
	// a read that reads it (as in a linearization).
	for i := range s.ops {
		s.prio[i] = s.ops[i].Return
	}
	for i := range s.ops {
		r := int32(i)
		if !s.active[r] || !s.isRead(r) {
			continue
		}
		if w := s.src[r]; w >= 0 {
			s.addEdge(w, r, eRF)
			if s.ops[r].Return < s.prio[w] {
				s.prio[w] = s.ops[r].Return
			}
		} else if w == srcInit {
			// r precedes every mandatory write of its key: the first one of
			// each client suffices.
			for _, cw := range s.kcw[s.key[r]] {
				s.addEdge(r, cw.ws[0], eInit)
			}
		}
	}
}

func (s *seq) addEdge(a, b int32, k edgeKind) bool {
	if a == b {
		return false
	}
	e := [2]int32{a, b}
	if _, ok := s.edges[e]; ok {
		return false
	}
	s.edges[e] = k
	s.succ[a] = append(s.succ[a], b)
	s.preds[b] = append(s.preds[b], a)
	return true
}

// topo returns a topological order of the active operations, or nil and a
// cycle.
func (s *seq) topo() ([]int32, []int32) {
	n := len(s.ops)
	indeg := make([]int32, n)
	for i := 0; i < n; i++ {
		for _, j := range s.succ[i] {
			indeg[j]++
		}
	}
	var order, queue []int32
	total := 0
	for i := 0; i < n; i++ {
		if s.active[i] {
			total++
			if indeg[i] == 0 {
				queue = append(queue, int32(i))
			}
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		order = append(order, v)
		for _, j := range s.succ[v] {
			indeg[j]--
			if indeg[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if len(order) == total {
		return order, nil
	}
	// Every remaining node has a remaining predecessor: walk back to a
	// repeated node, then take the shortest cycle through it.
	left := func(v int32) bool { return indeg[v] > 0 }
	var v int32 = -1
	for i := 0; i < n; i++ {
		if s.active[i] && left(int32(i)) {
			v = int32(i)
			break
		}
	}
	seen := make(map[int32]bool)
	for !seen[v] {
		seen[v] = true
		for _, p := range s.preds[v] {
			if left(p) {
				v = p
				break
			}
		}
	}
	// BFS from v back to v.
	parent := map[int32]int32{}
	q := []int32{v}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, w := range s.succ[u] {
			if !left(w) {
				continue
			}
			if w == v {
				cyc := []int32{u}
				for x := u; x != v; {
					x = parent[x]
					cyc = append(cyc, x)
				}
				for a, b := 0, len(cyc)-1; a < b; a, b = a+1, b-1 {
					cyc[a], cyc[b] = cyc[b], cyc[a]
				}
				return nil, cyc
			}
			if _, ok := parent[w]; !ok {
				parent[w] = u
				q = append(q, w)
			}
		}
	}
	return nil, []int32{v} // unreachable
}

func (s *seq) cycleResult(cyc []int32) Result {
	var b strings.Builder
	b.WriteString("no total order: the operations form a cycle of necessary orderings: ")
	max := 10
	for i, v := range cyc {
		if i == max {
			fmt.Fprintf(&b, " ... (%d more)", len(cyc)-max)
			break
		}
		b.WriteString(FormatOp(s.ops[v]))
		next := cyc[(i+1)%len(cyc)]
		fmt.Fprintf(&b, " -%s-> ", s.edges[[2]int32{v, next}])
	}
	if len(cyc) <= max {
		b.WriteString("(back to the first)")
	}
	r := Result{Model: "sequential", Verdict: Violation, Detail: b.String()}
	// Report the key if the cycle involves just one.
	k := s.ops[cyc[0]].Key
	for _, v := range cyc {
		if s.ops[v].Key != k {
			k = ""
			break
		}
	}
	r.Key = k
	return r
}

// saturate adds the orderings every witness must have until a fixpoint (or
// a bounded number of rounds): for a read r of write w and another mandatory
// write w' of the key, w' ->* r implies w' -> w, and w ->* w' implies r -> w'.
// Reachability uses per-client frontiers: reach[v][c] is the lowest position
// on client c reachable from v (program order makes the rest reachable too).
func (s *seq) saturate() (Result, bool) {
	C := len(s.chains)
	n := len(s.ops)
	const inf = math.MaxInt32
	var reach []int32
	can := func(a, b int32) bool { return reach[int(a)*C+int(s.client[b])] <= s.pos[b] }
	// Guard memory: n*C int32s.
	doReach := int64(n)*int64(C) <= 64<<20
	for round := 0; ; round++ {
		order, cyc := s.topo()
		if cyc != nil {
			return s.cycleResult(cyc), true
		}
		if !doReach || round >= 64 {
			return Result{}, false
		}
		if reach == nil {
			reach = make([]int32, n*C)
		}
		for i := len(order) - 1; i >= 0; i-- {
			v := order[i]
			row := reach[int(v)*C : int(v)*C+C]
			for c := range row {
				row[c] = inf
			}
			row[s.client[v]] = s.pos[v]
			for _, w := range s.succ[v] {
				wr := reach[int(w)*C : int(w)*C+C]
				for c, x := range wr {
					if x < row[c] {
						row[c] = x
					}
				}
			}
		}
		added := false
		for _, ch := range s.chains {
			for _, r := range ch {
				w := s.src[r]
				if !s.isRead(r) || w < 0 || s.optional[w] {
					continue
				}
				for _, cw := range s.kcw[s.key[r]] {
					ws := cw.ws
					// The last write of this client that reaches r.
					j := sort.Search(len(ws), func(i int) bool { return !can(ws[i], r) })
					if j > 0 {
						wp := ws[j-1]
						if wp == w && j > 1 {
							wp = ws[j-2]
						}
						if wp != w && !can(wp, w) {
							added = s.addEdge(wp, w, eWW) || added
						}
					}
					// The first write of this client reachable from w.
					j = sort.Search(len(ws), func(i int) bool { return can(w, ws[i]) })
					if j < len(ws) {
						wp := ws[j]
						if wp == w {
							if j+1 < len(ws) {
								wp = ws[j+1]
							} else {
								continue
							}
						}
						if !can(r, wp) {
							added = s.addEdge(r, wp, eFR) || added
						}
					}
				}
			}
		}
		if !added {
			return Result{}, false
		}
	}
}
