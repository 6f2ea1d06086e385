package rsm

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// Config is one group's configuration. Every member must be given the same
// Group and Members: the membership is fixed (no reconfiguration yet).
type Config struct {
	// Group names the group. Messages carry it, so one node can host
	// several groups; it is also the default store prefix. Required.
	Group string
	// Members are the nodes of the group, in any order, without
	// duplicates; at least one. A group of n members tolerates the loss of
	// (n-1)/2 of them.
	Members []wire.NodeID
	// TickInterval is the period of the group's timer on each member's
	// clock: the unit of ElectionTicks and HeartbeatTicks. Default 50ms.
	TickInterval time.Duration
	// ElectionTicks is how many ticks a follower waits without hearing
	// from a leader before it campaigns; each wait is drawn from
	// [ElectionTicks, 2·ElectionTicks) with the node's Env random source.
	// A leader that has not heard from a majority for ElectionTicks steps
	// down. Default 10; more than HeartbeatTicks.
	ElectionTicks int
	// HeartbeatTicks is how many ticks pass between a leader's heartbeats.
	// Default 1.
	HeartbeatTicks int
	// StorePrefix prefixes every store key the group writes. Default
	// "rsm/" + Group + "/". It must not prefix any other key the node
	// stores.
	StorePrefix string
	// MaxSizePerMsg bounds the entry bytes of one append message. Default
	// 64 KiB.
	MaxSizePerMsg uint64
	// MaxInflightMsgs bounds the append messages in flight to one
	// follower. Default 64.
	MaxInflightMsgs int
	// SnapshotEntries is how many entries a member applies between two
	// snapshots of its state machine. Each snapshot is stored and
	// compacts the log up to the index it covers, so a restarted member
	// reads one snapshot and at most about this many entries, and a
	// follower that needs compacted entries is sent the snapshot.
	// Default 1000; at least 1.
	SnapshotEntries int

	// unsafeSkipHardState stops the group persisting raft's HardState
	// (term, vote, commit): a member forgets its votes in a crash. Only
	// the teeth test sets it (export_test.go).
	unsafeSkipHardState bool
	// unsafeCompactFirst deletes compacted entries from the store before
	// it writes the snapshot that covers them: a torn crash between the
	// two loses entries. Only the teeth test sets it (export_test.go).
	unsafeCompactFirst bool
}

// EnsureDefaults fills the unset fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.TickInterval == 0 {
		c.TickInterval = 50 * time.Millisecond
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = 10
	}
	if c.HeartbeatTicks == 0 {
		c.HeartbeatTicks = 1
	}
	if c.StorePrefix == "" {
		c.StorePrefix = "rsm/" + c.Group + "/"
	}
	if c.MaxSizePerMsg == 0 {
		c.MaxSizePerMsg = 64 << 10
	}
	if c.MaxInflightMsgs == 0 {
		c.MaxInflightMsgs = 64
	}
	if c.SnapshotEntries == 0 {
		c.SnapshotEntries = 1000
	}
}

// Validate reports what is wrong with c (after EnsureDefaults).
func (c *Config) Validate() error {
	switch {
	case c.Group == "":
		return errors.New("rsm: Group is required")
	case len(c.Members) == 0:
		return errors.New("rsm: Members is empty")
	case c.TickInterval <= 0:
		return fmt.Errorf("rsm: TickInterval %s is not positive", c.TickInterval)
	case c.HeartbeatTicks <= 0:
		return fmt.Errorf("rsm: HeartbeatTicks %d is not positive", c.HeartbeatTicks)
	case c.ElectionTicks <= c.HeartbeatTicks:
		return fmt.Errorf("rsm: ElectionTicks %d must exceed HeartbeatTicks %d", c.ElectionTicks, c.HeartbeatTicks)
	case c.SnapshotEntries < 1:
		return fmt.Errorf("rsm: SnapshotEntries %d is not positive", c.SnapshotEntries)
	}
	s := slices.Clone(c.Members)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(c.Members) {
		return fmt.Errorf("rsm: Members %v has duplicates", c.Members)
	}
	for _, m := range s {
		if m < 0 {
			return fmt.Errorf("rsm: member %d is not a node", m)
		}
	}
	return nil
}

// raftID is a member's raft ID: raft reserves 0 for "none".
func raftID(n wire.NodeID) uint64 { return uint64(n) + 1 }

// nodeOf is the node of a raft ID (NoLeader for 0).
func nodeOf(id uint64) wire.NodeID { return wire.NodeID(int64(id) - 1) }
