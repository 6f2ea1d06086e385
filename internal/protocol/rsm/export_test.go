package rsm

// SkipHardState makes groups built from c not persist raft's HardState
// (the teeth test: persist before send broken).
func SkipHardState(c *Config) { c.unsafeSkipHardState = true }

// CompactFirst makes groups built from c delete compacted entries before
// they store the snapshot covering them (the teeth test: a torn crash in
// between loses committed entries).
func CompactFirst(c *Config) { c.unsafeCompactFirst = true }
