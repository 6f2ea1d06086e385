package twopl

import (
	"fmt"
	"time"
)

// Config is the protocol's settings.
type Config struct {
	// LockTimeout bounds how long a transaction waits for its locks: a
	// region's coordinator refuses a lock request still queued after it,
	// and a transaction manager aborts an attempt without a majority of
	// grants after it. Default 1s.
	LockTimeout time.Duration `yaml:"lock_timeout"`
	// Resend is how often a transaction manager resends what is not yet
	// answered (lock requests, decisions), so lost messages cost a resend,
	// not the transaction. Default 200ms.
	Resend time.Duration `yaml:"resend"`
	// Retries is how many times an aborted transaction (wounded, lock
	// timeout, refused) is retried internally, with its original
	// timestamp, before the client gets ErrUnavailable. Default 1 (the
	// thesis's OCC retries once; 2PL does the same here); -1: none.
	Retries int `yaml:"retries"`

	// optimistic runs OCC instead of 2PL (protocol occ, occ.go).
	optimistic bool
	// unsafeOneRegion decides on the first region's grant instead of a
	// majority's and acknowledges after one region applied (teeth tests
	// only: shows majority locking is what makes it serializable).
	unsafeOneRegion bool
}

// Defaults.
const (
	DefaultLockTimeout = time.Second
	DefaultResend      = 200 * time.Millisecond
	DefaultRetries     = 1
)

// EnsureDefaults fills zero fields with the documented defaults.
func (c *Config) EnsureDefaults() {
	if c.LockTimeout == 0 {
		c.LockTimeout = DefaultLockTimeout
	}
	if c.Resend == 0 {
		c.Resend = DefaultResend
	}
	switch c.Retries {
	case 0:
		c.Retries = DefaultRetries
	case -1:
		c.Retries = 0
	}
}

// Validate checks a config whose defaults are filled.
func (c *Config) Validate() error {
	switch {
	case c.LockTimeout < time.Millisecond:
		return fmt.Errorf("twopl: lock_timeout %s; want at least 1ms", c.LockTimeout)
	case c.Resend < time.Millisecond || c.Resend > c.LockTimeout:
		return fmt.Errorf("twopl: resend %s; want 1ms..lock_timeout (%s)", c.Resend, c.LockTimeout)
	case c.Retries < 0 || c.Retries > 10:
		return fmt.Errorf("twopl: retries %d; want -1 (none) or 0..10", c.Retries)
	}
	return nil
}
