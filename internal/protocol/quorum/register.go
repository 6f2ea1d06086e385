package quorum

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
)

// Name is the protocol's name in configuration.
const Name = "quorum"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "Cassandra-style quorums",
		Summary:      "tunable read/write consistency levels over replicas in every region (the baseline)",
		Default:      true,
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		Conditional:  "on a single-node cluster (as a single-node server's default keyspace)",
		Transactions: "on a single-node cluster (as a single-node server's default keyspace)",
		Demo: []protocol.Preset{
			{Label: "quorum ONE/ALL", Settings: "{read: ONE, write: ALL}",
				Note: "reads are local; every write waits for the farthest region"},
			{Label: "quorum QUORUM/QUORUM", Settings: "{read: QUORUM, write: QUORUM}",
				Note: "reads and writes wait for a majority of regions; a client's operations take about four times as long, so it completes about a quarter as many"},
		},
	})
}

// registered is a quorum keyspace as the registry sees it.
type registered struct {
	*Keyspace
	guarantee Guarantee
}

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	ks, err := NewKeyspace(t, *settings.(*Config))
	if err != nil {
		return nil, err
	}
	c := ks.Config()
	g, err := GuaranteeOf(c.ReplicasPerRegion, c.Read, c.Write)
	if err != nil {
		return nil, err
	}
	return &registered{Keyspace: ks, guarantee: g}, nil
}

func (k *registered) Settings() any { c := k.Config(); return &c }

func (k *registered) Model() string { return k.guarantee.Model() }

// ClockBound: commit wait makes last-writer-wins agree with real time only
// while every clock is within MaxClockOffset of it (doc.go). commit_wait
// measured also needs clocks never stepped while up, which a nemesis that
// steps clocks within the bound breaks (doc.go, "Measured commit wait"). Query-ordered
// writes do not rely on it for order, but a restarted coordinator still
// does to never reissue a version (doc.go, "Write order").
func (k *registered) ClockBound() time.Duration { return k.Config().MaxClockOffset }

// AssumesSteadyClocks implements protocol.SteadyClocks: under commit_wait
// measured the probes' bounds hold only while no clock steps and every
// clock drifts within max_drift_ppm (doc.go, "Measured commit wait").
func (k *registered) AssumesSteadyClocks() (float64, bool) {
	return k.Config().MaxDriftPPM, k.measures()
}

func (k *registered) Describe() string {
	c := k.Config()
	d := fmt.Sprintf("quorum read=%s write=%s replicas/region=%d guarantee=%s max_clock_offset=%s",
		c.Read, c.Write, c.ReplicasPerRegion[0], k.guarantee, c.MaxClockOffset)
	if k.QueryOrdered() {
		d += " write_order=query"
	} else if k.measures() {
		d += fmt.Sprintf(" commit_wait=measured max_drift=%gppm", c.MaxDriftPPM)
	}
	return d
}

// Floor: a read's level's round trip; a write's, plus the read level's
// under query order (the query round comes first).
func (k *registered) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	c := k.Config()
	if op != protocol.Write {
		return Floor(c.ReplicasPerRegion, c.Read, region, oneWay)
	}
	f := Floor(c.ReplicasPerRegion, c.Write, region, oneWay)
	if k.QueryOrdered() {
		f += Floor(c.ReplicasPerRegion, c.Read, region, oneWay)
	}
	return f
}

// Load: a quorum replica stores a key's newest record as is.
func (k *registered) Load(key string, rec store.Record) (string, store.Record) { return key, rec }

// UserRecord implements protocol.Lister: a quorum replica stores each key's
// latest version under the key itself, and nothing else.
func (k *registered) UserRecord(stored string, rec store.Record) (string, []byte, bool, bool) {
	return stored, rec.Value, !rec.Tombstone, true
}
