package meteor

// UnsafeAcceptLateWrites makes replicas apply writes whose timestamps their
// closure has passed, breaking the promise their statuses made (teeth tests
// only).
func UnsafeAcceptLateWrites(c *Config) { c.acceptLate = true }
