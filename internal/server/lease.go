package server

import (
	"context"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol/lease"
)

// leaseStatser is what a lease keyspace's replica offers the server: its
// counters (lease.Replica.Stats). Detected rather than asserted on the
// concrete type, so a wrapper around the replica that passes Stats on
// keeps its metrics.
type leaseStatser interface{ Stats(now int64) lease.Stats }

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

// leaseStats reads the counters of the named keyspaces whose replicas
// report lease.Stats. It reads them on the node's event loop, which owns
// the replicas; if ctx ends first it returns the error and nothing else
// (the loop may still run the read later, into a map nobody looks at).
func leaseStats(ctx context.Context, nd *node.Node, names []string) (map[string]lease.Stats, error) {
	out := map[string]lease.Stats{}
	err := nd.Inspect(ctx, func(r env.Replica, now int64) {
		mux, ok := r.(*keyspace.Mux)
		if !ok {
			return
		}
		for _, name := range names {
			if s, ok := mux.Replica(name).(leaseStatser); ok {
				out[name] = s.Stats(now)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// leaseMetrics are s as the lightcone_lease_* series.
func leaseMetrics(s lease.Stats) []metrics.Stat {
	c := func(name, help string, v uint64) metrics.Stat {
		return metrics.Stat{Name: "lease_" + name, Help: help, Value: float64(v)}
	}
	g := func(name, help string, v int) metrics.Stat {
		return metrics.Stat{Name: "lease_" + name, Help: help, Gauge: true, Value: float64(v)}
	}
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

// exportLeaseStats registers the lightcone_lease_* series of the named
// lease keyspaces, read at each scrape.
func exportLeaseStats(m *metrics.Metrics, nd *node.Node, names []string) {
	if len(names) == 0 {
		return
	}
	m.AddKeyspaceStats(func() (map[string][]metrics.Stat, error) {
		ctx, cancel := context.WithTimeout(context.Background(), statsWait)
		defer cancel()
		st, err := leaseStats(ctx, nd, names)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]metrics.Stat, len(st))
		for ks, s := range st {
			out[ks] = leaseMetrics(s)
		}
		return out, nil
	})
}
