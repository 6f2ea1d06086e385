package check

import (
	"cmp"
	"container/heap"
	"slices"
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

// positionWitness tries the order the system claims (Op.Pos): if every
// operation that must be placed has a position, the operations sorted by
// position (program order among equals; optional Unknown writes without a
// position left out, last) are a candidate witness, checked by replay by the
// caller. It returns nil if some mandatory operation has no position.
func (s *seq) positionWitness() []step {
	var placed, skipped []int32
	for i := range s.ops {
		switch {
		case !s.active[i]:
		case s.ops[i].Pos.Set:
			placed = append(placed, int32(i))
		case s.optional[i]:
			skipped = append(skipped, int32(i))
		default:
			return nil
		}
	}
	if len(placed) == 0 {
		return nil
	}
	slices.SortStableFunc(placed, func(a, b int32) int {
		if c := s.ops[a].Pos.Compare(s.ops[b].Pos); c != 0 {
			return c
		}
		if s.client[a] == s.client[b] {
			return cmp.Compare(s.pos[a], s.pos[b])
		}
		return 0
	})
	trail := make([]step, 0, len(placed)+len(skipped))
	for _, i := range placed {
		trail = append(trail, step{op: i})
	}
	for _, i := range skipped {
		trail = append(trail, step{op: i, skip: true})
	}
	return trail
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
