package quorum

// UnsafeIgnoreCond makes replicas apply conditional writes without
// checking them (teeth tests only).
func UnsafeIgnoreCond(c *Config) { c.ignoreCond = true }

// UnsafeSkipQuery makes query-ordered writes skip their query round and
// still not wait (teeth tests only).
func UnsafeSkipQuery(c *Config) { c.skipQuery = true }
