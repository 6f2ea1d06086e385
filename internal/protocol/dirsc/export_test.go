package dirsc

// UnsafeNoInvalidationWait makes the directory grant as soon as it has sent
// its invalidations, without waiting for their acknowledgements or for
// sharers' leases to end (teeth tests only).
func UnsafeNoInvalidationWait(c *Config) { c.noInvalidationWait = true }
