package dirrc

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// SkipSync makes frontends serve a grant from their own copy without
// syncing from the last holder (teeth tests only).
func SkipSync(c *Config) { c.noSync = true }

// ProbeEvents calls f with the node, its clock reading and the event for
// every grant a directory replica sends ("grant"), every forced release
// the leader applies ("forced_release") and every client a frontend
// releases after hold_timeout ("client_eviction") (tests only).
func ProbeEvents(c *Config, f func(node wire.NodeID, at int64, event string)) {
	c.probe = func(e env.Env, event string) { f(e.Self(), e.Now(), event) }
}
