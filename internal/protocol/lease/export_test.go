package lease

// UnsafeNoElectionFence makes a new master ignore the leases its
// predecessor may have granted (teeth tests only).
func UnsafeNoElectionFence(c *Config) { c.noElectionFence = true }

// UnsafeNoAffiliateWait makes hosts acknowledge updates before their
// affiliated nodes have them (teeth tests only).
func UnsafeNoAffiliateWait(c *Config) { c.noAffiliateWait = true }

// UnsafeIgnoreStoreErrors makes replicas read a failed store read as
// absent and carry on after a failed write, instead of fail-stopping
// (teeth tests only).
func UnsafeIgnoreStoreErrors(c *Config) { c.ignoreStoreErrors = true }

// UnsafeIgnoreCond makes masters apply conditional writes without checking
// their condition (teeth tests only).
func UnsafeIgnoreCond(c *Config) { c.ignoreCond = true }

// UnsafeEagerConflicts makes masters answer conflicts against records not
// known to be on a majority (teeth tests only).
func UnsafeEagerConflicts(c *Config) { c.eagerConflicts = true }

// UnsafePublishForever makes replicas publish their local reads with no
// end instead of their lease's (teeth tests only).
func UnsafePublishForever(c *Config) { c.publishForever = true }

// UnsafeKeepPublishedOnFreeze leaves a key's published reads in place when
// a migration freezes it (teeth tests only).
func UnsafeKeepPublishedOnFreeze(c *Config) { c.keepPublishedOnFreeze = true }
