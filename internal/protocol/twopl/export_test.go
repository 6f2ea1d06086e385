package twopl

// UnsafeOneRegion decides on one region's grant and commits on one
// region's apply (teeth tests).
func UnsafeOneRegion(c *Config) { c.unsafeOneRegion = true }

// Optimistic makes c run OCC (what protocol occ builds).
func Optimistic(c *Config) { c.optimistic = true }
