package cric

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// Config is a cric keyspace's settings (`protocol: cric`): the YAML names
// are the setting names, decoded strictly.
type Config struct {
	// Regions are the regions whose storage services hold every object's
	// acceptors (seed 001 §5.3: 2f+1 regions), by name. Default: every
	// region of the world.
	Regions []string `yaml:"regions"`
	// ReplicasPerRegion is the number of acceptors of every object in each
	// of Regions: replicas 0..n-1 of the region's storage service
	// (wire.StorageReplica). Default 1 (flat majority quorums).
	ReplicasPerRegion int `yaml:"replicas_per_region"`
	// RegionQuorum and ReplicaQuorum are a hierarchical quorum's sizes: a
	// quorum is RegionQuorum regions, each answering with ReplicaQuorum of
	// its replicas (§5.3). Default: majorities, ⌊n/2⌋+1.
	RegionQuorum  int `yaml:"region_quorum"`
	ReplicaQuorum int `yaml:"replica_quorum"`
	// RegionSuperQuorum and ReplicaSuperQuorum are the fast round's
	// (ballot #0) super quorum sizes at each level. Default: the smallest
	// sizes that keep Fast Paxos safe against the quorums, s with
	// 2s + q > 2n (for 3 of 3: 3; 5: 4). The thesis's ⌈3n/4+1⌉ exceeds n
	// for n = 3, where its own example contacts all three (doc.go).
	RegionSuperQuorum  int `yaml:"region_super_quorum"`
	ReplicaSuperQuorum int `yaml:"replica_super_quorum"`
	// FastRound is whether writes that name no level start with the fast
	// round (ballot #0, one round trip to a super quorum) rather than the
	// classic two-phase path. A request chooses for itself with its
	// consistency level: ALL tries the fast round, QUORUM does not
	// (doc.go). Default false: the thesis leaves it to the application,
	// and the fast round pays the farthest super quorum's latency.
	FastRound bool `yaml:"fast_round"`
	// StorageTimeout is how long a proposer waits for a storage request's
	// answer before it takes the outcome as unknown (the acceptor's state
	// is then re-read, never assumed). Default 1s.
	StorageTimeout time.Duration `yaml:"storage_timeout"`
	// OpTimeout bounds one client operation; past it the client gets
	// ErrTimeout (outcome unknown: a write may still be chosen). Default 5s.
	OpTimeout time.Duration `yaml:"op_timeout"`
	// Backoff is the least base of the random backoff before a retry
	// after a conflict: attempt a waits a uniform draw in [0, b·2^min(a-1,3))
	// with b the larger of Backoff and half the failed phase's measured
	// round trip (doc.go, rule 5). Default 20ms.
	Backoff time.Duration `yaml:"backoff"`
	// ProposeAssistants runs every classic Prepare through the propose
	// assistant of the acceptor's region (its first node), which reads,
	// promises and writes next to the storage service and repeats a
	// conditional write refused only because the object moved (seed 001
	// §5.2.4; pvm.go). Accepts, commit bits and the fast round go to the
	// services directly; assistants never carry object data. Default
	// false.
	ProposeAssistants bool `yaml:"propose_assistants"`
	// KeyPrefix is prepended to a key to name its object in the storage
	// services. Default "cric/".
	KeyPrefix string `yaml:"key_prefix"`
	// ColdWrites is what a write does on a cache miss (the proposer knows
	// nothing of the object): "create" assumes a new object and sends
	// create-only writes (§5.2.1), so an existing object costs a failed
	// round and a read first; "create_and_head" (default) sends a Head of
	// each acceptor beside its create-only write, so a failed create is
	// followed at once by the next phase on the state the Head returned
	// (doc.go, rule 3c). The Heads cost requests, not round trips.
	ColdWrites string `yaml:"cold_writes"`
	// ReadDataCopies is how many of the nearest acceptors a read Gets the
	// data of; the others it Heads (metadata and digest only, §5.2.3).
	// Default: 1 with one replica per region, else ReplicaQuorum (the
	// thesis's "data from only 2 of [3 copies in a replica group] and
	// only the metadata from the third", §5.3), so a copy still without
	// the chosen value does not cost a second round trip.
	ReadDataCopies int `yaml:"read_data_copies"`

	// Unsafe switches for the teeth tests (export_test.go).
	unsafeFastBelowSuper    bool // the fast round chooses at one acceptance
	unsafeReadCommittedOnly bool // reads skip an uncommitted higher version
}

// Settings' defaults.
const (
	DefaultStorageTimeout = time.Second
	DefaultOpTimeout      = 5 * time.Second
	DefaultBackoff        = 20 * time.Millisecond
	DefaultKeyPrefix      = "cric/"
	// ColdWrites values.
	ColdCreate        = "create"
	ColdCreateAndHead = "create_and_head"
)

