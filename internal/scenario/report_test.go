package scenario

import (
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestCountAbove: countAbove's walk of newHist's buckets gives exactly the
// sum over Distribution's bars, for random latencies and thresholds.
func TestCountAbove(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		h := newHist()
		for range 1 + r.IntN(3000) {
			// Latencies from 1 µs to minutes, most near a few ms.
			v := min(int64(1+r.ExpFloat64()*float64(int64(1)<<r.IntN(30))), h.HighestTrackableValue())
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		for _, limit := range []int64{0, 1, 2047, 2048, 4095, 4096, r.Int64N(1 << 20), r.Int64N(1 << 32)} {
			if got, want := countAbove(h, limit), distAbove(h, limit); got != want {
				t.Fatalf("histogram %d: countAbove(%d) = %v; want %v", i, limit, got, want)
			}
			// Another geometry takes the general path.
			g := hdrhistogram.New(1, 1<<40, 2)
			g.Merge(h)
			if got, want := countAbove(g, limit), distAbove(g, limit); got != want {
				t.Fatalf("histogram %d, 2 digits: countAbove(%d) = %v; want %v", i, limit, got, want)
			}
		}
	}
}

// distAbove is countAbove as RowOf computed it before: a sum over every bar
// of Distribution.
func distAbove(h *hdrhistogram.Histogram, limit int64) float64 {
	above := 0.0
	for _, b := range h.Distribution() {
		if b.From > limit {
			above += float64(b.Count)
		} else if b.To > limit {
			above += float64(b.Count) * float64(b.To-limit) / float64(b.To-b.From+1)
		}
	}
	return above
}
