package quorum

import "time"

// UnsafeIgnoreCond makes replicas apply conditional writes without
// checking them (teeth tests only).
func UnsafeIgnoreCond(c *Config) { c.ignoreCond = true }

// UnsafeSkipQuery makes query-ordered writes skip their query round and
// still not wait (teeth tests only).
func UnsafeSkipQuery(c *Config) { c.skipQuery = true }

// UnsafeShaveWait makes commit_wait measured wait d less than its bound.
func UnsafeShaveWait(c *Config, d time.Duration) { c.shaveWait = d }

// UnsafeKeepStale makes commit_wait measured keep a peer's tightest bound
// across its silences and incarnations.
func UnsafeKeepStale(c *Config) { c.keepStale = true }

// UnsafeBlindBelowCeiling keeps every replica's ceiling at its start, so a
// write stamped above it replaces the key's record without reading it,
// however new that record is.
func UnsafeBlindBelowCeiling(c *Config) { c.blindBelowCeiling = true }
