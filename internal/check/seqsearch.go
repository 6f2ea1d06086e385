package check

import (
	"fmt"
	"sort"
)

// The witness search for Sequential: a depth-first search over states
// (per-client positions, per-key current values), placing one operation at a
// time. Reads that can be placed are placed at once (never a branch: moving
// such a read to the front of any witness from this state keeps it a
// witness); writes are the branch points, tried in order of their deadline
// (the earliest Return of the write and of its readers), which follows a
// linearization closely when the history comes from a linearizable system.
// Failed states are memoized by a 128-bit Zobrist hash of the state.

type step struct {
	op    int32
	skip  bool  // an optional Unknown write left out
	prev  int32 // the key's previous value, for a placed write
	prevW int32 // and the write that had set it
}

type searcher struct {
	s       *seq
	head    []int32 // per client: position of its next operation
	cur     []int32 // per key: current value id
	pending []int32 // per op: predecessors not yet placed
	done    []bool
	trail   []step
	h1, h2  uint64
	failed  map[[2]uint64]struct{}
	steps   int
	budget  int
	aborted bool
	total   int // active operations

	// readersLeft[w]: unplaced reads whose unique source is w; while the
	// key holds w's value, no other write of the key may be placed before
	// they are (values are unique, so they could never be satisfied again).
	readersLeft []int32
	curW        []int32 // per key: the write that set its value, or -1
	initLeft    []int32 // per key: unplaced reads of the initial value
	ambLeft     []int32 // per key: unplaced reads with an ambiguous source
	absentLeft  []int32 // per key: of those, the reads of absent
	delsLeft    []int32 // per key: unplaced deletes

	demand []int32

	bestDepth int
	bestHeads []int32 // the blocked next operations at the deepest point
	bestCur   []int32
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func zob(kind, a, b uint64, seed uint64) uint64 {
	return splitmix(splitmix(seed^kind<<60^a) ^ b)
}

const (
	zPos  = 1
	zVal  = 2
	seed1 = 0x5eed0001
	seed2 = 0xa5a5beef
)

func (t *searcher) hashPos(c int32, p int32) {
	t.h1 ^= zob(zPos, uint64(c), uint64(p), seed1)
	t.h2 ^= zob(zPos, uint64(c), uint64(p), seed2)
}

func (t *searcher) hashVal(k int32, v int32) {
	t.h1 ^= zob(zVal, uint64(k), uint64(v), seed1)
	t.h2 ^= zob(zVal, uint64(k), uint64(v), seed2)
}

func (s *seq) search(budget int) Result {
	t := &searcher{
		s:       s,
		head:    make([]int32, len(s.chains)),
		cur:     append([]int32(nil), s.initVal...),
		pending: make([]int32, len(s.ops)),
		done:    make([]bool, len(s.ops)),
		failed:  make(map[[2]uint64]struct{}),
		budget:  budget,
	}
	for i := range s.ops {
		if s.active[i] {
			t.total++
		}
		for _, j := range s.succ[i] {
			t.pending[j]++
		}
	}
	t.readersLeft = make([]int32, len(s.ops))
	t.initLeft = make([]int32, len(s.keys))
	t.ambLeft = make([]int32, len(s.keys))
	t.absentLeft = make([]int32, len(s.keys))
	t.delsLeft = make([]int32, len(s.keys))
	for i := range s.ops {
		i := int32(i)
		if s.active[i] {
			t.countRead(i, 1)
		}
	}
	t.curW = make([]int32, len(s.keys))
	for k := range t.curW {
		t.curW[k] = -1
	}
	for c := range s.chains {
		t.hashPos(int32(c), 0)
	}
	for k := range t.cur {
		t.hashVal(int32(k), -1)
	}
	t.bestDepth = -1
	res := Result{Model: "sequential", How: "search"}
	switch {
	case t.dfs():
		if err := s.replay(t.trail); err != "" {
			res.Verdict = Undecided
			res.Detail = "internal error: witness failed replay: " + err
			return res
		}
		res.Verdict = Pass
	case t.aborted:
		res.Verdict, res.How = Undecided, "budget"
		res.Detail = fmt.Sprintf("witness search budget of %d steps exhausted (%d of %d operations placed at best)",
			budget, t.bestDepth, t.total)
	default:
		res.Verdict = Violation
		res.Detail = t.explain()
		k := ""
		for i, h := range t.bestHeads {
			if i == 0 {
				k = s.ops[h].Key
			} else if s.ops[h].Key != k {
				k = ""
				break
			}
		}
		res.Key = k
	}
	return res
}

func (t *searcher) exec(i int32, skip bool) {
	s := t.s
	c := s.client[i]
	t.hashPos(c, t.head[c])
	t.head[c]++
	t.hashPos(c, t.head[c])
	t.done[i] = true
	st := step{op: i, skip: skip}
	t.countRead(i, -1)
	if !s.isRead(i) && !skip {
		k := s.key[i]
		st.prev = t.cur[k]
		st.prevW = t.curW[k]
		t.hashVal(k, t.curW[k])
		t.curW[k] = i
		t.cur[k] = s.val[i]
		t.hashVal(k, i)
	}
	for _, j := range s.succ[i] {
		t.pending[j]--
	}
	t.trail = append(t.trail, st)
	t.steps++
}

func (t *searcher) undoTo(mark int) {
	s := t.s
	for len(t.trail) > mark {
		st := t.trail[len(t.trail)-1]
		t.trail = t.trail[:len(t.trail)-1]
		i := st.op
		for _, j := range s.succ[i] {
			t.pending[j]++
		}
		if !s.isRead(i) && !st.skip {
			k := s.key[i]
			t.hashVal(k, t.curW[k])
			t.cur[k] = st.prev
			t.curW[k] = st.prevW
			t.hashVal(k, t.curW[k])
		}
		t.done[i] = false
		t.countRead(i, 1)
		c := s.client[i]
		t.hashPos(c, t.head[c])
		t.head[c]--
		t.hashPos(c, t.head[c])
	}
}

// countRead keeps the per-key counts of unplaced operations.
func (t *searcher) countRead(r int32, d int32) {
	k := t.s.key[r]
	if !t.s.isRead(r) {
		if t.s.val[r] == 0 {
			t.delsLeft[k] += d
		}
		return
	}
	if t.s.val[r] == 0 && t.s.src[r] == srcAmbiguous {
		t.absentLeft[k] += d
	}
	switch w := t.s.src[r]; w {
	case srcInit:
		t.initLeft[t.s.key[r]] += d
	case srcAmbiguous:
		t.ambLeft[t.s.key[r]] += d
	default:
		t.readersLeft[w] += d
	}
}

// held reports whether key k's current value still has unplaced readers
// that a write of the key would starve (values are unique, so a read of an
// overwritten value can never be satisfied again).
func (t *searcher) held(k int32) bool {
	if t.cur[k] == 0 && t.absentLeft[k] > 0 && t.delsLeft[k] == 0 {
		return true // the last chance for the reads of absent
	}
	if w := t.curW[k]; w >= 0 {
		return t.readersLeft[w] > 0
	}
	return t.initLeft[k] > 0
}

// free reports whether write w can be placed now without losing any
// witness: no unplaced read could read the key's current value or w's value.
// (Moving w to the front of any witness from here keeps it a witness; for
// an optional Unknown write, adding it does.)
func (t *searcher) free(w int32) bool {
	k := t.s.key[w]
	if t.readersLeft[w] > 0 || t.held(k) || t.ambLeft[k] > t.absentLeft[k] {
		return false
	}
	// Ambiguous reads of absent could read the current value (if absent)
	// or w's (if a delete).
	return t.absentLeft[k] == 0 || t.cur[k] != 0 && t.s.val[w] != 0
}

// headOp returns client c's next operation, or -1.
func (t *searcher) headOp(c int) int32 {
	ch := t.s.chains[c]
	if int(t.head[c]) < len(ch) {
		return ch[t.head[c]]
	}
	return -1
}

// eager places every read that can be placed and every free write, to a
// fixpoint.
func (t *searcher) eager() {
	s := t.s
	for progress := true; progress; {
		progress = false
		for c := range s.chains {
			for {
				i := t.headOp(c)
				if i < 0 || t.pending[i] > 0 {
					break
				}
				if s.isRead(i) && t.cur[s.key[i]] != s.val[i] || !s.isRead(i) && !t.free(i) {
					break
				}
				t.exec(i, false)
				progress = true
			}
		}
	}
}

// deadKeys reports whether a write placed since trail position from left
// reads of absent with no way to be satisfied.
func (t *searcher) deadKeys(from int) bool {
	if from < 0 {
		from = 0
	}
	for _, st := range t.trail[from:] {
		if st.skip || t.s.isRead(st.op) {
			continue
		}
		k := t.s.key[st.op]
		if t.absentLeft[k] > 0 && t.cur[k] != 0 && t.delsLeft[k] == 0 {
			return true
		}
	}
	return false
}

// dead reports a state from which no witness exists for certain.
func (t *searcher) dead() bool {
	s := t.s
	for c := range s.chains {
		i := t.headOp(c)
		if i < 0 || !s.isRead(i) {
			continue
		}
		if t.cur[s.key[i]] == s.val[i] {
			// It matches but an ordering predecessor is missing: in any
			// witness from here it could be moved first, contradicting
			// that ordering.
			return true
		}
		switch w := s.src[i]; {
		case w == srcInit:
			return true // a write happened; the initial value is gone
		case w >= 0 && t.done[w]:
			return true // its write was overwritten (values are unique)
		}
	}
	return false
}

type choice struct {
	op   int32
	skip bool
}

func (t *searcher) dfs() bool {
	s := t.s
	mark := len(t.trail)
	t.eager()
	if len(t.trail) > t.bestDepth {
		t.recordBest()
	}
	if len(t.trail) == t.total {
		return true
	}
	key := [2]uint64{t.h1, t.h2}
	if _, ok := t.failed[key]; ok || t.dead() || t.deadKeys(mark-1) {
		t.undoTo(mark)
		return false
	}
	var cs []choice
	for c := range s.chains {
		i := t.headOp(c)
		if i < 0 || s.isRead(i) || t.pending[i] > 0 {
			continue
		}
		if t.held(s.key[i]) {
			if s.optional[i] {
				cs = append(cs, choice{op: i, skip: true})
			}
			continue // it would overwrite a value some read still needs
		}
		cs = append(cs, choice{op: i})
	}
	// Writes a blocked next read is waiting for come first.
	demanded := t.demand[:0]
	for c := range s.chains {
		if i := t.headOp(c); i >= 0 && s.isRead(i) && s.src[i] >= 0 && t.pending[i] == 1 {
			demanded = append(demanded, s.src[i])
		}
	}
	t.demand = demanded
	isDemanded := func(w int32) bool {
		for _, d := range demanded {
			if d == w {
				return true
			}
		}
		return false
	}
	sort.Slice(cs, func(a, b int) bool {
		x, y := cs[a].op, cs[b].op
		if dx, dy := isDemanded(x), isDemanded(y); dx != dy {
			return dx
		}
		if s.prio[x] != s.prio[y] {
			return s.prio[x] < s.prio[y]
		}
		if s.ops[x].Call != s.ops[y].Call {
			return s.ops[x].Call < s.ops[y].Call
		}
		return x < y
	})
	for _, c := range cs {
		if s.optional[c.op] && !c.skip {
			cs = append(cs, choice{op: c.op, skip: true})
		}
	}
	for _, c := range cs {
		if t.steps >= t.budget {
			t.aborted = true
		}
		if t.aborted {
			return false
		}
		m := len(t.trail)
		t.exec(c.op, c.skip)
		if t.dfs() {
			return true
		}
		if t.aborted {
			return false
		}
		t.undoTo(m)
	}
	t.failed[key] = struct{}{}
	t.undoTo(mark)
	return false
}

func (t *searcher) recordBest() {
	t.bestDepth = len(t.trail)
	t.bestHeads = t.bestHeads[:0]
	for c := range t.s.chains {
		if i := t.headOp(c); i >= 0 {
			t.bestHeads = append(t.bestHeads, i)
		}
	}
	t.bestCur = append(t.bestCur[:0], t.cur...)
}

func (t *searcher) explain() string {
	s := t.s
	d := fmt.Sprintf("no total order exists (exhaustive search of %d states): at best %d of %d operations could be ordered; then blocked: ",
		len(t.failed), t.bestDepth, t.total)
	var parts []string
	for _, i := range t.bestHeads {
		if !s.isRead(i) {
			continue
		}
		k := s.key[i]
		have := "absent"
		if v := t.bestCur[k]; v != 0 {
			have = "another value"
			for j := range s.ops {
				if !s.isRead(int32(j)) && s.key[j] == k && s.val[j] == v {
					have = fmt.Sprintf("%q", s.ops[j].Value)
					break
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s (key holds %s)", FormatOp(s.ops[i]), have))
		if len(parts) == 6 {
			break
		}
	}
	if len(parts) == 0 {
		for _, i := range t.bestHeads {
			parts = append(parts, FormatOp(s.ops[i]))
			if len(parts) == 6 {
				break
			}
		}
	}
	for i, p := range parts {
		if i > 0 {
			d += "; "
		}
		d += p
	}
	return d
}

// replay checks a witness: program order, every operation exactly once, and
// register semantics. It returns "" if the witness is valid.
func (s *seq) replay(trail []step) string {
	cur := append([]int32(nil), s.initVal...)
	next := make([]int32, len(s.chains))
	seen := 0
	for _, st := range trail {
		i := st.op
		c := s.client[i]
		if s.chains[c][next[c]] != i {
			return "program order broken at " + FormatOp(s.ops[i])
		}
		next[c]++
		seen++
		switch {
		case s.isRead(i):
			if cur[s.key[i]] != s.val[i] {
				return "wrong value for " + FormatOp(s.ops[i])
			}
		case st.skip:
			if !s.optional[i] {
				return "left out a mandatory write " + FormatOp(s.ops[i])
			}
		default:
			cur[s.key[i]] = s.val[i]
		}
	}
	for c, ch := range s.chains {
		if int(next[c]) != len(ch) {
			return "incomplete witness"
		}
	}
	return ""
}
