package hlc

import "testing"

func TestClockMonotonicAndObserves(t *testing.T) {
	var c Clock
	a := c.Now(100)
	b := c.Now(100) // same physical reading: logical bump
	if !a.Less(b) || b.WallNanos != 100 || b.Logical != 1 {
		t.Fatalf("Now(100) twice = %v, %v; want 100.0 then 100.1", a, b)
	}
	d := c.Now(50) // the physical clock stepped back: never go back
	if !b.Less(d) {
		t.Fatalf("Now(50) after %v = %v; want later", b, d)
	}
	c.Observe(60, Timestamp{WallNanos: 500, Logical: 7})
	if e := c.Now(60); !(Timestamp{WallNanos: 500, Logical: 7}).Less(e) {
		t.Fatalf("after observing 500.7, Now = %v; want later", e)
	}
	if f := c.Now(1000); f != (Timestamp{WallNanos: 1000}) {
		t.Fatalf("Now(1000) = %v; want 1000.0 (the physical clock caught up)", f)
	}
}
