package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// protocol is what a run needs of a keyspace protocol beyond its replicas.
type protocol interface {
	factory() env.Factory
	// holders returns the nodes that store key (for preloading).
	holders(key string) []wire.NodeID
	// model is the consistency model the protocol claims for this policy.
	model() string
	// floor is the network time a read (write=false) or write from a client
	// in region cannot avoid, given a region-to-region one-way delay.
	floor(region int, write bool, oneWay func(a, b int) time.Duration) time.Duration
	// describe is the policy in one line.
	describe() string
	// clockBound is the bound on every clock's distance from true time that
	// the model's claim assumes (0: no assumption).
	clockBound() time.Duration
}

func newProtocol(c Config, t *topo.Topology) (protocol, error) {
	switch c.Protocol {
	case "quorum":
		return newQuorum(c.Quorum, t)
	case "lease":
		return newLease(c.Lease, t)
	case "meteor":
		return newMeteor(c.Meteor, t)
	}
	return nil, fmt.Errorf("protocol: unknown protocol %q (valid: %s)", c.Protocol, strings.Join(Protocols(), ", "))
}

type quorumProto struct {
	ks        *quorum.Keyspace
	guarantee quorum.Guarantee
	topo      *topo.Topology
}

func newQuorum(p QuorumPolicy, t *topo.Topology) (*quorumProto, error) {
	cfg := quorum.Config{
		MaxClockOffset:   p.MaxClockOffset,
		ReadTimeout:      p.ReadTimeout,
		WriteTimeout:     p.WriteTimeout,
		SpeculativeRetry: p.SpeculativeRetry,
	}
	if p.ReplicasPerRegion < 1 || p.ReplicasPerRegion > t.World.NodesPerRegion {
		return nil, fmt.Errorf("quorum.replicas_per_region: %d; must be between 1 and the world's %d nodes per region", p.ReplicasPerRegion, t.World.NodesPerRegion)
	}
	for range t.World.Regions {
		cfg.ReplicasPerRegion = append(cfg.ReplicasPerRegion, p.ReplicasPerRegion)
	}
	var err error
	if p.Read != "" {
		if cfg.Read, err = wire.ParseLevel(p.Read); err != nil {
			return nil, fmt.Errorf("quorum.read: %w", err)
		}
	}
	if p.Write != "" {
		if cfg.Write, err = wire.ParseLevel(p.Write); err != nil {
			return nil, fmt.Errorf("quorum.write: %w", err)
		}
	}
	ks, err := quorum.NewKeyspace(t, cfg)
	if err != nil {
		return nil, err
	}
	full := ks.Config()
	g, err := quorum.GuaranteeOf(full.ReplicasPerRegion, full.Read, full.Write)
	if err != nil {
		return nil, err
	}
	return &quorumProto{ks: ks, guarantee: g, topo: t}, nil
}

func (q *quorumProto) factory() env.Factory             { return q.ks.Factory() }
func (q *quorumProto) holders(key string) []wire.NodeID { return q.ks.Replicas(nil, key) }
func (q *quorumProto) model() string                    { return q.guarantee.Model() }

func (q *quorumProto) floor(region int, write bool, oneWay func(a, b int) time.Duration) time.Duration {
	c := q.ks.Config()
	l := c.Read
	if write {
		l = c.Write
	}
	return quorum.Floor(c.ReplicasPerRegion, l, region, oneWay)
}

func (q *quorumProto) clockBound() time.Duration { return q.ks.Config().MaxClockOffset }

func (q *quorumProto) describe() string {
	c := q.ks.Config()
	return fmt.Sprintf("quorum read=%s write=%s replicas/region=%d guarantee=%s max_clock_offset=%s",
		c.Read, c.Write, c.ReplicasPerRegion[0], q.guarantee, c.MaxClockOffset)
}

type leaseProto struct {
	ks   *lease.Keyspace
	topo *topo.Topology
}

func newLease(p LeasePolicy, t *topo.Topology) (*leaseProto, error) {
	ks, err := lease.NewKeyspace(t, p)
	if err != nil {
		return nil, err
	}
	return &leaseProto{ks: ks, topo: t}, nil
}

// loadVersion: lease versions are ballot-major; loaded records precede
// every write.
func (l *leaseProto) loadVersion() wire.Version { return lease.LoadVersion() }

func (l *leaseProto) factory() env.Factory             { return l.ks.Factory() }
func (l *leaseProto) holders(key string) []wire.NodeID { return l.ks.Replicas(nil, key) }

// model: GlobLease orders each key's writes at its master but makes them
// visible holder by holder, so it is sequentially consistent per key
// (docs/design/lease.md, internal/protocol/lease/doc.go).
func (l *leaseProto) model() string { return "sequential-per-key" }

// clockBound: the lease protocol assumes bounded drift, not offset; the
// run's offsets do not matter, so no offset bound is claimed here.
func (l *leaseProto) clockBound() time.Duration { return 0 }

// floor: a read under a valid lease needs no network beyond the region; a
// write needs the master and a majority of the group (its nearest half).
func (l *leaseProto) floor(region int, write bool, oneWay func(a, b int) time.Duration) time.Duration {
	if !write {
		return 0
	}
	n := len(l.topo.World.Regions)
	var best time.Duration = -1
	for m := 0; m < n; m++ { // the master may be in any region; take the nearest
		var rtts []time.Duration
		for r := 0; r < n; r++ {
			if r != m {
				rtts = append(rtts, oneWay(m, r)+oneWay(r, m))
			}
		}
		slices.Sort(rtts)
		need := n/2 + 1 - 1 // acks beyond the master's own write
		var maj time.Duration
		if need > 0 {
			maj = rtts[need-1]
		}
		d := oneWay(region, m) + oneWay(m, region) + maj
		if best < 0 || d < best {
			best = d
		}
	}
	return best
}

func (l *leaseProto) describe() string {
	c := l.ks.Config()
	mode := "active"
	if c.Passive {
		mode = "passive"
	}
	extra := ""
	if c.AutoMigrate {
		extra += fmt.Sprintf(" auto_migrate=%s/%g", c.MigrateWindow, c.MigrateThreshold)
	}
	if c.Affiliates > 0 {
		extra += fmt.Sprintf(" affiliates=%d", c.Affiliates)
	}
	return fmt.Sprintf("lease (GlobLease) lease=%s update=%s master_lease=%s max_drift=%gppm%s guarantee=sequential-per-key", c.LeaseLength, mode, c.MasterLease, c.MaxDriftPPM, extra)
}
