package catenae

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
const Name = "catenae"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "Catenae",
		Summary:      "serializable transactions: epoch messages, transaction chains run in every region, majority validation",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		Transactions: "with every setting",
	})
}

// Keyspace is a built catenae keyspace.
type Keyspace struct {
	cfg    Config
	coords []wire.NodeID
}

// NewKeyspace validates cfg (defaults filled) for t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := &Keyspace{cfg: cfg}
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
// holds every key.
func (k *Keyspace) Replicas(dst []wire.NodeID, _ string) []wire.NodeID {
	return append(dst, k.coords...)
}

// Settings implements protocol.Keyspace.
func (k *Keyspace) Settings() any { c := k.cfg; return &c }

// Describe implements protocol.Keyspace.
func (k *Keyspace) Describe() string {
	return fmt.Sprintf("%s regions=%d epoch=%s order=%s chain_service=%s guarantee=serializable", Name, len(k.coords), k.cfg.Epoch, k.cfg.Order, k.cfg.ChainService)
}

// Model implements protocol.Keyspace (doc.go, "Guarantee"): gets are
// read-only transactions served from the region's committed copy, puts
// one-write transactions answered once applied there, so a single-key
// history is sequentially consistent (serializable with each client's
// order kept), not linearizable. Transactional histories are checked for
// strong session serializability by the tests.
func (k *Keyspace) Model() string { return "sequential" }

// ClockBound implements protocol.Keyspace: clocks only cut epochs; skew
// costs latency, never correctness (doc.go, "Clocks").
func (k *Keyspace) ClockBound() time.Duration { return 0 }

// RunsTxns implements protocol.Transactional.
func (k *Keyspace) RunsTxns() bool { return true }

// Floor implements protocol.Keyspace: a read-only transaction is served
// in its region; a read-write one waits until every region's epoch
// message for its epoch has arrived, one way from the farthest region
// (half its round trip: the thesis's "half an RTT"). A conflicting one
// waits a round trip more for a majority's validation; the floor is the
// non-conflicting case.
func (k *Keyspace) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	if op != protocol.Write {
		return 0
	}
	var far []time.Duration
	for o := range k.coords {
		if o != region {
			far = append(far, oneWay(o, region))
		}
	}
	if len(far) == 0 {
		return 0
	}
	return slices.Max(far)
}

// Load implements protocol.Keyspace: records are stored as they are.
func (k *Keyspace) Load(key string, rec store.Record) (string, store.Record) { return key, rec }

// UserRecord implements protocol.Lister: the coordinator's own state
// (under "\x00catenae/") is not a user key.
func (k *Keyspace) UserRecord(stored string, rec store.Record) (string, []byte, bool, bool) {
	if len(stored) > 0 && stored[0] == 0 {
		return "", nil, false, false
	}
	return stored, rec.Value, !rec.Tombstone, true
}
