package lease

// UnsafeNoElectionFence makes a new master ignore the leases its
// predecessor may have granted (teeth tests only).
func UnsafeNoElectionFence(c *Config) { c.noElectionFence = true }
