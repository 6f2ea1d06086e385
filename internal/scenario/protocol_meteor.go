package scenario

import (
	"fmt"
	"github.com/lightcone/lightcone/internal/store"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/meteor"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

type meteorProto struct {
	ks   *meteor.Keyspace
	topo *topo.Topology
}

func newMeteor(p MeteorPolicy, t *topo.Topology) (*meteorProto, error) {
	cfg := meteor.Config{
		MaxClockSkew: p.MaxClockSkew, DispatchInterval: p.DispatchInterval, Redundant: p.Redundant,
		ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout, Theta: p.Theta, WriteLead: p.WriteLead, LeadAll: p.LeadAll, Horizon: p.Horizon,
	}
	rpr := p.ReplicasPerRegion
	if rpr == 0 {
		rpr = 1
	}
	if rpr < 1 || rpr > t.World.NodesPerRegion {
		return nil, fmt.Errorf("meteor.replicas_per_region: %d; must be between 1 and the world's %d nodes per region", rpr, t.World.NodesPerRegion)
	}
	for range t.World.Regions {
		cfg.ReplicasPerRegion = append(cfg.ReplicasPerRegion, rpr)
	}
	var err error
	if p.Write != "" {
		if cfg.Write, err = wire.ParseLevel(p.Write); err != nil {
			return nil, fmt.Errorf("meteor.write: %w", err)
		}
	}
	if p.Mode != "" {
		if cfg.Mode, err = meteor.ParseMode(p.Mode); err != nil {
			return nil, fmt.Errorf("meteor.mode: %w", err)
		}
	}
	if p.Tweak != nil {
		p.Tweak(&cfg)
	}
	ks, err := meteor.NewKeyspace(t, cfg)
	if err != nil {
		return nil, err
	}
	return &meteorProto{ks: ks, topo: t}, nil
}

func (m *meteorProto) factory() env.Factory             { return m.ks.Factory() }
func (m *meteorProto) holders(key string) []wire.NodeID { return m.ks.Replicas(nil, key) }

// loadVersion and loadRecord: meteor keeps a key's versions as a chain;
// bulk-loaded records are committed everywhere by definition.
func (m *meteorProto) loadVersion() wire.Version { return meteor.LoadVersion() }

func (m *meteorProto) loadRecord(key string, rec store.Record) (string, store.Record) {
	return meteor.LoadRecord(key, rec)
}

// model: MeteorShower claims sequential consistency (§4.2.2, Theorem 1);
// internal/protocol/meteor/doc.go says what is proved and checked.
func (m *meteorProto) model() string { return meteor.Model }

// clockBound: none. Meteor's safety uses no clock bound (its doc.go,
// "Guarantee"); skew beyond ε costs latency only, so the claimed model is
// checked whatever the clocks do.
func (m *meteorProto) clockBound() time.Duration { return 0 }

func (m *meteorProto) floor(region int, write bool, oneWay func(a, b int) time.Duration) time.Duration {
	c := m.ks.Config()
	if write {
		return quorum.Floor(c.ReplicasPerRegion, c.Write, region, oneWay)
	}
	return meteor.ReadFloor(c, region, oneWay)
}

func (m *meteorProto) describe() string {
	c := m.ks.Config()
	return fmt.Sprintf("meteor (MeteorShower) mode=%s write=%s replicas/region=%d epsilon=%s interval=%s redundant=%d write_lead=%s lead_all=%t horizon=%s guarantee=%s",
		c.Mode, c.Write, c.ReplicasPerRegion[0], c.MaxClockSkew, c.DispatchInterval, c.Redundant, c.WriteLead, c.LeadAll, c.Horizon, meteor.Model)
}
