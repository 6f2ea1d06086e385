package meteor

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
)

// Name is the protocol's name in configuration.
const Name = "meteor"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "MeteorShower",
		Summary:      "quorum writes, reads answered from status messages pushed by every replica; sequentially consistent across keys",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		Demo: []protocol.Preset{
			// MeteorShower2: θt from the measured latencies less ε = 2 ms.
			{Label: "MeteorShower M2", Settings: "{mode: M2, write: QUORUM}",
				Note: "reads are answered from the statuses every replica pushes each 10 ms; writes wait for a majority"},
		},
	})
}

// registered is a meteor keyspace as the registry sees it.
type registered struct{ *Keyspace }

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	ks, err := NewKeyspace(t, *settings.(*Config))
	if err != nil {
		return nil, err
	}
	return registered{ks}, nil
}

func (k registered) Settings() any { c := k.Config(); return &c }

// Model: MeteorShower claims sequential consistency (§4.2.2, Theorem 1);
// doc.go says what is proved and checked.
func (k registered) Model() string { return Model }

// ClockBound: none. Meteor's safety uses no clock bound (doc.go,
// "Guarantee"); skew beyond ε costs latency only, so the claimed model is
// checked whatever the clocks do.
func (k registered) ClockBound() time.Duration { return 0 }

func (k registered) Describe() string {
	c := k.Config()
	return fmt.Sprintf("meteor (MeteorShower) mode=%s write=%s replicas/region=%d epsilon=%s interval=%s redundant=%d write_lead=%s closure_lead=%s lead_all=%t horizon=%s guarantee=%s",
		c.Mode, c.Write, c.ReplicasPerRegion[0], c.MaxClockSkew, c.DispatchInterval, c.Redundant, c.WriteLead, c.closureLead(), c.LeadAll, c.Horizon, Model)
}

// Floor: a write waits for the write level's w nearest replicas (one local
// replica may be the gateway itself: protocol.ReplicaRTTs); a read for
// statuses (ReadFloor).
func (k registered) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	c := k.Config()
	if op == protocol.Read {
		return ReadFloor(c, region, oneWay)
	}
	rtts := protocol.ReplicaRTTs(c.ReplicasPerRegion, region, oneWay)
	if len(rtts) == 0 {
		return 0
	}
	return rtts[c.writeAcks(len(rtts))-1].RTT
}

// Load: meteor keeps a key's versions as a chain; bulk-loaded records are
// committed everywhere by definition.
func (k registered) Load(key string, rec store.Record) (string, store.Record) {
	return LoadRecord(key, rec)
}

// Counters are the replica's counters and gauges (lightcone_meteor_*).
func (r *Replica) Counters(int64) []protocol.Counter {
	s := r.Stats()
	c, g := protocol.Count, protocol.Gauge
	return []protocol.Counter{
		c("applied_total", "Write copies this node applied as a replica.", s.Applied),
		c("refused_total", "Write copies this node refused because its closure had passed their stamp (kept as copies).", s.Refused),
		c("compacted_total", "Versions compaction dropped at this node.", s.Compacted),
		c("restamps_total", "Writes this node restamped as gateway after enough replicas refused them.", s.Restamps),
		c("read_failovers_total", "Reads this node resent to the next replica as gateway.", s.ReadFailovers),
		c("pulls_total", "Pulls this node sent for a peer's versions or a value.", s.Pulls),
		g("reads_waiting", "Reads waiting at this node for statuses or commit decisions.", s.ReadsWaiting),
	}
}
