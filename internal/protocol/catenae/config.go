package catenae

import (
	"fmt"
	"time"
)

// Config is the protocol's settings (docs/sim.md, "catenae").
type Config struct {
	// Epoch is the epoch length: how often each region's coordinator
	// closes the transactions it received into a batch and sends its epoch
	// message (§4.3.2). Default 10ms, the thesis's; 1ms..1s.
	Epoch time.Duration `yaml:"epoch"`
	// ChainService is the mean service time of one transaction at one
	// chain server (one key of its chain), exponentially distributed per
	// region: the execution speed that orders conflicting transactions
	// (doc.go, "Execution"). Default 1ms; at most 1s.
	ChainService time.Duration `yaml:"chain_service"`
	// ChainHop is the intra-region hop from one chain server to the next.
	// Default 250µs.
	ChainHop time.Duration `yaml:"chain_hop"`
	// Order is how a region orders the conflicting transactions of a batch:
	// "speed" (the thesis: by their speed through their chains, then a
	// majority vote on the order) or "canonical" (every region the same
	// order, by transaction ID: no vote, a conflicting transaction commits
	// as fast as a non-conflicting one; not in the thesis). Default speed.
	Order string `yaml:"order"`
	// Resend bounds how many of its own epoch payloads a coordinator sends
	// in one epoch message to a region that has not acknowledged them (the
	// thesis sends the last three; older ones are resent when overdue).
	// Default 32.
	Resend int `yaml:"resend"`

	// unsafeNoValidation decides a conflicting component on the region's
	// own order, without the majority vote (teeth tests only).
	unsafeNoValidation bool
	// unsafeReorderChain orders each key of a component by the
	// transactions' arrival at that key, not by one order for the whole
	// chain (teeth tests only).
	unsafeReorderChain bool
}

// Orders (Config.Order).
const (
	OrderSpeed     = "speed"
	OrderCanonical = "canonical"
)

// Defaults.
const (
	DefaultEpoch        = 10 * time.Millisecond
	DefaultChainService = time.Millisecond
	DefaultChainHop     = 250 * time.Microsecond
	DefaultResend       = 32
)

// EnsureDefaults fills zero fields with the documented defaults.
func (c *Config) EnsureDefaults() {
	if c.Epoch == 0 {
		c.Epoch = DefaultEpoch
	}
	if c.ChainService == 0 {
		c.ChainService = DefaultChainService
	}
	if c.ChainHop == 0 {
		c.ChainHop = DefaultChainHop
	}
	if c.Order == "" {
		c.Order = OrderSpeed
	}
	if c.Resend == 0 {
		c.Resend = DefaultResend
	}
}

// Validate checks a config whose defaults are filled.
func (c *Config) Validate() error {
	switch {
	case c.Epoch < time.Millisecond || c.Epoch > time.Second:
		return fmt.Errorf("catenae: epoch %s; want 1ms..1s", c.Epoch)
	case c.ChainService < 0 || c.ChainService > time.Second:
		return fmt.Errorf("catenae: chain_service %s; want 0..1s", c.ChainService)
	case c.ChainHop < 0 || c.ChainHop > time.Second:
		return fmt.Errorf("catenae: chain_hop %s; want 0..1s", c.ChainHop)
	case c.Order != OrderSpeed && c.Order != OrderCanonical:
		return fmt.Errorf("catenae: order %q; want %s or %s", c.Order, OrderSpeed, OrderCanonical)
	case c.Resend < 3 || c.Resend > 1024:
		return fmt.Errorf("catenae: resend %d; want 3..1024", c.Resend)
	}
	return nil
}
