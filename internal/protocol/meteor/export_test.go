package meteor

// UnsafeAcceptLateWrites makes replicas apply writes whose timestamps their
// closure has passed, breaking the promise their statuses made (teeth tests
// only).
func UnsafeAcceptLateWrites(c *Config) { c.acceptLate = true }

// UnsafeRefuseByClock makes replicas refuse only writes stamped at or before
// their clock, not those up to the closure their statuses promised ahead of
// it (ClosureLead), breaking that promise (teeth tests only).
func UnsafeRefuseByClock(c *Config) { c.clockOnly = true }

// MaxKeyInfos is the bound of a replica's key cache (versions.go).
const MaxKeyInfos = maxKeyInfos

// KeyInfos is how many keys replica r caches.
func KeyInfos(r *Replica) int { return len(r.keys) }
