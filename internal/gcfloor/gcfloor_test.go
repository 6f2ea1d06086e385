package gcfloor

import (
	"runtime"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		percent     int
		live, floor uint64
		want        int
	}{
		{200, 0, 128 << 20, 200},         // nothing measured yet
		{200, 256 << 20, 128 << 20, 200}, // above the floor: GOGC as set
		{200, 128 << 20, 128 << 20, 200}, // at it
		{200, 16 << 20, 128 << 20, 700},  // 16 MiB live: the goal at 128 MiB
		{200, 64 << 20, 128 << 20, 200},  // the floor would ask for less than GOGC
		{100, 1, 1 << 62, 1 << 30},       // capped
		{50, 100 << 20, 128 << 20, 50},   // the floor's 28% is below GOGC
	} {
		if got := Percent(tc.percent, tc.live, tc.floor); got != tc.want {
			t.Errorf("Percent(%d, %d, %d) = %d; want %d", tc.percent, tc.live, tc.floor, got, tc.want)
		}
	}
}

func TestOnEachGC(t *testing.T) {
	calls := make(chan struct{}, 16)
	onEachGC(func() {
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	for i := range 2 {
		runtime.GC()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("no call after collection %d", i+1)
		}
	}
}
