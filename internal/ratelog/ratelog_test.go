package ratelog

import (
	"testing"
	"time"
)

// TestLimiter: within an interval only the first line is allowed and the
// rest are counted; Force lets the next one through with the count.
func TestLimiter(t *testing.T) {
	l := Limiter{Every: time.Hour}
	if ok, n := l.AllowN(); !ok || n != 0 {
		t.Fatalf("first: %v, %d; want allowed, 0 suppressed", ok, n)
	}
	for range 3 {
		if l.Allow() {
			t.Fatal("a second line within the interval was allowed")
		}
	}
	l.Force()
	if ok, n := l.AllowN(); !ok || n != 3 {
		t.Fatalf("after Force: %v, %d; want allowed, 3 suppressed", ok, n)
	}
}
