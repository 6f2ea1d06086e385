package check

import "testing"

// TestReleaseConsistent: a read in a hold acquired after a write's release
// must see it; a read in a hold acquired before that release need not.
func TestReleaseConsistent(t *testing.T) {
	acq := func(c int64, call, ret int64) Op {
		return Op{Client: c, Key: "x", Kind: Acquire, Call: call * ms, Return: ret * ms, Outcome: OK}
	}
	rel := func(c int64, call, ret int64) Op {
		return Op{Client: c, Key: "x", Kind: Release, Call: call * ms, Return: ret * ms, Outcome: OK}
	}
	writer := []Op{acq(1, 0, 1), wr(1, "x", "a", 2, 3), rel(1, 4, 5)}
	for _, tc := range []struct {
		name string
		ops  []Op
		want Verdict
	}{
		{"sees the released write", append(writer, acq(2, 6, 7), rd(2, "x", "a", 8, 9), rel(2, 10, 11)), Pass},
		{"misses the released write", append(writer, acq(2, 6, 7), rd(2, "x", "init", 8, 9), rel(2, 10, 11)), Violation},
		{"acquired before the release", append(writer, acq(2, 3, 7), rd(2, "x", "init", 8, 9), rel(2, 10, 11)), Pass},
		{"release failed", []Op{acq(1, 0, 1), wr(1, "x", "a", 2, 3), {Client: 1, Key: "x", Kind: Release, Call: 4 * ms, Return: 5 * ms, Outcome: Failed},
			acq(2, 6, 7), rd(2, "x", "init", 8, 9)}, Pass},
		{"value never written", append(writer, acq(2, 6, 7), rd(2, "x", "zzz", 8, 9)), Violation},
	} {
		h := History{Init: map[string]string{"x": "init"}, Ops: tc.ops}
		if got := ReleaseConsistent(h); got.Verdict != tc.want {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
