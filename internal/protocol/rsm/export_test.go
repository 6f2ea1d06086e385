package rsm

// SkipHardState makes groups built from c not persist raft's HardState
// (the teeth test: persist before send broken).
func SkipHardState(c *Config) { c.unsafeSkipHardState = true }
