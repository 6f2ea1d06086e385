// Package ratelog limits how often a condition that can repeat per
// operation (a full disk, a refused command, descriptors running out) is
// logged: one line per interval, with how many were suppressed since.
package ratelog

import (
	"sync"
	"time"
)

// Limiter allows one log line per Every and counts the rest. The zero
// value with Every set is ready to use; it is safe for concurrent use.
type Limiter struct {
	Every time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// AllowN reports whether to log now, and how many lines were suppressed
// since the last one that was allowed.
func (l *Limiter) AllowN() (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < l.Every {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}

// Allow reports whether to log now.
func (l *Limiter) Allow() bool { ok, _ := l.AllowN(); return ok }

// Force lets the next line through (a change of state is always logged).
func (l *Limiter) Force() {
	l.mu.Lock()
	l.last = time.Time{}
	l.mu.Unlock()
}
