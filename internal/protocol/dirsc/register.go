package dirsc

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
)

// Name is the protocol's name in configuration.
const Name = "sc"

func init() {
	protocol.Register(protocol.Definition{
		Name:        Name,
		Title:       "directory-based SC (seed 002)",
		Summary:     "one frontend per region holds rows Modified/Shared/Invalid under a central directory that invalidates; linearizable per key",
		NewSettings: func() any { return new(Config) },
		Build:       build,
		Demo: []protocol.Preset{
			// The demo's default world has 500 ms one-way links: resends
			// wait longer than a round trip, and a row's queue may take
			// several round trips to reach an operation.
			{Label: "directory SC", Settings: "{op_timeout: 15s, resend_interval: 1500ms}",
				Note: "each row is served by one frontend at a time: the directory (in the last region) moves it, invalidating shared readers, so a region's first access to a row crosses the WAN"},
		},
		MessageTypes: MessageTypes(),
	})
}

type registered struct{ *Keyspace }

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	ks, err := NewKeyspace(t, *settings.(*Config))
	if err != nil {
		return nil, err
	}
	return registered{ks}, nil
}

func (k registered) Settings() any { c := k.Config(); return &c }

// Model: every read and write of a row is served by the one frontend
// allowed to serve it at that moment, in an order the directory's grants
// make real-time consistent (doc.go, "Guarantee").
func (k registered) Model() string { return "linearizable" }

// ClockBound: only drift is assumed (MaxDriftPPM), not offset.
func (k registered) ClockBound() time.Duration { return 0 }

func (k registered) Describe() string {
	c := k.Config()
	return fmt.Sprintf("sc (directory-based SC) directory=%dx%v%s share_lease=%s max_drift=%gppm guarantee=linearizable",
		c.DirectoryReplicas, c.DirectoryRegions, c.DescribeShards(), c.ShareLease, c.MaxDriftPPM)
}

// Floor: a hit is local; a miss needs the directory (and, for a read, a
// sync): the floor is the best case, a hit.
func (k registered) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	return 0
}

// Load: preloaded rows are stored as load records, read by the loader
// frontend (Modified) and every directory replica.
func (k registered) Load(key string, rec store.Record) (string, store.Record) {
	return loadKey(key), rec
}

// Counters implements protocol.Counted: the gauge directory_leader counts
// the directory groups this node leads (as it knows it): 1 or 0 with no
// directory_shards.
func (r *Replica) Counters(int64) []protocol.Counter {
	lead := 0
	for _, d := range r.dirs {
		if d != nil && d.g.IsLeader() {
			lead++
		}
	}
	feLead := 0
	if r.fe.g.IsLeader() {
		feLead = 1
	}
	return []protocol.Counter{
		protocol.Gauge("directory_leader", "How many directory replica groups this node leads (the default one and directory_shards'; 0 or 1 without shards).", lead),
		protocol.Gauge("frontend_leader", "1 if this node leads its region's frontend group (acts as the region's frontend), else 0.", feLead),
	}
}
