package scenario

import (
	"testing"

	"github.com/lightcone/lightcone/internal/check"
)

// TestOpLogOrder: the history comes back whole and in order, whether the
// rate holds (one chunk sized from it), rises (more chunks, gathered at
// the end) or falls, and a steady run's history is copied at most once,
// while short.
func TestOpLogOrder(t *testing.T) {
	const end = 1000
	for _, tc := range []struct {
		name string
		n    int
		at   func(i int) int64 // completion time of operation i
		one  bool              // the history ends in one chunk (else in several)
	}{
		{"none", 0, nil, true},
		{"few", 10, func(i int) int64 { return int64(1 + i) }, true},
		{"steady", 50_000, func(i int) int64 { return int64(1 + i/50) }, true},
		{"rising", 50_000, func(i int) int64 { return int64(1 + i/(5+i/1000)) }, false},
		{"falling", 20_000, func(i int) int64 { return int64(1 + i*i/400_000) }, true},
	} {
		var l opLog
		for i := range tc.n {
			l.add(check.Op{Client: int64(i)}, tc.at(i), end)
		}
		if one := len(l.full) == 0; one != tc.one {
			t.Errorf("%s: %d operations in %d chunks; want one: %v", tc.name, tc.n, len(l.full)+1, tc.one)
		}
		ops := l.all()
		if len(ops) != tc.n {
			t.Fatalf("%s: all() has %d operations; want %d", tc.name, len(ops), tc.n)
		}
		for i, op := range ops {
			if op.Client != int64(i) {
				t.Fatalf("%s: all()[%d] is operation %d", tc.name, i, op.Client)
			}
		}
	}
}
