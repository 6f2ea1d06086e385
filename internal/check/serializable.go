package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SerializableOpts adds orders to the dependency graph Serializable
// checks (see doc.go, "serializable").
type SerializableOpts struct {
	// Sessions adds each client's program order: a client's transactions,
	// by Call, serialize in that order (strong session serializability).
	Sessions bool
	// RealTime adds real-time order: T1 serializes before T2 whenever T1
	// returned before T2 was called (strict serializability).
	RealTime bool
}

// Serializable checks h for serializability: Adya's direct serialization
// graph over the committed transactions must be acyclic, and every read
// must return what its version's writer wrote. Exact for what the versions
// claim; see doc.go for the anomalies it names.
func Serializable(h []Txn) Result { return SerializableWith(h, SerializableOpts{}) }

// StrictSerializable is Serializable with session and real-time order.
func StrictSerializable(h []Txn) Result {
	return SerializableWith(h, SerializableOpts{Sessions: true, RealTime: true})
}

// SerializableWith is Serializable with the orders o adds. Its Model is
// "serializable", "strong-session-serializable" or "strict-serializable".
func SerializableWith(h []Txn, o SerializableOpts) Result {
	s := newSerState(h)
	s.attribute()
	s.dedupe()
	s.resolveReads()
	s.build(o)
	s.cycles(o)
	model := "serializable"
	switch {
	case o.RealTime:
		model = "strict-serializable"
	case o.Sessions:
		model = "strong-session-serializable"
	}
	return s.result(model)
}

// depKind is the kind of a dependency edge; kinds combine into masks.
type depKind uint8

const (
	depWW       depKind = 1 << iota // write-write: the next version of a key
	depWR                           // write-read: a read of the writer's version
	depRW                           // read-write anti-dependency: the version after the one read
	depSession                      // the same client's next transaction
	depRealTime                     // returned before the other was called (through markers)
	depDeps     = depWW | depWR | depRW
)

// serWrite is one write the versions place: transaction t's access op at a
// key, version v.
type serWrite struct {
	v     Position
	t, op int32
}

// serRead is a committed transaction's read of a key: of the write at
// index w of the key's writes (-1: the initial absent value).
type serRead struct {
	w, t int32
	rmw  bool // t also writes the key
}

type serEdge struct {
	to   int32
	kind depKind
	key  int32 // -1 for order edges
}

type serAnomaly struct {
	count   int
	example string
}

type serState struct {
	h      []Txn
	keys   []string
	keyID  map[string]int32
	kid    [][]int32    // per transaction, per access: the interned key
	nacc   int          // accesses, all transactions
	writes [][]serWrite // per key: versioned writes of OK and Unknown transactions, by version
	loose  [][]serWrite // per key: writes of OK and Unknown transactions that reported no version
	failed [][]serWrite // per key: writes of Failed transactions
	reads  [][]serRead  // per key: resolved reads of OK transactions
	attr   []Position   // a loose transaction's version, learned from a read of its value
	in     []bool       // the transaction is in the graph: OK, or Unknown and observed
	// The graph, in compressed rows: node i's edges are adj[start[i]:start[i+1]].
	// Nodes below len(h) are transactions; the rest are real-time markers.
	nodes int
	start []int32
	adj   []serEdge
	anom  map[string]*serAnomaly
}

// accessVersion is the version a's write installed.
func accessVersion(x *Txn, a *TxnAccess) Position {
	if a.WriteVersion.Set {
		return a.WriteVersion
	}
	return x.Version
}

