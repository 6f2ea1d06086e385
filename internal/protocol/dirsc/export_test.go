package dirsc

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// UnsafeNoInvalidationWait makes the directory grant as soon as it has sent
// its invalidations, without waiting for their acknowledgements or for
// sharers' leases to end (teeth tests only).
func UnsafeNoInvalidationWait(c *Config) { c.noInvalidationWait = true }

// ProbeGrants calls f with the sender and its clock reading for every
// grant a directory replica sends (failover tests only).
func ProbeGrants(c *Config, f func(from wire.NodeID, at int64)) {
	c.probe = func(e env.Env, _ *Grant) { f(e.Self(), e.Now()) }
}

// ProbeGrantKeys calls f with the sender and the row of every grant a
// directory replica sends (shard tests only).
func ProbeGrantKeys(c *Config, f func(from wire.NodeID, key string)) {
	c.probe = func(e env.Env, g *Grant) { f(e.Self(), g.Key) }
}

// ProbeServes calls f with the node and its clock reading for every client
// operation a frontend member answers successfully (failover tests only).
func ProbeServes(c *Config, f func(from wire.NodeID, at int64)) {
	c.serveProbe = func(e env.Env) { f(e.Self(), e.Now()) }
}
