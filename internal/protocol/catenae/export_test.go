package catenae

// UnsafeNoValidation makes cfg decide a conflicting component on the
// region's own order, skipping the majority vote (teeth tests only).
func UnsafeNoValidation(cfg *Config) { cfg.unsafeNoValidation = true }

// UnsafeReorderChain makes cfg order each key of a component by arrival
// at that key (teeth tests only).
func UnsafeReorderChain(cfg *Config) { cfg.unsafeReorderChain = true }