func newSerState(h []Txn) *serState {
	s := &serState{h: h, keyID: map[string]int32{}, attr: make([]Position, len(h)), anom: map[string]*serAnomaly{}}
	s.kid = make([][]int32, len(h))
	for t := range h {
		s.nacc += len(h[t].Ops)
	}
	flat := make([]int32, s.nacc)
	for t := range h {
		x := &h[t]
		s.kid[t], flat = flat[:len(x.Ops):len(x.Ops)], flat[len(x.Ops):]
		for i := range x.Ops {
			a := &x.Ops[i]
			k := s.key(a.Key)
			s.kid[t][i] = k
			if !a.Write {
				continue
			}
			w := serWrite{v: accessVersion(x, a), t: int32(t), op: int32(i)}
			switch {
			case x.Outcome == Failed:
				s.failed[k] = append(s.failed[k], w)
			case !w.v.Set:
				s.loose[k] = append(s.loose[k], w)
			default:
				s.writes[k] = append(s.writes[k], w)
			}
		}
	}
	for k := range s.writes {
		s.sortWrites(int32(k))
	}
	return s
}

// key interns a key.
func (s *serState) key(k string) int32 {
	id, ok := s.keyID[k]
	if !ok {
		id = int32(len(s.keys))
		s.keyID[k] = id
		s.keys = append(s.keys, k)
		s.writes = append(s.writes, nil)
		s.loose = append(s.loose, nil)
		s.failed = append(s.failed, nil)
		s.reads = append(s.reads, nil)
	}
	return id
}

