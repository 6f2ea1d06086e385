package quorum

// UnsafeIgnoreCond makes replicas apply conditional writes without
// checking them (teeth tests only).
func UnsafeIgnoreCond(c *Config) { c.ignoreCond = true }
