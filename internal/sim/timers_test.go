package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
)

// TestPendingTimers checks pendingTimers against a map: timers set in
// order and taken (fired or cancelled) in random order, some only after
// many more than the window holds were set (they leave the ring), some
// taken twice or never set, and resets (crashes) that forget them all.
func TestPendingTimers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ts pendingTimers
	ref := map[env.TimerID]uint32{}
	var next env.TimerID
	var live []env.TimerID // pending in ref, in order set
	evicted := 0           // timers that left the ring for the map
	for step := 0; step < 400_000; step++ {
		switch r := rng.IntN(100); {
		case r < 50:
			next++
			slot := uint32(rng.Uint32())
			before := len(ts.old)
			ts.add(next, int(next), slot)
			evicted += len(ts.old) - before
			ref[next] = slot
			live = append(live, next)
		case r < 99 && len(live) > 0:
			// Mostly a recent timer; sometimes one of the oldest, which
			// may have left the ring; sometimes an ID already taken.
			var id env.TimerID
			switch k := rng.IntN(20); {
			case k == 0:
				id = live[rng.IntN(min(len(live), 4))]
			case k == 1:
				id = env.TimerID(rng.Int64N(int64(next) + 2))
			default:
				id = live[len(live)-1-rng.IntN(min(len(live), 64))]
			}
			got, ok := ts.take(id)
			want, wantOK := ref[id]
			if ok != wantOK || ok && (got.slot != want || got.payload != int(id)) {
				t.Fatalf("step %d: take(%d) = %+v, %v; want slot %d, %v", step, id, got, ok, want, wantOK)
			}
			delete(ref, id)
			for i, l := range live {
				if l == id {
					live = append(live[:i], live[i+1:]...)
					break
				}
			}
		case r == 99 && rng.IntN(1000) == 0:
			ts.reset()
			clear(ref)
			live = live[:0]
		}
		if ts.n > maxTimerWindow {
			t.Fatalf("step %d: the ring holds %d IDs; at most %d", step, ts.n, maxTimerWindow)
		}
	}
	if evicted < 100 {
		t.Fatalf("%d timers left the ring: the test hardly reaches the map", evicted)
	}
}
