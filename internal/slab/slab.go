// Package slab hands out pointers to zeroed values carved from chunks, so
// that a hot path that makes one short-lived value per request costs one
// allocation per chunk instead of one per value.
//
// A chunk is garbage only once every value cut from it is: a value kept
// for long keeps its whole chunk, so carve only values whose lifetimes are
// alike and short (a request's reply, a message in flight). Values are
// never reused: a Slab trades a little retained memory for fewer
// allocations, never safety. A Slab is not safe for concurrent use.
package slab

// Slab carves values of T, Chunk at a time (DefaultChunk if zero).
type Slab[T any] struct {
	Chunk int
	free  []T
}

// DefaultChunk is the number of values a chunk holds when Chunk is zero.
const DefaultChunk = 64

// New returns a pointer to a zeroed T of its own.
func (s *Slab[T]) New() *T {
	if len(s.free) == 0 {
		n := s.Chunk
		if n <= 0 {
			n = DefaultChunk
		}
		s.free = make([]T, n)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}