// sortWrites orders a key's writes by version; at one version OK
// transactions come first, then by index.
func (s *serState) sortWrites(k int32) {
	slices.SortFunc(s.writes[k], func(a, b serWrite) int {
		if c := a.v.Compare(b.v); c != 0 {
			return c
		}
		if c := cmp.Compare(s.h[a.t].Outcome, s.h[b.t].Outcome); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
}

// lookup returns the index in ws of the first write at version v, or -1.
func lookup(ws []serWrite, v Position) int {
	j := sort.Search(len(ws), func(j int) bool { return ws[j].v.Compare(v) >= 0 })
	if j < len(ws) && ws[j].v.Compare(v) == 0 {
		return j
	}
	return -1
}

// committedReads calls f for each read of an OK transaction (the others
// have no results), with its interned key.
func (s *serState) committedReads(f func(t, op int, k int32, a *TxnAccess)) {
	for t := range s.h {
		x := &s.h[t]
		if x.Outcome != OK {
			continue
		}
		for i := range x.Ops {
			if x.Ops[i].Read {
				f(t, i, s.kid[t][i], &x.Ops[i])
			}
		}
	}
}

// candidates returns the loose writes of key k, not yet given a version,
// that wrote what a read saw.
func (s *serState) candidates(k int32, a *TxnAccess) []serWrite {
	var out []serWrite
	for _, w := range s.loose[k] {
		b := &s.h[w.t].Ops[w.op]
		if !s.attr[w.t].Set && wroteValue(a, b) {
			out = append(out, w)
		}
	}
	return out
}

// attribute gives a transaction that reported no version (an unknown
// outcome, usually) the version of a read that saw its value, when it is
// the only such writer; repeated to a fixpoint, since a version learned at
// one key resolves reads at the others.
func (s *serState) attribute() {
	type pending struct {
		k int32
		a *TxnAccess
	}
	var reads []pending // reads of a version nobody claims, at keys with loose writes
	s.committedReads(func(_, _ int, k int32, a *TxnAccess) {
		if a.ReadVersion.Set && len(s.loose[k]) > 0 && lookup(s.writes[k], a.ReadVersion) < 0 {
			reads = append(reads, pending{k, a})
		}
	})
	for changed := len(reads) > 0; changed; {
		changed = false
		for _, r := range reads {
			if lookup(s.writes[r.k], r.a.ReadVersion) >= 0 {
				continue
			}
			c := s.candidates(r.k, r.a)
			if len(c) != 1 {
				continue
			}
			u := c[0].t
			s.attr[u] = r.a.ReadVersion
			x := &s.h[u]
			for i := range x.Ops {
				if b := &x.Ops[i]; b.Write && !accessVersion(x, b).Set {
					kb := s.kid[u][i]
					s.writes[kb] = append(s.writes[kb], serWrite{v: r.a.ReadVersion, t: u, op: int32(i)})
					// Sorted at once: a later read of this version in
					// the same pass must find it (lookup searches a
					// sorted list), or it would be attributed again, to
					// another candidate.
					s.sortWrites(kb)
				}
			}
			changed = true
		}
	}
}

// dedupe reports two committed transactions that claim one version of a
// key, and keeps one write per version: the first OK one (an Unknown one
// that shares an OK one's version is dropped: a read of that version
// resolves to the OK one).
func (s *serState) dedupe() {
	for k, ws := range s.writes {
		out := ws[:0]
		for _, w := range ws {
			if n := len(out); n > 0 && out[n-1].v == w.v {
				if s.h[w.t].Outcome == OK {
					s.report("duplicate-version", fmt.Sprintf("%s and %s both wrote %q at version %s",
						s.fmtTxn(out[n-1].t), s.fmtTxn(w.t), s.keys[k], fmtPos(w.v)))
				}
				continue
			}
			out = append(out, w)
		}
		s.writes[k] = out
	}
}

// resolveReads checks each committed read against its version's writer
// (value-mismatch, G1a, internal), marks the Unknown transactions it
// observes as committed and records it for the graph.
func (s *serState) resolveReads() {
	s.in = make([]bool, len(s.h))
	for t := range s.h {
		s.in[t] = s.h[t].Outcome == OK
	}
	s.committedReads(func(t, op int, k int32, a *TxnAccess) {
		r := serRead{w: -1, t: int32(t)}
		for i, kb := range s.kid[t] {
			if kb == k && s.h[t].Ops[i].Write {
				r.rmw = true
			}
		}
		if !a.ReadVersion.Set {
			if a.ReadFound {
				s.report("value-mismatch", fmt.Sprintf("%s read %q=%q at the initial version, where it is absent", s.fmtTxn(r.t), a.Key, a.ReadValue))
			}
			s.reads[k] = append(s.reads[k], r)
			return
		}
		j := lookup(s.writes[k], a.ReadVersion)
		if j < 0 {
			s.unwritten(r, k, a)
			return
		}
		w := s.writes[k][j]
		if w.t == r.t {
			s.report("internal", fmt.Sprintf("%s read %q at %s, the version it writes itself", s.fmtTxn(r.t), a.Key, fmtPos(w.v)))
			return
		}
		b := &s.h[w.t].Ops[w.op]
		if !wroteValue(a, b) {
			s.report("value-mismatch", fmt.Sprintf("%s read %q=%s at %s, but %s wrote %s there",
				s.fmtTxn(r.t), a.Key, fmtVal(a.ReadFound, a.ReadValue), fmtPos(w.v), s.fmtTxn(w.t), fmtVal(b.WriteFound, b.WriteValue)))
		}
		s.in[w.t] = true
		r.w = int32(j)
		s.reads[k] = append(s.reads[k], r)
	})
}

// wroteValue reports whether read a's value is what write b wrote (any
// value, if b's is unknown: TxnAccess.WriteUnknown).
func wroteValue(a, b *TxnAccess) bool {
	return b.WriteUnknown && a.ReadFound == b.WriteFound || sameValue(a.ReadFound, a.ReadValue, b.WriteFound, b.WriteValue)
}

// unwritten explains a read of a version no committed or unknown
// transaction installed: G1a, naming the failed writer if there is one.
// A read several loose writers could explain is ambiguous and skipped.
func (s *serState) unwritten(r serRead, k int32, a *TxnAccess) {
	if len(s.candidates(k, a)) > 0 {
		return
	}
	for _, w := range s.failed[k] {
		b := &s.h[w.t].Ops[w.op]
		if w.v == a.ReadVersion || (!w.v.Set && sameValue(a.ReadFound, a.ReadValue, b.WriteFound, b.WriteValue)) {
			s.report("G1a", fmt.Sprintf("%s read %q=%s at %s, written by the failed %s",
				s.fmtTxn(r.t), a.Key, fmtVal(a.ReadFound, a.ReadValue), fmtPos(a.ReadVersion), s.fmtTxn(w.t)))
			return
		}
	}
	s.report("G1a", fmt.Sprintf("%s read %q=%s at %s, a version no transaction wrote",
		s.fmtTxn(r.t), a.Key, fmtVal(a.ReadFound, a.ReadValue), fmtPos(a.ReadVersion)))
}

// build makes the graph: per key, ww between consecutive versions, wr from
// a version's writer to its readers, rw from a reader to the writer of the
// next version (the first, for readers of the initial value); then the
// orders o asks for. It also reports lost updates.
func (s *serState) build(o SerializableOpts) {
	type edge struct {
		from int32
		e    serEdge
	}
	edges := make([]edge, 0, 2*s.nacc+3*len(s.h)) // ww + wr/rw per access, orders per transaction
	add := func(from, to int32, kind depKind, key int32) {
		if from != to {
			edges = append(edges, edge{from, serEdge{to, kind, key}})
		}
	}
	var live []serWrite // the key's writes in the graph
	var liveIdx []int32 // index in live of each of the key's writes
	for k := range s.keys {
		kk := int32(k)
		live, liveIdx = live[:0], liveIdx[:0]
		for _, w := range s.writes[k] {
			liveIdx = append(liveIdx, int32(len(live)))
			if s.in[w.t] {
				live = append(live, w)
			}
		}
		for j := 1; j < len(live); j++ {
			add(live[j-1].t, live[j].t, depWW, kk)
		}
		type rmw struct{ j, t int32 }
		var rmws []rmw
		for _, r := range s.reads[k] {
			j := int32(-1)
			if r.w >= 0 {
				j = liveIdx[r.w] // the writer is in the graph: the read observed it
				add(live[j].t, r.t, depWR, kk)
			}
			if int(j)+1 < len(live) {
				add(r.t, live[j+1].t, depRW, kk)
			}
			if r.rmw {
				rmws = append(rmws, rmw{j, r.t})
			}
		}
		slices.SortFunc(rmws, func(a, b rmw) int { return cmp.Or(cmp.Compare(a.j, b.j), cmp.Compare(a.t, b.t)) })
		for i := 1; i < len(rmws); i++ {
			if rmws[i].j == rmws[i-1].j && (i == 1 || rmws[i-2].j != rmws[i].j) {
				v := "the initial version"
				if j := rmws[i].j; j >= 0 {
					v = fmtPos(live[j].v)
				}
				s.report("lost-update", fmt.Sprintf("%s and %s both read %q at %s and both wrote it",
					s.fmtTxn(rmws[i-1].t), s.fmtTxn(rmws[i].t), s.keys[k], v))
			}
		}
	}
	var order []int32 // the transactions in the graph
	for t := range s.h {
		if s.in[t] {
			order = append(order, int32(t))
		}
	}
	if o.Sessions {
		byClient := slices.Clone(order)
		slices.SortStableFunc(byClient, func(a, b int32) int {
			return cmp.Or(cmp.Compare(s.h[a].Client, s.h[b].Client), cmp.Compare(s.h[a].Call, s.h[b].Call))
		})
		// From each returned transaction to the client's next ones: one
		// whose outcome is unknown may still commit after the client moved
		// on, so it orders nothing after it.
		prev := int32(-1)
		for _, t := range byClient {
			if prev >= 0 && s.h[prev].Client != s.h[t].Client {
				prev = -1
			}
			if prev >= 0 {
				add(prev, t, depSession, -1)
			}
			if s.h[t].Outcome == OK {
				prev = t
			}
		}
	}
	s.nodes = len(s.h)
	if o.RealTime {
		// Markers, one per returned transaction in Return order, chained:
		// T -> its marker -> later markers -> every T2 called after that
		// marker's Return. A path T1 ->* T2 exists iff T1.Return < T2.Call,
		// with O(n) edges instead of O(n²).
		var done []int32
		for _, t := range order {
			if s.h[t].Outcome == OK {
				done = append(done, t)
			}
		}
		slices.SortStableFunc(done, func(a, b int32) int { return cmp.Compare(s.h[a].Return, s.h[b].Return) })
		m := int32(len(s.h))
		for i, t := range done {
			add(t, m+int32(i), depRealTime, -1)
			if i > 0 {
				add(m+int32(i-1), m+int32(i), depRealTime, -1)
			}
		}
		for _, t := range order {
			// the last marker whose Return is before t's Call
			i := sort.Search(len(done), func(i int) bool { return s.h[done[i]].Return >= s.h[t].Call }) - 1
			if i >= 0 {
				add(m+int32(i), t, depRealTime, -1)
			}
		}
		s.nodes += len(done)
	}
	s.start = make([]int32, s.nodes+1)
	for _, e := range edges {
		s.start[e.from+1]++
	}
	for i := 1; i <= s.nodes; i++ {
		s.start[i] += s.start[i-1]
	}
	s.adj = make([]serEdge, len(edges))
	fill := slices.Clone(s.start[:s.nodes])
	for _, e := range edges {
		s.adj[fill[e.from]] = e.e
		fill[e.from]++
	}
}

// scc returns the strongly connected component of each node over the
// edges whose kind is in mask (Tarjan's algorithm, iterative), and each
// component's size.
func (s *serState) scc(mask depKind) (comp, size []int32) {
	n := s.nodes
	index := make([]int32, n) // 0: unvisited; else DFS number + 1
	low := make([]int32, n)
	comp = make([]int32, n)
	onStack := make([]bool, n)
	var stack []int32
	type frame struct{ v, next int32 }
	var calls []frame
	next := int32(1)
	for root := 0; root < n; root++ {
		if index[root] != 0 {
			continue
		}
		calls = append(calls, frame{int32(root), s.start[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < s.start[v+1] {
				e := s.adj[f.next]
				f.next++
				if e.kind&mask == 0 {
					continue
				}
				w := e.to
				switch {
				case index[w] == 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, s.start[w]})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				c := int32(len(size))
				var sz int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = c
					sz++
					if w == v {
						break
					}
				}
				size = append(size, sz)
			}
		}
	}
	return comp, size
}

// cycleEdge is one step of a reported cycle.
type cycleEdge struct {
	from int32
	e    serEdge
}

// cycles looks for cycles, from the narrowest kinds of edge up: G0 (ww
// alone), G1c (ww and wr, with a wr), G2 (with an rw); then, if o adds
// orders, cycles that need one of their edges. One example per strongly
// connected component: the shortest of the cycles through up to
// serCycleTries edges of the required kind, each a shortest one found by
// breadth-first search, preferring the narrower kinds.
func (s *serState) cycles(o SerializableOpts) {
	var ord depKind
	if o.Sessions {
		ord |= depSession
	}
	if o.RealTime {
		ord |= depRealTime
	}
	passes := []struct {
		allowed, required depKind
		prefer            []depKind // tried in turn, then allowed
	}{
		{depWW, depWW, nil},
		{depWW | depWR, depWR, nil},
		{depDeps, depRW, []depKind{depWW | depWR}},
	}
	if ord != 0 {
		passes = append(passes, struct {
			allowed, required depKind
			prefer            []depKind
		}{depDeps | ord, ord, []depKind{depWW | ord, depWW | depWR | ord}})
	}
	bfs := newSerBFS(s.nodes)
	type best struct {
		level int // index in the pass's ladder of kinds
		cycle []cycleEdge
	}
	for _, p := range passes {
		ladder := append(p.prefer, p.allowed)
		comp, size := s.scc(p.allowed)
		tries := make([]int8, len(size))
		var found []int32 // components with a cycle, in order of their first node
		bests := map[int32]*best{}
		for v := 0; v < s.nodes; v++ {
			c := comp[v]
			if size[c] < 2 || tries[c] == serCycleTries {
				continue
			}
			for i := s.start[v]; i < s.start[v+1] && tries[c] < serCycleTries; i++ {
				e := s.adj[i]
				if e.kind&p.required == 0 || comp[e.to] != c {
					continue
				}
				if tries[c] > 0 && bfs.visited > serCycleWork*s.nodes {
					break // enough searching for shorter cycles in this pass
				}
				tries[c]++
				for level, m := range ladder {
					b := bests[c]
					if b != nil && level > b.level {
						break
					}
					path := bfs.path(s, e.to, int32(v), m, comp)
					if path == nil {
						continue
					}
					if b == nil {
						found = append(found, c)
					}
					if b == nil || level < b.level || (level == b.level && len(path)+1 < len(b.cycle)) {
						bests[c] = &best{level, append([]cycleEdge{{int32(v), e}}, path...)}
					}
					break
				}
			}
		}
		for _, c := range found {
			s.reportCycle(bests[c].cycle)
		}
	}
}

// serCycleTries bounds the edges of the required kind tried per component
// in search of a short cycle; serCycleWork bounds, in nodes visited per
// node of the graph, the searches past each component's first.
const (
	serCycleTries = 8
	serCycleWork  = 4
)

// serBFS is a breadth-first search's reusable state.
type serBFS struct {
	stamp   []int32
	parent  []int32 // index in adj of the edge that reached the node
	from    []int32
	cur     int32
	visited int // nodes visited, all searches
}

func newSerBFS(n int) *serBFS {
	return &serBFS{stamp: make([]int32, n), parent: make([]int32, n), from: make([]int32, n)}
}

// path returns a shortest path from a to b over edges of kinds in mask
// that stay in a's component, or nil.
func (b *serBFS) path(s *serState, a, to int32, mask depKind, comp []int32) []cycleEdge {
	b.cur++
	b.stamp[a] = b.cur
	q := []int32{a}
	for len(q) > 0 && b.stamp[to] != b.cur {
		v := q[0]
		q = q[1:]
		for i := s.start[v]; i < s.start[v+1]; i++ {
			e := s.adj[i]
			if e.kind&mask == 0 || comp[e.to] != comp[a] || b.stamp[e.to] == b.cur {
				continue
			}
			b.stamp[e.to], b.parent[e.to], b.from[e.to] = b.cur, i, v
			b.visited++
			q = append(q, e.to)
		}
	}
	if b.stamp[to] != b.cur {
		return nil
	}
	var path []cycleEdge
	for v := to; v != a; v = b.from[v] {
		path = append(path, cycleEdge{b.from[v], s.adj[b.parent[v]]})
	}
	slices.Reverse(path)
	return path
}

// reportCycle names a cycle by its edges and reports it: G2 with an rw
// edge (G-single: exactly one), else G1c with a wr edge, else G0; suffixed
// -realtime or -session when it needs such an edge.
func (s *serState) reportCycle(c []cycleEdge) {
	var kinds depKind
	rw := 0
	for _, e := range c {
		kinds |= e.e.kind
		if e.e.kind == depRW {
			rw++
		}
	}
	name := "G0"
	switch {
	case kinds&depRW != 0:
		name = "G2"
	case kinds&depWR != 0:
		name = "G1c"
	}
	switch {
	case kinds&depRealTime != 0:
		name += "-realtime"
	case kinds&depSession != 0:
		name += "-session"
	}
	// Start at a transaction, and show a run of real-time markers as one edge.
	for c[0].from >= int32(len(s.h)) {
		c = append(c[1:], c[0])
	}
	var b strings.Builder
	var txns []int32
	for i, e := range c {
		if e.from >= int32(len(s.h)) {
			continue
		}
		txns = append(txns, e.from)
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "T%d -%s->", e.from, s.fmtEdge(e.e))
	}
	fmt.Fprintf(&b, " T%d", c[0].from)
	if rw == 1 {
		b.WriteString(" (G-single: one anti-dependency)")
	}
	for i, t := range txns {
		if i == 12 {
			fmt.Fprintf(&b, "; ... and %d more", len(txns)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(s.fmtTxn(t))
	}
	s.report(name, b.String())
}

func (s *serState) fmtEdge(e serEdge) string {
	switch e.kind {
	case depWW:
		return fmt.Sprintf("ww %q", s.keys[e.key])
	case depWR:
		return fmt.Sprintf("wr %q", s.keys[e.key])
	case depRW:
		return fmt.Sprintf("rw %q", s.keys[e.key])
	case depSession:
		return "session"
	}
	return "realtime"
}

func (s *serState) report(name, example string) {
	a := s.anom[name]
	if a == nil {
		a = &serAnomaly{example: example}
		s.anom[name] = a
	}
	a.count++
}

// serAnomalyOrder is the order anomalies are listed in.
var serAnomalyOrder = []string{
	"duplicate-version", "value-mismatch", "G1a", "internal", "G0", "G1c", "lost-update", "G2",
	"G0-session", "G1c-session", "G2-session", "G0-realtime", "G1c-realtime", "G2-realtime",
}

func (s *serState) result(model string) Result {
	r := Result{Model: model, Verdict: Pass}
	var parts []string
	for _, name := range serAnomalyOrder {
		a := s.anom[name]
		if a == nil {
			continue
		}
		r.Verdict = Violation
		r.Anomalies = append(r.Anomalies, name)
		parts = append(parts, fmt.Sprintf("%s (%d): %s", name, a.count, a.example))
	}
	r.Detail = strings.Join(parts, " | ")
	return r
}

// fmtPos renders a version: "@5", or "@5.1.2" (T.Sub.Node).
func fmtPos(p Position) string {
	switch {
	case !p.Set:
		return "@init"
	case p.Sub == 0 && p.Node == 0:
		return fmt.Sprintf("@%d", p.T)
	}
	return fmt.Sprintf("@%d.%d.%d", p.T, p.Sub, p.Node)
}

func fmtVal(found bool, v string) string {
	if !found {
		return "absent"
	}
	return fmt.Sprintf("%q", v)
}

func (s *serState) fmtTxn(t int32) string { return FormatTxn(s.h, int(t)) }

// FormatTxn renders h[i] for a report:
// `T4 c2 {r "x"="5"@3 w "x"="6"; w "y"=absent} @4 [1.000ms, 2.000ms]`
// (a write of absent is a delete; "(failed)" or "(unknown outcome)" follow).
func FormatTxn(h []Txn, i int) string {
	x := &h[i]
	var b strings.Builder
	fmt.Fprintf(&b, "T%d c%d {", i, x.Client)
	for j, a := range x.Ops {
		if j > 0 {
			b.WriteString("; ")
		}
		if a.Read {
			fmt.Fprintf(&b, "r %q=%s%s", a.Key, fmtVal(a.ReadFound, a.ReadValue), fmtPos(a.ReadVersion))
		}
		if a.Read && a.Write {
			b.WriteString(" ")
		}
		if a.Write {
			fmt.Fprintf(&b, "w %q=%s", a.Key, fmtVal(a.WriteFound, a.WriteValue))
			if a.WriteVersion.Set {
				b.WriteString(fmtPos(a.WriteVersion))
			}
		}
	}
	b.WriteString("}")
	if x.Version.Set {
		b.WriteString(" " + fmtPos(x.Version))
	}
	ret := x.Return
	if x.Outcome == Unknown {
		ret = Never
	}
	fmt.Fprintf(&b, " [%s, %s]", fmtTime(x.Call), fmtTime(ret))
	switch x.Outcome {
	case Failed:
		b.WriteString(" (failed)")
	case Unknown:
		b.WriteString(" (unknown outcome)")
	}
	return b.String()
}
