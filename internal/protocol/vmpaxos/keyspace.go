package vmpaxos

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Mode is how proposers reach the acceptors.
type Mode uint8

const (
	// ModeLogic: the acceptor processes run the acceptor logic (Fast
	// Paxos with replica VMs): one round trip per phase.
	ModeLogic Mode = iota + 1
	// ModeLog: the acceptor processes only append records to a log and
	// return it (pPaxos*'s Append, which the thesis also ran on VMs
	// interposing on storage); the proposer runs the acceptor logic on
	// the log it reads back: two round trips per phase.
	ModeLog
)

// Keyspace is a built keyspace of either baseline.
type Keyspace struct {
	name  string
	mode  Mode
	cfg   cric.Config
	shape cric.Shape
	// addrs[a] is acceptor a's node: node a%m of region Regions[a/m].
	addrs    []wire.NodeID
	regionOf []int
}

// NewKeyspace validates cfg (cric's settings; ReplicasPerRegion is the
// acceptor nodes per region) for topology t.
func NewKeyspace(name string, mode Mode, t *topo.Topology, cfg cric.Config) (*Keyspace, error) {
	var names []string
	for _, r := range t.World.Regions {
		names = append(names, r.Name)
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = name + "/"
	}
	if cfg.ColdWrites != "" || cfg.ReadDataCopies != 0 {
		return nil, fmt.Errorf("%s: cold_writes and read_data_copies are cric's (its storage-service requests); leave them unset", name)
	}
	cfg.EnsureDefaults(names)
	if err := cfg.Validate(names); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if cfg.ProposeAssistants {
		return nil, fmt.Errorf("%s: propose_assistants must be false: its acceptors are processes, with no passive storage to assist (cric only)", name)
	}
	ks := &Keyspace{name: name, mode: mode, cfg: cfg, shape: cfg.Shape()}
	for _, rn := range cfg.Regions {
		r := slices.Index(names, rn)
		if len(t.ByRegion[r]) < cfg.ReplicasPerRegion {
			return nil, fmt.Errorf("%s: replicas_per_region = %d, but region %s has %d nodes (one acceptor per node)", name, cfg.ReplicasPerRegion, rn, len(t.ByRegion[r]))
		}
		for i := range cfg.ReplicasPerRegion {
			ks.addrs = append(ks.addrs, t.ByRegion[r][i])
			ks.regionOf = append(ks.regionOf, r)
		}
	}
	return ks, nil
}

// Factory implements protocol.Keyspace: every node is a proposer; the
// acceptor nodes also run an acceptor process.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica {
		n := &node{p: newProposer(k, id)}
		if slices.Contains(k.addrs, id) {
			n.acc = &acceptor{ks: k}
		}
		return n
	}
}

// Replicas implements protocol.Keyspace: the acceptor nodes store every
// key.
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	return append(dst, k.addrs...)
}

// Settings implements protocol.Keyspace.
func (k *Keyspace) Settings() any { c := k.cfg; return &c }

// Describe implements protocol.Keyspace.
func (k *Keyspace) Describe() string {
	c := k.cfg
	return fmt.Sprintf("%s regions=%v acceptors/region=%d quorum=%d×%d super=%d×%d fast_round=%v guarantee=linearizable",
		k.name, c.Regions, c.ReplicasPerRegion, c.RegionQuorum, c.ReplicaQuorum, c.RegionSuperQuorum, c.ReplicaSuperQuorum, c.FastRound)
}

// Model implements protocol.Keyspace.
func (k *Keyspace) Model() string { return "linearizable" }

// ClockBound implements protocol.Keyspace: safety assumes no clock bound.
func (k *Keyspace) ClockBound() time.Duration { return 0 }

// RoundsPerPhase is the round trips to the acceptors one phase takes: 1
// for ModeLogic, 2 for ModeLog (append, then read the log back).
func (k *Keyspace) RoundsPerPhase() int {
	if k.mode == ModeLog {
		return 2
	}
	return 1
}

// Floor implements protocol.Keyspace: a read is one round trip to the
// nearest quorum of regions; a write is the fast round to the nearest
// super quorum or two phases to the nearest quorum, each phase
// RoundsPerPhase round trips.
func (k *Keyspace) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	var rtts []time.Duration
	for g := 0; g < len(k.cfg.Regions); g++ {
		rtts = append(rtts, 2*oneWay(region, k.regionOf[g*k.cfg.ReplicasPerRegion]))
	}
	slices.Sort(rtts)
	q := rtts[k.cfg.RegionQuorum-1]
	if op == protocol.Read {
		return q
	}
	r := time.Duration(k.RoundsPerPhase())
	return min(r*rtts[k.cfg.RegionSuperQuorum-1], 2*r*q)
}

// Load implements protocol.Keyspace: a preloaded record is version 1,
// chosen and committed at every acceptor.
func (k *Keyspace) Load(key string, rec store.Record) (string, store.Record) {
	b := cric.Ballot{Round: 1}
	if k.mode == ModeLog {
		log := []Request{
			{ID: 1, Key: key, Op: OpAccept, N: 1, B: b, W: "load", Del: rec.Tombstone, Data: rec.Value},
			{ID: 2, Key: key, Op: OpCommit, N: 1, W: "load"},
		}
		return k.cfg.KeyPrefix + key, store.Record{Value: encodeLog(log), Version: rec.Version}
	}
	st := cric.State{V: 1, B: b, W: "load", Digest: cric.Digest(rec.Value), Tombstone: rec.Tombstone, Committed: true, PV: 1, PB: b}
	return k.cfg.KeyPrefix + key, store.Record{Value: encodeState(st, rec.Value), Version: rec.Version}
}

// node is one node: a proposer, and an acceptor on acceptor nodes.
type node struct {
	p   *Proposer
	acc *acceptor
}

func (n *node) Start(e env.Env)                      { n.p.Start(e) }
func (n *node) Request(e env.Env, req *wire.Request) { n.p.Request(e, req) }
func (n *node) Timer(e env.Env, payload any)         { n.p.Timer(e, payload) }

func (n *node) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *Request:
		if n.acc != nil {
			n.acc.handle(e, from, m)
		}
	case *Response:
		n.p.step(e, from, m)
	}
}

// Counters implements protocol.Counted.
func (n *node) Counters(now int64) []protocol.Counter { return n.p.Counters(now) }

// Definition is the registry entry of the baseline name in mode: cric's
// settings (internal/protocol/cric Config; replicas_per_region counts
// acceptor nodes per region, key_prefix prefixes keys in their stores).
func Definition(name, title, summary string, mode Mode) protocol.Definition {
	return protocol.Definition{
		Name:        name,
		Title:       title,
		Summary:     summary,
		NewSettings: func() any { return new(cric.Config) },
		Build: func(t *topo.Topology, settings any) (protocol.Keyspace, error) {
			return NewKeyspace(name, mode, t, *settings.(*cric.Config))
		},
		MessageTypes: MessageTypes(),
	}
}