// EnsureDefaults fills unset fields for a world with the given regions.
func (c *Config) EnsureDefaults(regions []string) {
	if len(c.Regions) == 0 {
		c.Regions = slices.Clone(regions)
	}
	if c.ReplicasPerRegion == 0 {
		c.ReplicasPerRegion = 1
	}
	n, m := len(c.Regions), c.ReplicasPerRegion
	if c.RegionQuorum == 0 {
		c.RegionQuorum = n/2 + 1
	}
	if c.ReplicaQuorum == 0 {
		c.ReplicaQuorum = m/2 + 1
	}
	if c.RegionSuperQuorum == 0 {
		c.RegionSuperQuorum = MinSuperQuorum(n, c.RegionQuorum)
	}
	if c.ReplicaSuperQuorum == 0 {
		c.ReplicaSuperQuorum = MinSuperQuorum(m, c.ReplicaQuorum)
	}
	if c.StorageTimeout == 0 {
		c.StorageTimeout = DefaultStorageTimeout
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.ColdWrites == "" {
		c.ColdWrites = ColdCreateAndHead
	}
	if c.ReadDataCopies == 0 {
		c.ReadDataCopies = 1
		if m > 1 {
			c.ReadDataCopies = c.ReplicaQuorum
		}
	}
}

// MinSuperQuorum is the smallest super quorum of n acceptors that any two
// of and any quorum of size q intersect in (2s + q > 2n; Fast Paxos,
// Lemma V.3), capped at n.
func MinSuperQuorum(n, q int) int {
	return min(n, max(1, (2*n-q)/2+1))
}

// Validate checks c against the world's regions. It refuses quorum sizes
// that cannot intersect, with the reason (Theorems V.2 and V.4 need the
// conditions at both levels; quorum_test.go shows they are also enough).
func (c *Config) Validate(regions []string) error {
	seen := map[string]bool{}
	for _, r := range c.Regions {
		if !slices.Contains(regions, r) {
			return fmt.Errorf("cric: regions: %q is not a region of the world (%v)", r, regions)
		}
		if seen[r] {
			return fmt.Errorf("cric: regions: %q listed twice", r)
		}
		seen[r] = true
	}
	if c.ReplicasPerRegion < 1 || c.ReplicasPerRegion > wire.MaxStorageReplicas {
		return fmt.Errorf("cric: replicas_per_region = %d; must be 1 to %d", c.ReplicasPerRegion, wire.MaxStorageReplicas)
	}
	if err := checkLevel("region", len(c.Regions), c.RegionQuorum, c.RegionSuperQuorum); err != nil {
		return err
	}
	if err := checkLevel("replica", c.ReplicasPerRegion, c.ReplicaQuorum, c.ReplicaSuperQuorum); err != nil {
		return err
	}
	if c.ColdWrites != ColdCreate && c.ColdWrites != ColdCreateAndHead {
		return fmt.Errorf("cric: cold_writes = %q; must be %q or %q", c.ColdWrites, ColdCreate, ColdCreateAndHead)
	}
	if n := len(c.Regions) * c.ReplicasPerRegion; c.ReadDataCopies < 1 || c.ReadDataCopies > n {
		return fmt.Errorf("cric: read_data_copies = %d; must be 1 to %d (the acceptors)", c.ReadDataCopies, n)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"storage_timeout", c.StorageTimeout}, {"op_timeout", c.OpTimeout}, {"backoff", c.Backoff}} {
		if d.v <= 0 {
			return fmt.Errorf("cric: %s = %s; must be positive", d.name, d.v)
		}
	}
	return nil
}

// checkLevel checks one level's sizes: n acceptors (regions, or replicas
// in a region), quorum q, super quorum s.
func checkLevel(level string, n, q, s int) error {
	switch {
	case n < 1:
		return fmt.Errorf("cric: no %ss", level)
	case q < 1 || q > n:
		return fmt.Errorf("cric: %s_quorum = %d; must be 1 to %d", level, q, n)
	case 2*q <= n:
		return fmt.Errorf("cric: %s_quorum = %d of %d: two quorums need not intersect (2q must exceed n; Theorem V.2)", level, q, n)
	case s < 1 || s > n:
		return fmt.Errorf("cric: %s_super_quorum = %d; must be 1 to %d", level, s, n)
	case 2*s+q <= 2*n:
		return fmt.Errorf("cric: %s_super_quorum = %d with %s_quorum %d of %d: two super quorums and a quorum need not share an acceptor (2s+q must exceed 2n; Theorem V.4), so a fast round could choose two values",
			level, s, level, q, n)
	}
	return nil
}
