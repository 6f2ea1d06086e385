package slab

import "testing"

type pair struct{ a, b int }

func TestNewIsZeroedAndDistinct(t *testing.T) {
	s := Slab[pair]{Chunk: 3}
	seen := map[*pair]bool{}
	for i := range 10 {
		p := s.New()
		if *p != (pair{}) {
			t.Fatalf("value %d not zeroed: %+v", i, *p)
		}
		if seen[p] {
			t.Fatalf("value %d handed out twice", i)
		}
		seen[p] = true
		*p = pair{i, -i} // writing one must not touch another
	}
	for p := range seen {
		if p.a != -p.b {
			t.Fatalf("values overlap: %+v", *p)
		}
	}
}

func TestOneAllocationPerChunk(t *testing.T) {
	var s Slab[pair] // DefaultChunk
	var sink *pair
	allocs := testing.AllocsPerRun(10, func() {
		for range DefaultChunk {
			sink = s.New()
		}
	})
	_ = sink
	if allocs != 1 {
		t.Fatalf("%v allocations per %d values, want 1", allocs, DefaultChunk)
	}
}
