package twopl

import (
	"fmt"
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Name is the protocol's name in configuration.
const Name = "twopl"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "Paxos commit over 2PL",
		Summary:      "Catenae's 2PL baseline: a lock table per region, majority locking, wound-wait, Paxos commit",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		Transactions: "with every setting",
	})
}

// OCCName is the OCC baseline's name in configuration (registered by
// internal/protocol/occ).
const OCCName = "occ"

// BuildOCC builds an occ keyspace (protocol.Definition.Build of
// internal/protocol/occ).
func BuildOCC(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	c := settings.(*OCCConfig).Config
	c.optimistic = true
	k, err := NewKeyspace(t, c)
	if err != nil {
		return nil, err
	}
	return &occKeyspace{k}, nil
}

// occKeyspace is an occ keyspace: its settings are OCCConfig.
type occKeyspace struct{ *Keyspace }

func (k *occKeyspace) Settings() any { return &OCCConfig{Config: k.cfg} }

// Keyspace is a built twopl keyspace.
type Keyspace struct {
	cfg    Config
	topo   *topo.Topology
	coords []wire.NodeID
}

// NewKeyspace validates cfg (defaults filled) for t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := &Keyspace{cfg: cfg, topo: t}
	coords, err := txngw.Coordinators(t, Name)
	if err != nil {
		return nil, err
	}
	k.coords = coords
	return k, nil
}

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	return NewKeyspace(t, *settings.(*Config))
}

// Factory implements protocol.Keyspace.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newReplica(k.cfg, id) }
}

// Replicas implements protocol.Keyspace: every region's coordinator
// stores every key.
func (k *Keyspace) Replicas(dst []wire.NodeID, _ string) []wire.NodeID {
	return append(dst, k.coords...)
}

// Settings implements protocol.Keyspace.
func (k *Keyspace) Settings() any { c := k.cfg; return &c }

// Describe implements protocol.Keyspace.
func (k *Keyspace) Describe() string {
	name := Name
	if k.cfg.optimistic {
		name = OCCName
	}
	return fmt.Sprintf("%s regions=%d lock_timeout=%s retries=%d guarantee=strict-serializable", name, len(k.coords), k.cfg.LockTimeout, k.cfg.Retries)
}

// Model implements protocol.Keyspace (doc.go, "Guarantee"): gets and
// puts are one-operation strictly serializable transactions, so a
// single-key history is linearizable. A transactional history is checked
// for strict serializability by the tests (scenario's check: auto means
// serializable).
func (k *Keyspace) Model() string { return "linearizable" }

// ClockBound implements protocol.Keyspace: clocks order only wound-wait
// priorities, never correctness.
func (k *Keyspace) ClockBound() time.Duration { return 0 }

// RunsTxns implements protocol.Transactional.
func (k *Keyspace) RunsTxns() bool { return true }

// Floor implements protocol.Keyspace: a read-only transaction waits for
// the grants of a majority of regions (one round trip to the nearest
// region that completes the majority with the client's own; under OCC two:
// the reads, then the validation); a write waits for that and for a
// majority to apply its decision (one more).
func (k *Keyspace) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	n := len(k.coords)
	need := n/2 + 1 - 1 // regions beyond the client's own
	if need == 0 {
		return 0
	}
	var rtts []time.Duration
	for o := range n {
		if o != region {
			rtts = append(rtts, oneWay(region, o)+oneWay(o, region))
		}
	}
	slices.Sort(rtts)
	rtt := rtts[need-1]
	rounds := 1 // the locks (2PL), or the reads and the validation (OCC)
	if k.cfg.optimistic {
		rounds = 2
	}
	if op == protocol.Write {
		rounds++ // the decision applied by a majority
	}
	return time.Duration(rounds) * rtt
}

// Load implements protocol.Keyspace: records are stored as they are.
func (k *Keyspace) Load(key string, rec store.Record) (string, store.Record) { return key, rec }

// UserRecord implements protocol.Lister.
func (k *Keyspace) UserRecord(stored string, rec store.Record) (string, []byte, bool, bool) {
	return stored, rec.Value, !rec.Tombstone, true
}
