package server

import (
	"context"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/protocol/meteor"
)

// leaseStatser and meteorStatser are what lease and meteor keyspaces'
// replicas offer the server: their counters. Detected rather than asserted
// on the concrete type, so a wrapper around the replica that passes Stats
// on keeps its metrics.
type (
	leaseStatser  interface{ Stats(now int64) lease.Stats }
	meteorStatser interface{ Stats() meteor.Stats }
)

// statsWait bounds how long a scrape or a /status request waits for the
// event loop to read the counters.
const statsWait = 2 * time.Second

// LeaseStatus is a lease keyspace's counters and gauges on this node, as
// /status shows them (the lightcone_lease_* metrics, by the same names).
type LeaseStatus struct {
	Renewals           uint64 `json:"renewals"`
	Grants             uint64 `json:"grants"`
	Invalidations      uint64 `json:"invalidations"`
	Confirms           uint64 `json:"confirms"`
	Elections          uint64 `json:"elections"`
	Migrations         uint64 `json:"migrations"`
	Rollbacks          uint64 `json:"rollbacks"`
	AffiliatesAttached uint64 `json:"affiliates_attached"`
	AffiliatesDetached uint64 `json:"affiliates_detached"`
	LeasesHeld         int    `json:"leases_held"`
	MastersHeld        int    `json:"masters_held"`
}

func leaseStatus(s lease.Stats) *LeaseStatus {
	return &LeaseStatus{Renewals: s.Renewals, Grants: s.Grants, Invalidations: s.Invalidations, Confirms: s.Confirms,
		Elections: s.Elections, Migrations: s.Migrations, Rollbacks: s.Rollbacks,
		AffiliatesAttached: s.Attached, AffiliatesDetached: s.Detached, LeasesHeld: s.LeasesHeld, MastersHeld: s.MastersHeld}
}

// MeteorStatus is a meteor keyspace's counters on this node, as /status
// shows them (the lightcone_meteor_* metrics, by the same names).
type MeteorStatus struct {
	Applied       uint64 `json:"applied"`
	Refused       uint64 `json:"refused"`
	Compacted     uint64 `json:"compacted"`
	Restamps      uint64 `json:"restamps"`
	ReadFailovers uint64 `json:"read_failovers"`
	Pulls         uint64 `json:"pulls"`
	ReadsWaiting  int    `json:"reads_waiting"`
}

func meteorStatus(s meteor.Stats) *MeteorStatus {
	return &MeteorStatus{Applied: s.Applied, Refused: s.Refused, Compacted: s.Compacted, Restamps: s.Restamps,
		ReadFailovers: s.ReadFailovers, Pulls: s.Pulls, ReadsWaiting: s.ReadsWaiting}
}

// protoStats is one keyspace's protocol counters: lease or meteor.
type protoStats struct {
	lease  *lease.Stats
	meteor *meteor.Stats
}

// series is s as lightcone_* series (without the prefix).
func (s protoStats) series() []metrics.Stat {
	switch {
	case s.lease != nil:
		return leaseMetrics(*s.lease)
	case s.meteor != nil:
		return meteorMetrics(*s.meteor)
	}
	return nil
}

// keyspaceStats reads the counters of the named keyspaces whose replicas
// report them. It reads them on the node's event loop, which owns the
// replicas; if ctx ends first it returns the error and nothing else (the
// loop may still run the read later, into a map nobody looks at).
func keyspaceStats(ctx context.Context, nd *node.Node, names []string) (map[string]protoStats, error) {
	out := map[string]protoStats{}
	err := nd.Inspect(ctx, func(r env.Replica, now int64) {
		mux, ok := r.(*keyspace.Mux)
		if !ok {
			return
		}
		for _, name := range names {
			switch rep := mux.Replica(name).(type) {
			case leaseStatser:
				s := rep.Stats(now)
				out[name] = protoStats{lease: &s}
			case meteorStatser:
				s := rep.Stats()
				out[name] = protoStats{meteor: &s}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// statMakers returns constructors of a protocol's counters and gauges,
// named prefix_name.
func statMakers(prefix string) (counter func(name, help string, v uint64) metrics.Stat, gauge func(name, help string, v int) metrics.Stat) {
	counter = func(name, help string, v uint64) metrics.Stat {
		return metrics.Stat{Name: prefix + name, Help: help, Value: float64(v)}
	}
	gauge = func(name, help string, v int) metrics.Stat {
		return metrics.Stat{Name: prefix + name, Help: help, Gauge: true, Value: float64(v)}
	}
	return counter, gauge
}

// leaseMetrics are s as the lightcone_lease_* series.
func leaseMetrics(s lease.Stats) []metrics.Stat {
	c, g := statMakers("lease_")
	return []metrics.Stat{
		c("renewals_total", "Lease renewals this node asked a master for.", s.Renewals),
		c("grants_total", "Leases this node granted as a key's master.", s.Grants),
		c("invalidations_total", "Lease holders an active write had to update or wait out, at this node as master.", s.Invalidations),
		c("confirms_total", "Master-lease confirmation rounds this node sent as master.", s.Confirms),
		c("elections_total", "Elections this node won.", s.Elections),
		c("migrations_total", "Migrations that made this node a key's master.", s.Migrations),
		c("rollbacks_total", "Migrations this node took back after the target failed to take over.", s.Rollbacks),
		c("affiliates_attached_total", "Affiliated nodes this node attached for hot keys.", s.Attached),
		c("affiliates_detached_total", "Affiliated nodes this node detached.", s.Detached),
		g("leases_held", "Valid leases this node holds.", s.LeasesHeld),
		g("masters_held", "Keys this node is master of (among those it has loaded).", s.MastersHeld),
	}
}

// meteorMetrics are s as the lightcone_meteor_* series.
func meteorMetrics(s meteor.Stats) []metrics.Stat {
	c, g := statMakers("meteor_")
	return []metrics.Stat{
		c("applied_total", "Write copies this node applied as a replica.", s.Applied),
		c("refused_total", "Write copies this node refused because its closure had passed their stamp (kept as copies).", s.Refused),
		c("compacted_total", "Versions compaction dropped at this node.", s.Compacted),
		c("restamps_total", "Writes this node restamped as gateway after enough replicas refused them.", s.Restamps),
		c("read_failovers_total", "Reads this node resent to the next replica as gateway.", s.ReadFailovers),
		c("pulls_total", "Pulls this node sent for a peer's versions or a value.", s.Pulls),
		g("reads_waiting", "Reads waiting at this node for statuses or commit decisions.", s.ReadsWaiting),
	}
}

// exportKeyspaceStats registers the lightcone_lease_* and
// lightcone_meteor_* series of the named keyspaces, read at each scrape.
func exportKeyspaceStats(m *metrics.Metrics, nd *node.Node, names []string) {
	if len(names) == 0 {
		return
	}
	m.AddKeyspaceStats(func() (map[string][]metrics.Stat, error) {
		ctx, cancel := context.WithTimeout(context.Background(), statsWait)
		defer cancel()
		st, err := keyspaceStats(ctx, nd, names)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]metrics.Stat, len(st))
		for ks, s := range st {
			out[ks] = s.series()
		}
		return out, nil
	})
}
