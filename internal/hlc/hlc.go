// Package hlc implements a hybrid logical clock (Kulkarni et al., "Logical
// Physical Clocks", 2014). A Timestamp's wall part tracks the largest physical
// clock reading seen; its logical part orders events that share a wall value.
//
// The clock reads no time itself: callers pass the node's physical clock
// reading (env.Env.Now), so the package is usable from protocol code.
package hlc

import "fmt"

// Timestamp is a hybrid logical timestamp. The zero value is before every
// timestamp a Clock issues.
type Timestamp struct {
	WallNanos int64  // physical component, nanoseconds since the Unix epoch
	Logical   uint32 // orders events within one WallNanos
}

// Less reports whether t orders before u.
func (t Timestamp) Less(u Timestamp) bool {
	if t.WallNanos != u.WallNanos {
		return t.WallNanos < u.WallNanos
	}
	return t.Logical < u.Logical
}

// IsZero reports whether t is the zero timestamp.
func (t Timestamp) IsZero() bool { return t == Timestamp{} }

func (t Timestamp) String() string { return fmt.Sprintf("%d.%d", t.WallNanos, t.Logical) }

// Clock is one node's hybrid logical clock. It is not safe for concurrent
// use; each node's event loop owns one.
type Clock struct {
	last Timestamp
}

// Now returns a timestamp greater than every timestamp this clock issued or
// observed, given the node's physical clock reading physNanos.
func (c *Clock) Now(physNanos int64) Timestamp {
	if physNanos > c.last.WallNanos {
		c.last = Timestamp{WallNanos: physNanos}
	} else {
		c.last.Logical++
	}
	return c.last
}

// Observe folds a timestamp received from another node into the clock so that
// later timestamps order after it (the HLC receive rule).
func (c *Clock) Observe(physNanos int64, remote Timestamp) {
	if c.last.Less(remote) {
		c.last = remote
	}
	if physNanos > c.last.WallNanos {
		c.last = Timestamp{WallNanos: physNanos}
	}
}

// Last returns the largest timestamp issued or observed.
func (c *Clock) Last() Timestamp { return c.last }
