package quorum

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is a quorum keyspace's settings (`protocol: quorum`): the YAML
// names are the setting names, decoded strictly.
type Config struct {
	// ReplicasPerRegion is the number of replicas of every key in each region
	// of the world, in the world's region order (Cassandra's
	// NetworkTopologyStrategy): one number for every region, or one per
	// region. Default: 1 in every region.
	ReplicasPerRegion ring.PerRegion `yaml:"replicas_per_region"`
	// Read and Write are the levels used when a request says LevelDefault:
	// ONE, TWO, THREE, QUORUM, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM or ALL.
	// Default QUORUM and QUORUM.
	Read  wire.Level `yaml:"read"`
	Write wire.Level `yaml:"write"`
	// ReadTimeout and WriteTimeout bound how long a coordinator waits for
	// replicas before answering ErrTimeout. Default 5s and 2s (Cassandra's
	// read_request_timeout and write_request_timeout).
	ReadTimeout  time.Duration `yaml:"read_timeout"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// SpeculativeRetry is how long a read waits for the replicas it chose
	// before also asking every other replica. Default 0: 1.5 × the mean RTT
	// to the farthest chosen replica plus 5ms, so a crashed nearby replica
	// costs one retry instead of a timeout.
	SpeculativeRetry time.Duration `yaml:"speculative_retry"`
	// MaxClockOffset (δ) is the assumed bound on the distance of every
	// node's clock from true time. With clock write order, coordinators
	// delay acknowledging a write, and answering a read, until their clock
	// passes the version's wall time plus 2δ (commit wait), which makes
	// last-writer-wins order agree with real time (doc.go). Default 2ms.
	MaxClockOffset time.Duration `yaml:"max_clock_offset"`
	// NoCommitWait turns commit wait off, as in Cassandra: the guarantees
	// then hold only with perfectly synchronised clocks. A single-node
	// cluster never waits (one clock orders its own versions).
	NoCommitWait bool `yaml:"no_commit_wait"`
	// CommitWait is how long a clock-ordered answer waits past its
	// version's wall time (doc.go, "Commit wait"). "bound" waits 2δ,
	// resting only on every clock being within δ of true time. "measured"
	// waits how far this node's clock may be ahead of any other node's,
	// as its clock probes measure it (each node sends its clock to every
	// other every ClockProbeInterval), whenever that is less than 2δ: on a
	// LAN, about one one-way delay plus the clocks' actual offset. It also
	// assumes every clock runs within MaxDriftPPM of true time's rate and
	// is never stepped back (slewed only: chrony with maxslewrate at most
	// that rate and no makestep after boot). Default bound.
	CommitWait string `yaml:"commit_wait"`
	// MaxDriftPPM (ρ) bounds every clock's rate error, in parts per
	// million, under commit_wait measured: a probe's bound grows by 2ρ
	// of the time since it arrived. Default 500 (ntpd's largest slew).
	MaxDriftPPM float64 `yaml:"max_drift_ppm"`
	// ClockProbeInterval is how often each node sends its clock to every
	// other under commit_wait measured. Default 100ms.
	ClockProbeInterval time.Duration `yaml:"clock_probe_interval"`
	// WriteOrder is how a write's version is made to order after every
	// operation that completed before the write began (doc.go, "Write
	// order"): "clock" stamps it with the coordinator's HLC and waits out
	// the commit wait (2δ past the version's wall time) before answering
	// writes and reads; "query" first asks a read-level set of replicas
	// for the key's highest version and stamps above it (ABD), costing
	// one more round trip per write but no commit wait on writes or reads,
	// and no reliance on the clock bound for ordering; under it, request
	// levels whose sets can miss a read-level set are refused (doc.go).
	// "auto" picks "query" when, from every region with replicas, every
	// write-level replica set also satisfies the read level, and the
	// read-level and write-level round trips together (mean delays of
	// the world, which every node knows) are no longer than max(write
	// round trip, 2δ); "clock" otherwise. One order holds for the whole
	// keyspace and every node: a clock write could be stamped below a
	// query write or read that completed before it, so changing it (or
	// the world's delays, under auto) takes a full-cluster restart.
	// Default clock: it accepts every per-request level, and an existing
	// cluster keeps its order; auto and query are chosen explicitly.
	WriteOrder string `yaml:"write_order"`

	// blindBelowCeiling never raises the ceiling past its start, so
	// writes stamped above it are written without a read even over a
	// newer record (tests only: it shows the ceiling's raise is what keeps
	// a late older write from replacing a newer one).
	blindBelowCeiling bool
	// ignoreCond makes a replica apply conditional writes without
	// checking them (tests only: it shows the check is what makes them
	// atomic).
	ignoreCond bool
	// skipQuery makes query-ordered writes skip their query round, with
	// still no commit wait (tests only: it shows the round is what orders
	// them).
	skipQuery bool
	// shaveWait makes commit_wait measured wait this much less than its
	// measured bound (tests only: it shows the bound is what orders
	// writes).
	shaveWait time.Duration
	// keepStale makes commit_wait measured keep a peer's tightest bound
	// across its silences and incarnations (tests only: it shows those
	// rules are what survive a clock stepped during a reboot).
	keepStale bool
	// anyLevel makes a query-ordered keyspace accept request levels whose
	// sets can miss a query's (tests only: it shows the refusal is what
	// keeps them from breaking the order).
	anyLevel bool
}

// Write orders (Config.WriteOrder).
const (
	WriteOrderClock = "clock"
	WriteOrderQuery = "query"
	WriteOrderAuto  = "auto"
)

// Commit waits (Config.CommitWait).
const (
	CommitWaitBound    = "bound"
	CommitWaitMeasured = "measured"
)

// DefaultMaxClockOffset is MaxClockOffset's default.
const DefaultMaxClockOffset = 2 * time.Millisecond

// EnsureDefaults fills unset fields for a world with regions regions.
func (c *Config) EnsureDefaults(regions int) {
	c.ReplicasPerRegion = c.ReplicasPerRegion.Expand(regions, 1)
	if c.Read == wire.LevelDefault {
		c.Read = wire.Quorum
	}
	if c.Write == wire.LevelDefault {
		c.Write = wire.Quorum
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 2 * time.Second
	}
	if c.MaxClockOffset == 0 {
		c.MaxClockOffset = DefaultMaxClockOffset
	}
	if c.WriteOrder == "" {
		c.WriteOrder = WriteOrderClock
	}
	if c.CommitWait == "" {
		c.CommitWait = CommitWaitBound
	}
	if c.MaxDriftPPM == 0 {
		c.MaxDriftPPM = 500
	}
	if c.ClockProbeInterval == 0 {
		c.ClockProbeInterval = 100 * time.Millisecond
	}
}

// Validate checks c against a world with the given number of nodes in each
// region.
func (c *Config) Validate(nodesPerRegion []int) error {
	if err := ring.ValidatePlacement("quorum", c.ReplicasPerRegion, nodesPerRegion); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}, {"speculative_retry", c.SpeculativeRetry}, {"max_clock_offset", c.MaxClockOffset}, {"clock_probe_interval", c.ClockProbeInterval}} {
		if d.v < 0 {
			return fmt.Errorf("quorum: %s = %s; must not be negative", d.name, d.v)
		}
	}
	switch c.WriteOrder {
	case WriteOrderClock, WriteOrderQuery, WriteOrderAuto:
	default:
		return fmt.Errorf("quorum: write_order = %q; must be clock, query or auto", c.WriteOrder)
	}
	switch c.CommitWait {
	case CommitWaitBound, CommitWaitMeasured:
	default:
		return fmt.Errorf("quorum: commit_wait = %q; must be bound or measured", c.CommitWait)
	}
	if c.CommitWait == CommitWaitMeasured && (c.NoCommitWait || c.WriteOrder == WriteOrderQuery) {
		return fmt.Errorf("quorum: commit_wait measured sizes the commit wait of clock-ordered writes; with no_commit_wait or write_order query there is none to size")
	}
	if c.MaxDriftPPM < 0 || c.MaxDriftPPM >= 100_000 {
		return fmt.Errorf("quorum: max_drift_ppm = %g; must be at least 0 and below 100000", c.MaxDriftPPM)
	}
	// Each default level must be usable from every region that has replicas.
	for r, n := range c.ReplicasPerRegion {
		if n == 0 {
			continue
		}
		for _, l := range []wire.Level{c.Read, c.Write} {
			if _, err := requirement(l, c.ReplicasPerRegion, r); err != nil {
				return err
			}
		}
	}
	return nil
}
