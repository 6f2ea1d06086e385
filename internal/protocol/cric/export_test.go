package cric

// UnsafeFastBelowSuper makes a fast round count its value chosen once any
// acceptor accepts it, below the super quorum (teeth tests only).
func UnsafeFastBelowSuper(c *Config) { c.unsafeFastBelowSuper = true }

// UnsafeReadCommittedOnly makes reads return the newest version with its
// commit bit set, ignoring an uncommitted higher version instead of
// writing it back (teeth tests only).
func UnsafeReadCommittedOnly(c *Config) { c.unsafeReadCommittedOnly = true }
