package check

import (
	"cmp"
	"container/heap"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// hintTimeout caps the linearization hint of Sequential.
const hintTimeout = 2 * time.Second

// linearizationWitness tries the fast path of Sequential: if every key is
// linearizable, the union of program order and the per-key linearization
// orders is acyclic (linearizability is local, and program order is part of
// real-time order), and any topological order of it is a sequential witness.
// It returns a witness (checked by replay by the caller) or nil.
func (s *seq) linearizationWitness() []step {
	if len(s.ops) == 0 {
		return []step{}
	}
	model := registerModel(s.h)
	res, info := porcupine.CheckOperationsVerbose(model, porcupineOps(s.ops), hintTimeout)
	if res != porcupine.Ok {
		return nil
	}
	// Partitions come in sorted key order, ops in history order.
	perKey := make([][]int32, len(s.keys))
	for i := range s.ops {
		perKey[s.key[i]] = append(perKey[s.key[i]], int32(i))
	}
	parts := info.PartialLinearizations()
	if len(parts) != len(s.keys) {
		return nil
	}
	n := len(s.ops)
	next := make([]int32, n) // successor in its key's linearization, or -1
	for i := range next {
		next[i] = -1
	}
	indeg := make([]int32, n)
	for k, part := range parts {
		var lin []int
		for _, l := range part {
			if len(l) == len(perKey[k]) {
				lin = l
				break
			}
		}
		if lin == nil {
			return nil
		}
		prev := int32(-1)
		for _, id := range lin {
			if id < 0 || id >= len(perKey[k]) {
				return nil
			}
			op := perKey[k][id]
			if !s.active[op] {
				continue
			}
			if prev >= 0 {
				next[prev] = op
				indeg[op]++
			}
			prev = op
		}
	}
	// po edges: consecutive ops of a chain.
	poNext := make([]int32, n)
	for i := range poNext {
		poNext[i] = -1
	}
	for _, ch := range s.chains {
		for p := 1; p < len(ch); p++ {
			poNext[ch[p-1]] = ch[p]
			indeg[ch[p]]++
		}
	}
	// Kahn's algorithm, smallest op index first (deterministic).
	q := &int32Heap{}
	total := 0
	for i := 0; i < n; i++ {
		if s.active[i] {
			total++
			if indeg[i] == 0 {
				heap.Push(q, int32(i))
			}
		}
	}
	trail := make([]step, 0, total)
	for q.Len() > 0 {
		v := heap.Pop(q).(int32)
		trail = append(trail, step{op: v})
		for _, w := range [2]int32{next[v], poNext[v]} {
			if w >= 0 {
				indeg[w]--
				if indeg[w] == 0 {
					heap.Push(q, w)
				}
			}
		}
	}
	if len(trail) != total {
		return nil
	}
	return trail
}

// posKey is where an operation goes in the order the system claims: its
// position (Op.Pos) or one inferred from its neighbours, and a tier that
// breaks ties at one position: an inferred write (tier 0) goes before the
// read that observed it (tier 1), an operation placed after its program
// predecessor (tier 2) after everything at that position.
type posKey struct {
	pos  Position
	tier int8
}

func (a posKey) compare(b posKey) int {
	if c := a.pos.Compare(b.pos); c != 0 {
		return c
	}
	return cmp.Compare(a.tier, b.tier)
}

// positionKeys gives every active operation a posKey: its own position;
// for a write without one (a write whose reply was lost, so its version is
// unknown) that some read uniquely observed, the earliest such read's
// position (a read at T sees the latest write at or before T, so the write
// lies just before it); for any other operation without one, its program
// predecessor's. It returns nil if no operation has a position.
func (s *seq) positionKeys() []posKey {
	keys := make([]posKey, len(s.ops))
	any := false
	for i, o := range s.ops {
		if o.Pos.Set {
			keys[i] = posKey{pos: o.Pos, tier: 1}
			any = true
		}
	}
	if !any {
		return nil
	}
	for i := range s.ops {
		r := int32(i)
		if !s.active[r] || !s.isRead(r) || !s.ops[r].Pos.Set {
			continue
		}
		if w := s.src[r]; w >= 0 && !s.ops[w].Pos.Set {
			k := posKey{pos: s.ops[r].Pos, tier: 0}
			if !keys[w].pos.Set || k.compare(keys[w]) < 0 {
				keys[w] = k
			}
		}
	}
	for _, ch := range s.chains {
		prev := posKey{pos: Position{Set: true, T: math.MinInt64}, tier: 2}
		for _, i := range ch {
			if !keys[i].pos.Set {
				keys[i] = posKey{pos: prev.pos, tier: 2}
			}
			prev = keys[i]
		}
	}
	return keys
}

// positionWitness tries the order the system claims (Op.Pos): every
// client's operations in program order, merged by their positionKeys (the
// head with the least key next, ties to the lower client), optional Unknown
// writes without a position left out. It is a candidate witness, checked by
// replay by the caller, or nil if no operation has a position. A system that
// reports the position of each operation in a total order consistent with
// program order passes here in linear time; a wrong position can only make
// the replay fail, never make a violation pass.
func (s *seq) positionWitness() []step {
	keys := s.positionKeys()
	if keys == nil {
		return nil
	}
	return s.mergeChains(func(a, b int32) int { return keys[a].compare(keys[b]) }, func(i int32) bool {
		return s.optional[i] && !s.ops[i].Pos.Set
	})
}

// mergeChains merges the clients' chains into one order that keeps program
// order: the head that compares least goes next (ties to the lower client).
// Operations skip(i) reports are placed as left out.
func (s *seq) mergeChains(less func(a, b int32) int, skip func(int32) bool) []step {
	next := make([]int, len(s.chains))
	h := &headHeap{s: s, next: next, less: less}
	for c, ch := range s.chains {
		if len(ch) > 0 {
			h.cs = append(h.cs, int32(c))
		}
	}
	heap.Init(h)
	var trail []step
	for h.Len() > 0 {
		c := h.cs[0]
		i := s.chains[c][next[c]]
		trail = append(trail, step{op: i, skip: skip(i)})
		if next[c]++; next[c] == len(s.chains[c]) {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return trail
}

// headHeap orders clients by their next operation.
type headHeap struct {
	s    *seq
	next []int
	less func(a, b int32) int
	cs   []int32
}

func (h *headHeap) head(c int32) int32 { return h.s.chains[c][h.next[c]] }
func (h *headHeap) Len() int           { return len(h.cs) }
func (h *headHeap) Less(i, j int) bool {
	a, b := h.cs[i], h.cs[j]
	if c := h.less(h.head(a), h.head(b)); c != 0 {
		return c < 0
	}
	return a < b
}
func (h *headHeap) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *headHeap) Push(x interface{}) { h.cs = append(h.cs, x.(int32)) }
func (h *headHeap) Pop() interface{} {
	x := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return x
}

type int32Heap []int32

func (h int32Heap) Len() int            { return len(h) }
func (h int32Heap) Less(i, j int) bool  { return h[i] < h[j] }
func (h int32Heap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *int32Heap) Push(x interface{}) { *h = append(*h, x.(int32)) }
func (h *int32Heap) Pop() interface{} {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
