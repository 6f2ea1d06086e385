package lease

// UnsafeNoElectionFence makes a new master ignore the leases its
// predecessor may have granted (teeth tests only).
func UnsafeNoElectionFence(c *Config) { c.noElectionFence = true }

// UnsafeNoAffiliateWait makes hosts acknowledge updates before their
// affiliated nodes have them (teeth tests only).
func UnsafeNoAffiliateWait(c *Config) { c.noAffiliateWait = true }
