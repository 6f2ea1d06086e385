package dirrc

// SkipSync makes frontends serve a grant from their own copy without
// syncing from the last holder (teeth tests only).
func SkipSync(c *Config) { c.noSync = true }
