package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a Clock a test steps: wall and mono advance together by
// Advance; Step moves only the wall clock.
type fakeClock struct{ wall, mono atomic.Int64 }

func (c *fakeClock) Wall() int64         { return c.wall.Load() }
func (c *fakeClock) Mono() time.Duration { return time.Duration(c.mono.Load()) }
func (c *fakeClock) Advance(d time.Duration) {
	c.wall.Add(int64(d))
	c.mono.Add(int64(d))
}
func (c *fakeClock) Step(d time.Duration) { c.wall.Add(int64(d)) }

// TestNowNeverStepsWithTheWallClock: Env.Now is the boot wall time plus
// monotonic time, so stepping the wall clock back (or forward) changes
// Wall and not Now: a lease measured on Now cannot be stretched or cut by
// an NTP step or an operator's `date -s` (env.Env.Now; lease doc.go).
func TestNowNeverStepsWithTheWallClock(t *testing.T) {
	clk := &fakeClock{}
	clk.wall.Store(1_700_000_000e9)
	clk.mono.Store(int64(42 * time.Second))
	n := startTestNode(t, Config{Clock: clk})
	ctx := context.Background()
	read := func() (now, wall int64) {
		if err := n.Do(ctx, func() { now, wall = n.Now(), n.Wall() }); err != nil {
			t.Fatal(err)
		}
		return now, wall
	}
	now0, wall0 := read()
	if now0 != 1_700_000_000e9 || wall0 != now0 {
		t.Fatalf("at boot Now = %d, Wall = %d; want both the wall clock %d", now0, wall0, int64(1_700_000_000e9))
	}
	clk.Advance(3 * time.Second)
	clk.Step(-10 * time.Second) // the wall clock jumps back
	now1, wall1 := read()
	if got := time.Duration(now1 - now0); got != 3*time.Second {
		t.Errorf("after 3s and a -10s wall step, Now advanced %s; want 3s", got)
	}
	if got := time.Duration(wall1 - wall0); got != -7*time.Second {
		t.Errorf("Wall moved %s; want -7s (it follows the system clock)", got)
	}
	clk.Step(time.Hour) // and far forward
	if now2, _ := read(); now2 != now1 {
		t.Errorf("a +1h wall step moved Now by %s; want 0", time.Duration(now2-now1))
	}
}

// TestSteppableClockStepsOnlyTheWall: the fault hook's clock moves Wall by
// each step, cumulatively, and leaves Mono (so Env.Now) alone.
func TestSteppableClockStepsOnlyTheWall(t *testing.T) {
	base := &fakeClock{}
	base.wall.Store(1_700_000_000e9)
	base.mono.Store(int64(7 * time.Second))
	c := &SteppableClock{Base: base}
	if off := c.Step(3 * time.Second); off != 3*time.Second {
		t.Fatalf("Step(3s) = %v; want offset 3s", off)
	}
	if off := c.Step(-5 * time.Second); off != -2*time.Second {
		t.Fatalf("Step(-5s) after Step(3s) = %v; want offset -2s", off)
	}
	if got, want := c.Wall(), int64(1_700_000_000e9-2e9); got != want {
		t.Errorf("Wall() = %d; want %d", got, want)
	}
	if got := c.Mono(); got != 7*time.Second {
		t.Errorf("Mono() = %v; want 7s (steps never move the monotonic clock)", got)
	}
}
