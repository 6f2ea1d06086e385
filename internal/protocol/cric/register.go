package cric

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Name is the protocol's name in configuration.
const Name = "cric"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "CRIC (CPaxos)",
		Summary:      "linearizable objects on the regions' storage services: passive acceptors under conditional writes, a fast round, commit bits, hierarchical quorums",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: messageTypes(),
	})
}

// Keyspace is a built cric keyspace: the settings, the quorum shape and
// the acceptors' addresses, shared read-only by every proposer.
type Keyspace struct {
	cfg   Config
	shape shape
	// addrs[a] is acceptor a's storage service: replica a%m of region
	// Regions[a/m].
	addrs []wire.NodeID
	// regionOf[a] is acceptor a's region index in the world.
	regionOf []int
	// pvmOf[a] is the propose assistant of acceptor a's region: its
	// first node (pvm.go).
	pvmOf []wire.NodeID
}

// NewKeyspace validates cfg for topology t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	var names []string
	for _, r := range t.World.Regions {
		names = append(names, r.Name)
	}
	cfg.EnsureDefaults(names)
	if err := cfg.Validate(names); err != nil {
		return nil, err
	}
	ks := &Keyspace{cfg: cfg, shape: shapeOf(cfg)}
	for _, name := range cfg.Regions {
		r := slices.Index(names, name)
		for i := range cfg.ReplicasPerRegion {
			ks.addrs = append(ks.addrs, wire.StorageReplica(r, i))
			ks.regionOf = append(ks.regionOf, r)
			switch {
			case len(t.ByRegion[r]) > 0:
				ks.pvmOf = append(ks.pvmOf, t.ByRegion[r][0])
			case cfg.ProposeAssistants:
				return nil, fmt.Errorf("cric: propose_assistants: region %q has no node to run its assistant", name)
			default:
				ks.pvmOf = append(ks.pvmOf, 0) // unused
			}
		}
	}
	return ks, nil
}

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	return NewKeyspace(t, *settings.(*Config))
}

// Factory implements protocol.Keyspace.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica { return newProposer(k, id) }
}

// Replicas implements protocol.Keyspace: no node stores a key (the
// storage services do: LoadObjects).
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID { return dst }

// Settings implements protocol.Keyspace.
func (k *Keyspace) Settings() any { c := k.cfg; return &c }

// Describe implements protocol.Keyspace.
func (k *Keyspace) Describe() string {
	c := k.cfg
	return fmt.Sprintf("cric regions=%v replicas/region=%d quorum=%d×%d super=%d×%d fast_round=%v propose_assistants=%v guarantee=linearizable",
		c.Regions, c.ReplicasPerRegion, c.RegionQuorum, c.ReplicaQuorum, c.RegionSuperQuorum, c.ReplicaSuperQuorum, c.FastRound, c.ProposeAssistants)
}

// Model implements protocol.Keyspace: every read and write is
// linearizable (doc.go).
func (k *Keyspace) Model() string { return "linearizable" }

// ClockBound implements protocol.Keyspace: safety assumes no clock bound.
func (k *Keyspace) ClockBound() time.Duration { return 0 }

// Floor implements protocol.Keyspace: a read is one round trip to the
// nearest quorum of regions; a write is one round trip to the nearest
// super quorum (fast round) or two to the nearest quorum (classic path
// with cached states), whichever is less (service times excluded).
func (k *Keyspace) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	var rtts []time.Duration
	for g := 0; g < k.shape.n; g++ {
		rtts = append(rtts, 2*oneWay(region, k.regionOf[g*k.shape.m]))
	}
	slices.Sort(rtts)
	q := rtts[k.shape.q-1]
	if op == protocol.Read {
		return q
	}
	return min(rtts[k.shape.s-1], 2*q)
}

// Load implements protocol.Keyspace (no node stores records).
func (k *Keyspace) Load(key string, rec store.Record) (string, store.Record) { return key, rec }

// LoadObjects implements protocol.ObjectLoader: a preloaded record is
// version 1 of its object, chosen and committed at every acceptor.
func (k *Keyspace) LoadObjects(key string, rec store.Record, put func(svc wire.NodeID, key string, data []byte, meta storagesvc.Meta)) {
	b := Ballot{Round: 1}
	st := state{V: 1, B: b, W: "load", Digest: digest(rec.Value), Tombstone: rec.Tombstone, Committed: true, PV: 1, PB: b}
	for _, a := range k.addrs {
		put(a, k.cfg.KeyPrefix+key, rec.Value, st.meta())
	}
}
